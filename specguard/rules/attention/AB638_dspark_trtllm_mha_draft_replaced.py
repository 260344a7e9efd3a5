"""AB638 dspark-trtllm-mha-draft-replaced."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.AB402_dspark_triton_draft_verify_layout import (
    DEEPSEEK_V4_DRAFTS,
    DSPARK_DRAFT,
)
from specguard.rules.attention.AB637_rocm_dspark_triton_draft_takes_dcp import (
    TRTLLM_MHA_DRAFT_KEPT,
)
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.draft_model._common import draft_config

DRAFT_BACKEND = "--speculative-draft-attention-backend"
TRTLLM_MHA = "trtllm_mha"
# SGLang says (0.5.16 speculative/draft_worker_common.py:45-52):
# "DSPARK draft worker only supports attention_backend in (...) for now, but got 'trtllm_mha'. Falling back to
# 'flashinfer'."


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DSPARK"
        or ctx.spec.get("speculative_draft_attention_backend") != TRTLLM_MHA
    ):
        return
    if TRTLLM_MHA_DRAFT_KEPT.present_in(ctx.version):
        return
    gpu = ctx.env.gpu
    if gpu is not None and gpu.platform != "cuda":
        return  # ROCm falls back to triton, which AB402 reports
    draft = draft_config(ctx)
    if (
        draft is None
        or draft.architecture is None
        or draft.architecture in DEEPSEEK_V4_DRAFTS
    ):
        return  # a DeepSeek-V4 draft runs the dsv4 backend whatever the flag says
    fix = (
        set_flags(
            f"write {DRAFT_BACKEND} flashinfer (what SGLang runs)",
            Applicability.SAFE,
            speculative_draft_attention_backend="flashinfer",
        )
        if gpu is not None
        else None
    )
    yield RULE.finding(
        f"{ctx.flag(DRAFT_BACKEND)} {TRTLLM_MHA} with DSPARK in SGLang {ctx.version}: the DSpark draft worker does "
        f"not keep {TRTLLM_MHA} in this release and replaces it with flashinfer, with only a warning in the log, so "
        f"the draft does not run the backend you named. Use SGLang 0.5.17 or later for a {TRTLLM_MHA} draft, or "
        "name flashinfer (or fa3) for it",
        flags=(DRAFT_BACKEND,),
        fix=fix,
    )


_QWEN3_DSPARK = (
    "--model-path",
    "Qwen/Qwen3-8B",
    "--speculative-algorithm",
    "DSPARK",
    "--speculative-draft-model-path",
    "/ckpt/qwen3-8b-dspark",
    DRAFT_BACKEND,
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB638",
    category=Category.PERF,
    name="dspark-trtllm-mha-draft-replaced",
    summary="--speculative-draft-attention-backend trtllm_mha with DSPARK is replaced by flashinfer (0.5.16)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.SOMETIMES,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with `--speculative-draft-attention-backend trtllm_mha`, on CUDA or "
        "an unknown GPU, and a known draft that is not DeepSeek-V4, SGLang 0.5.16.",
        why="0.5.16 builds the DSpark draft through `build_draft_tp_worker` (speculative/dspark_components/"
        "dspark_worker_v2.py:94-104), whose `_resolve_draft_attention_backend_fallback` keeps only flashinfer, "
        "fa3, fa4, triton and ascend and replaces any other backend with flashinfer (triton on HIP) and a "
        "warning (speculative/draft_worker_common.py:25, :35-53). 0.5.17 adds trtllm_mha to the kept backends for "
        "decode-only dense drafts such as DSpark's (draft_worker_common.py:25-35, :45-64); 0.5.23 keeps it "
        "(arg_groups/choices.py:103-111). A DeepSeek-V4 draft runs the dsv4 backend instead. A draft that "
        "inherits trtllm_mha from the target's backends (no flag) falls back the same way, but that is SGLang's "
        "own choice and is not reported; on ROCm the fallback is triton, which AB402 reports for 0.5.16.",
        fix="Name flashinfer (what SGLang runs) or fa3 for the draft, or upgrade to SGLang 0.5.17.",
        fix_safety="Safe on a known CUDA GPU: flashinfer is what SGLang runs for this draft anyway.",
    ),
    bad=Example(
        argv=(*_QWEN3_DSPARK, TRTLLM_MHA),
        draft=DSPARK_DRAFT,
        gpu="B200",
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(*_QWEN3_DSPARK, TRTLLM_MHA),
        draft=DSPARK_DRAFT,
        gpu="B200",
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.16: python/sglang/srt/speculative/draft_worker_common.py:25,35-53",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:94-104",
        "sglang 0.5.17: python/sglang/srt/speculative/draft_worker_common.py:25-35,45-64",
        "sglang 0.5.23: python/sglang/srt/arg_groups/choices.py:103-111",
    ),
    sglang_versions="==0.5.16",
    log_signatures=(
        r"DSPARK draft worker only supports attention_backend in .* but got 'trtllm_mha'",
    ),
)
