"""AB637 rocm-dspark-triton-draft-takes-dcp."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.AB402_dspark_triton_draft_verify_layout import (
    DEEPSEEK_V4_DRAFTS,
    DSPARK_DRAFT,
    dspark_draft_backend,
)
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.spec_params._shared import int_flag
from specguard.sglang_facts.changes import Change

DCP = ("--dcp-size", "--decode-context-parallel-size")
DRAFT_BACKEND = "--speculative-draft-attention-backend"
# 0.5.17 speculative/draft_worker_common.py:28-35 keeps trtllm_mha for a DSpark draft; 0.5.16 (:25) replaced it.
TRTLLM_MHA_DRAFT_KEPT = Change(
    "0.5.17", "0.5.17 speculative/draft_worker_common.py:28-35 (0.5.16 :25 lacks it)"
)


def _draft_runs_triton(ctx: CheckContext) -> bool:
    typed = ctx.spec.get("speculative_draft_attention_backend")
    if typed == "trtllm_mha" and TRTLLM_MHA_DRAFT_KEPT.present_in(ctx.version):
        return False
    return dspark_draft_backend(ctx) == "triton"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DSPARK" or ctx.draft is None or ctx.draft.architecture is None:
        return
    gpu = ctx.env.gpu
    if (
        gpu is None
        or gpu.platform != "rocm"
        or ctx.draft.architecture in DEEPSEEK_V4_DRAFTS
    ):
        return
    flag = next((f for f in DCP if ctx.spec.has(f)), None)
    size = int_flag(ctx, flag) if flag is not None else None
    if flag is None or size is None or size <= 1 or not _draft_runs_triton(ctx):
        return
    yield RULE.finding(
        f"DSPARK on ROCm ({gpu.name}) with {ctx.flag(flag)} {size} and the draft on the triton attention backend, "
        f"SGLang {ctx.version}: the draft never joins the decode-context-parallel group, yet its triton backend "
        f"takes the target's DCP size and rank, so it stores only every {size}th draft token (at slot // {size}) "
        f"and sizes its heads {size} times over. The draft's attention runs on a KV layout it does not have: "
        "proposals are wrong and acceptance collapses (the target's verify keeps the output correct), if the draft "
        f"forward does not fail outright. 0.5.20 builds a ROCm DSpark draft's triton backend without DCP; "
        f"upgrade, or drop {ctx.flag(flag)}",
        flags=(flag, "--speculative-algorithm"),
    )


_QWEN3_DSPARK_DCP = (
    "--model-path",
    "Qwen/Qwen3-32B",
    "--tp-size",
    "8",
    "--dcp-size",
    "4",
    "--speculative-algorithm",
    "DSPARK",
    "--speculative-draft-model-path",
    "/ckpt/qwen3-32b-dspark",
)
_QWEN3 = {"architectures": ("Qwen3ForCausalLM",)}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB637",
    category=Category.PERF,
    name="rocm-dspark-triton-draft-takes-dcp",
    summary="A DSPARK draft on the triton backend takes the target's decode-context-parallel sharding on ROCm "
    "(0.5.16-0.5.19)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` on a known AMD (ROCm) GPU with `--dcp-size` (alias "
        "`--decode-context-parallel-size`) above 1 and a draft (known, not DeepSeek-V4) that runs on triton: "
        "`--speculative-draft-attention-backend triton`, or none typed and the target's prefill backend is "
        "triton, or a backend the DSpark draft does not keep (aiter, ROCm's default, among them), SGLang "
        "0.5.16-0.5.19.",
        why="Decode context parallel runs on HIP only up to 0.5.16 (with speculation refused on CUDA: 0.5.16 "
        "server_args.py:3150-3178). A DSpark draft keeps flashinfer, fa3, fa4, triton or ascend (trtllm_mha "
        "from 0.5.17) and falls back to triton on HIP (0.5.16 speculative/draft_worker_common.py:25, :35-53). "
        "`TritonAttnBackend.__init__` sets `dcp_size`/`dcp_rank` from the process's attention DCP group for "
        "every runner, the draft's included (0.5.16 layers/attention/triton_backend.py:173-177; 0.5.19 "
        ":233-241, `runtime_context.py:181`), multiplies its head count by it, and under DCP stores only the "
        "tokens whose position falls on its rank at `out_cache_loc // dcp_size` (0.5.19 :1315-1330). 0.5.20 "
        "sets `dcp_size = 1, dcp_rank = 0` for a HIP DSpark draft: 'Drafts never join the dcp group so we "
        "ignore it' (0.5.20 triton_backend.py:231-246). 0.5.15.post1's triton backend has no DCP.",
        fix="Upgrade to SGLang 0.5.20, or run without `--dcp-size`.",
        fix_safety="No automatic fix: it takes another release or parallel layout.",
    ),
    bad=Example(
        argv=_QWEN3_DSPARK_DCP,
        target=_QWEN3,
        draft=DSPARK_DRAFT,
        gpu="MI355X",
        sglang_version="0.5.19",
    ),
    good=Example(
        argv=_QWEN3_DSPARK_DCP,
        target=_QWEN3,
        draft=DSPARK_DRAFT,
        gpu="MI355X",
        sglang_version="0.5.20",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/layers/attention/triton_backend.py (no attn_dcp_size)",
        "sglang 0.5.16: python/sglang/srt/server_args.py:3150-3178",
        "sglang 0.5.16: python/sglang/srt/speculative/draft_worker_common.py:25,35-53",
        "sglang 0.5.16: python/sglang/srt/layers/attention/triton_backend.py:173-177",
        "sglang 0.5.19: python/sglang/srt/layers/attention/triton_backend.py:233-241,1315-1330",
        "sglang 0.5.19: python/sglang/srt/runtime_context.py:181",
        "sglang 0.5.20: python/sglang/srt/layers/attention/triton_backend.py:231-246",
    ),
    sglang_versions=">=0.5.16,<=0.5.19",
)
