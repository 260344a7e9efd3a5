"""FX583 draft-cutedsl-deepep-flashinfer-autotune."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.spec_params.SP532_adaptive_state_overflows_shared_logits_buffer import (
    decode_graphs_captured,
)

CUTEDSL = "flashinfer_cutedsl"
DEEPEP = "deepep"
# The target MoE runners that make should_run_flashinfer_autotune tune (0.5.16
# model_executor/runner/flashinfer_autotune.py:57-66); the FP4/FP8 GEMM triggers depend on the draft's
# quantization and GEMM backend, which are not read here.
AUTOTUNED_RUNNERS = (
    "flashinfer_trtllm",
    "flashinfer_trtllm_routed",
    "flashinfer_mxfp4",
    "flashinfer_cutedsl",
    "flashinfer_cutlass",
)
HOPPER = 9
DISABLE = "--disable-flashinfer-autotune"

# What fails: the draft's autotune dummy run dispatches more tokens per rank than DeepEP low-latency takes
# (SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK), "tripping a DeepEP assert" (0.5.16 flashinfer_autotune.py:44-46);
# the assert is DeepEP's own, whose text SGLang's source does not hold, so no log signature.


def _value(ctx: CheckContext, flag: str) -> str | None:
    return ctx.spec.last_value(flag)


def _draft_has_moe(ctx: CheckContext) -> bool:
    """The draft dispatches through DeepEP only if it has experts: its own config, else the target's (MTP)."""
    facts = ctx.draft if ctx.draft is not None else ctx.target
    return facts is not None and bool(facts.num_experts)


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if (
        ctx.algorithm is None
        or ctx.spec.has(DISABLE)
        # the draft is autotuned only inside its CUDA-graph capture (0.5.16 eagle_draft_cuda_graph_runner.py:478)
        or not decode_graphs_captured(ctx)
        or gpu is None
        or gpu.platform != "cuda"
    ):
        return
    if gpu.compute_capability is None or gpu.compute_capability[0] < HOPPER:
        return
    runner, a2a = _value(ctx, "--moe-runner-backend"), _value(ctx, "--moe-a2a-backend")
    draft_runner = _value(ctx, "--speculative-moe-runner-backend") or runner
    draft_a2a = _value(ctx, "--speculative-moe-a2a-backend") or a2a
    if (draft_runner, draft_a2a) != (CUTEDSL, DEEPEP) or (runner, a2a) == (
        CUTEDSL,
        DEEPEP,
    ):
        return
    if runner not in AUTOTUNED_RUNNERS or not _draft_has_moe(ctx):
        return
    yield RULE.finding(
        f"The draft's MoE runs {CUTEDSL} with DeepEP while the target runs {runner} with "
        f"{a2a or 'no'} all-to-all, in SGLang {ctx.version}: the draft's FlashInfer autotune decision reads the "
        f"target's backends, so the draft is autotuned, and its dummy run dispatches more tokens per rank than DeepEP "
        "low-latency accepts, which trips DeepEP's assert during start-up. Add "
        f"{ctx.flag(DISABLE)}, or upgrade to 0.5.17, which reads the draft's own backends",
        flags=("--speculative-moe-runner-backend", "--moe-runner-backend"),
        fix=fix_of(
            f"add {DISABLE}", Applicability.UNSAFE, Edit(name=DISABLE, value=True)
        ),
    )


DEEPSEEK_MTP_DRAFT_CUTEDSL = (
    "--model-path",
    "nvidia/DeepSeek-R1-0528-FP4-v2",
    "--tp",
    "8",
    "--ep-size",
    "8",
    "--moe-runner-backend",
    "flashinfer_trtllm",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    "--speculative-moe-runner-backend",
    CUTEDSL,
    "--speculative-moe-a2a-backend",
    DEEPEP,
)
DEEPSEEK_FACTS = {
    "architectures": ("DeepseekV3ForCausalLM",),
    "kv_lora_rank": 512,
    "num_experts": 256,
}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="FX583",
    category=Category.START,
    name="draft-cutedsl-deepep-flashinfer-autotune",
    summary="A flashinfer_cutedsl+DeepEP draft MoE under a differently-backed target is autotuned and trips DeepEP at start (0.5.15-0.5.16)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Any `--speculative-algorithm` on a CUDA GPU of SM 9.0 or newer, FlashInfer autotune on (no "
        "`--disable-flashinfer-autotune`), CUDA graphs on (the draft is tuned in its graph capture), a draft with MoE layers whose runner/all-to-all pair is "
        "flashinfer_cutedsl + deepep (`--speculative-moe-runner-backend` / `--speculative-moe-a2a-backend`, each "
        "else the target's), while the target's typed `--moe-runner-backend` is one FlashInfer autotunes "
        "(flashinfer_trtllm, flashinfer_trtllm_routed, flashinfer_mxfp4, flashinfer_cutedsl, flashinfer_cutlass) and "
        "the target's pair is not flashinfer_cutedsl + deepep; SGLang 0.5.15 and 0.5.16.",
        why="0.5.15 starts autotuning the draft runner (`run_speculative_draft_flashinfer_autotune`, "
        "model_executor/runner/flashinfer_autotune.py; 0.5.14 base_runner.py:319-320 tuned the target only). "
        "`should_run_flashinfer_autotune(..., for_speculative_draft=True)` skips CuteDSL v1 + DeepEP, whose dummy run "
        "would dispatch more tokens per rank than SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK, but it tests "
        "`server_args.moe_runner_backend`/`moe_a2a_backend`, the target's (0.5.16 flashinfer_autotune.py:44-55), and "
        "decides from the target's runner (:57-66, 100-102), so such a draft is tuned and trips the DeepEP assert. "
        "The draft's tuning runs only in its CUDA-graph captures (eagle_draft_cuda_graph_runner.py:478, "
        "decode_cuda_graph_runner.py:1012, and the draft-extend, multi-layer and frozen-KV MTP graph runners). "
        "0.5.17 reads `speculative_moe_runner_backend`/`speculative_moe_a2a_backend` for the draft "
        "(flashinfer_autotune.py:53-67).",
        fix=f"Add `{DISABLE}`, or upgrade to SGLang 0.5.17.",
        fix_safety="Unsafe: FlashInfer's MoE and GEMM kernels run untuned (slower), for the target too.",
    ),
    bad=Example(
        argv=DEEPSEEK_MTP_DRAFT_CUTEDSL,
        target=DEEPSEEK_FACTS,
        gpu="B200",
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=DEEPSEEK_MTP_DRAFT_CUTEDSL,
        target=DEEPSEEK_FACTS,
        gpu="B200",
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.14: python/sglang/srt/model_executor/runner/base_runner.py:253-321 (the draft is never autotuned)",
        "sglang 0.5.15: python/sglang/srt/model_executor/runner/flashinfer_autotune.py:34-60,108-109",
        "sglang 0.5.16: python/sglang/srt/model_executor/runner/flashinfer_autotune.py:44-66,100-102,195-221",
        "sglang 0.5.16: python/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py:478",
        "sglang 0.5.17: python/sglang/srt/model_executor/runner/flashinfer_autotune.py:53-67",
    ),
    sglang_versions=">=0.5.15,<=0.5.16",
)
