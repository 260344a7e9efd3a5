"""PL432 rocm-fp4-nextn-deepep-draft-without-ep."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)

# SGLang raises (0.5.10rc0 server_args.py:1662-1669; 0.5.23 arg_groups/overrides.py:870-877):
# "Invalid configuration: 'deep_gemm' speculative MoE runner backend with 'deepep' a2a backend requires expert
# parallelism (ep_size > 1). Current ep_size is 1."
ENV = "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"
# The guard compares the algorithm as typed: it runs before NEXTN becomes EAGLE and before upper-casing
# (0.5.10rc0 server_args.py:780 then :813, 2937-2938; 0.5.23 arg_groups/pipeline.py:225 then :306), so
# NEXTN or a lower-case eagle passes it and the draft MoE keeps the flags' values.
TYPED_ALGORITHM = "EAGLE"
# The architectures every release of the window resolves the draft MoE for (0.5.10rc0 server_args.py:1479-1485;
# 0.5.23 overrides.py:745-760 lists more).
DEEPSEEK_ARCHS_ALL_RELEASES = frozenset(
    {
        "DeepseekV3ForCausalLM",
        "KimiK25ForConditionalGeneration",
        "MistralLarge3ForCausalLM",
        "PixtralForConditionalGeneration",
        "GlmMoeDsaForCausalLM",
    }
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if (
        ctx.spec.get("speculative_algorithm") != TYPED_ALGORITHM
        or gpu is None
        or gpu.platform != "rocm"
        or not ctx.spec.env_flag(ENV)
    ):
        return
    if (
        ctx.spec.get("quantization") != "modelopt_fp4"
        or (ctx.spec.get("ep_size") or 1) != 1
    ):
        return
    if ctx.spec.has("--speculative-moe-runner-backend") and ctx.spec.has(
        "--speculative-moe-a2a-backend"
    ):
        return
    arch = ctx.target.architecture if ctx.target is not None else None
    if arch not in DEEPSEEK_ARCHS_ALL_RELEASES:
        return
    yield RULE.finding(
        f"{arch} with {ctx.flag('--quantization')} modelopt_fp4, EAGLE and {ENV}=1 on ROCm in SGLang {ctx.version}: "
        "SGLang sets the BF16 NextN draft's MoE to deep_gemm over the deepep all-to-all and then raises ValueError "
        "\"Invalid configuration: 'deep_gemm' speculative MoE runner backend with 'deepep' a2a backend requires "
        'expert parallelism (ep_size > 1)" at argument time, since the expert-parallel size is 1. Set '
        f"{ctx.flag('--ep-size')} above 1 (e.g. the TP size), or drop {ENV} (the draft MoE then runs triton)",
        flags=("--quantization", "--speculative-algorithm"),
        fix=fix_of(
            f"drop {ENV} (triton draft MoE)",
            Applicability.UNSAFE,
            Edit(target="env", name=ENV, value=None),
        ),
    )


_FP4_MTP = (
    "--model-path",
    "nvidia/DeepSeek-R1-0528-FP4",
    "--tp",
    "8",
    "--quantization",
    "modelopt_fp4",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)

RULE = Rule(
    check=check,
    code="PL432",
    category=Category.START,
    name="rocm-fp4-nextn-deepep-draft-without-ep",
    summary="ROCm DeepSeek-family modelopt_fp4 EAGLE with SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE at --ep-size 1 is refused: "
    "the deep_gemm/deepep NextN draft needs expert parallelism (0.5.10rc0+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="On ROCm, `--speculative-algorithm EAGLE` (spelled so: NEXTN is not yet EAGLE when the guard runs) "
        "on a DeepSeek-family target (DeepseekV3ForCausalLM, Kimi K2.5, Mistral "
        "Large 3, GLM-5) with `--quantization modelopt_fp4`, `SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE` set true, "
        "`--speculative-moe-runner-backend` or `--speculative-moe-a2a-backend` left unset, and `--ep-size` unset "
        "or 1, SGLang 0.5.10rc0 or later.",
        why="For this target and quantization the server resolves the BF16 NextN draft's MoE itself when either "
        "draft MoE flag is unset; with the variable on it picks deep_gemm over deepep and, from 0.5.10rc0, raises "
        "a ValueError when ep_size is 1 (0.5.10rc0 server_args.py:1647-1669, inside `elif is_hip()`). The check "
        "reads --ep-size as typed: A2A handling that sets ep_size to the TP size runs later "
        "(0.5.10rc0 server_args.py:780, 804). 0.5.15 moved it to `_deepseek_spec_moe_resolution` (ROCm only, "
        "'before A2A adjusts EP size'), unchanged to 0.5.23 (arg_groups/overrides.py:847-881). 0.5.9 ran the same "
        "resolution on SM100 without the ep_size check (server_args.py:1312-1331).",
        fix="Set `--ep-size` above 1, or drop the variable (the draft MoE then runs triton without an all-to-all).",
        fix_safety="Unsafe: a different MoE kernel (and no all-to-all) runs the draft.",
    ),
    bad=Example(
        argv=_FP4_MTP,
        target={"architectures": ("DeepseekV3ForCausalLM",), "kv_lora_rank": 512},
        env={ENV: "1"},
        gpu="MI355X",
        sglang_version="0.5.10rc0",
    ),
    good=Example(
        argv=(*_FP4_MTP, "--ep-size", "8"),
        target={"architectures": ("DeepseekV3ForCausalLM",), "kv_lora_rank": 512},
        env={ENV: "1"},
        gpu="MI355X",
        sglang_version="0.5.10rc0",
    ),
    sources=(
        "sglang 0.5.9: python/sglang/srt/server_args.py:1312-1331 (deep_gemm/deepep chosen, no ep_size check)",
        "sglang 0.5.10rc0: python/sglang/srt/server_args.py:1479-1485, 1647-1669, 780, 804",
        "sglang 0.5.14: python/sglang/srt/server_args.py:3742-3772 (the same ValueError under elif is_hip())",
        "sglang 0.5.15: python/sglang/srt/arg_groups/overrides.py:1280 (moved to _deepseek_spec_moe_resolution)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/overrides.py:745-760, 847-881",
    ),
    sglang_versions=">=0.5.10rc0",
    log_signatures=(
        r"'deep_gemm' speculative MoE runner backend with 'deepep' a2a backend requires expert parallelism",
    ),
)
