"""AB453 dspark-fa4-draft-quantized-kv."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.AB402_dspark_triton_draft_verify_layout import (
    DEEPSEEK_V4_DRAFTS,
    DSPARK_DRAFT,
)
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK

DRAFT_BACKEND = "--speculative-draft-attention-backend"
KV_DTYPE = "--kv-cache-dtype"
# The --kv-cache-dtype values configure_kv_cache_dtype turns into a plain fp8 cache (0.5.16
# mem_cache/kv_cache_dtype.py:43-52); mxfp8 has its own scale-factor path in the FlashAttention backend.
FP8_KV_DTYPES = ("fp8_e4m3", "fp8_e5m2")


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DSPARK" or ctx.draft is None or ctx.draft.architecture is None:
        return
    kv = ctx.spec.get("kv_cache_dtype")
    if (
        ctx.draft.architecture in DEEPSEEK_V4_DRAFTS
        or ctx.spec.get("speculative_draft_attention_backend") != "fa4"
        or kv not in FP8_KV_DTYPES
    ):
        return
    yield RULE.finding(
        f"DSPARK with its draft on fa4 and {ctx.flag(KV_DTYPE)} {kv} in SGLang {ctx.version}: the draft's KV cache "
        "takes the fp8 dtype, but fa4 reads K and V only in the query's dtype, and SGLang 0.5.16 gives only a "
        "DFLASH fa4 draft a KV cache in its compute dtype, so the DSpark draft's first forward fails (CUDA-graph "
        f"capture at start, else the first decode). Use {ctx.flag(DRAFT_BACKEND)} fa3 or flashinfer, or upgrade to "
        "0.5.17, which covers DSPARK too",
        flags=(DRAFT_BACKEND, KV_DTYPE),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own attention backends
    check=check,
    code="AB453",
    category=Category.CRASH,
    name="dspark-fa4-draft-quantized-kv",
    summary="A DSPARK draft on fa4 with an fp8 KV cache fails: only DFLASH's fa4 draft got a compute-dtype KV (0.5.16)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with `--speculative-draft-attention-backend fa4` and `--kv-cache-dtype "
        "fp8_e4m3` or `fp8_e5m2`, with a draft that is not a DeepSeek-V4 draft (which runs the dsv4 backend), "
        "SGLang 0.5.16.",
        why="The DSpark draft keeps fa4 (speculative/draft_worker_common.py:25, :35-53; a DeepSeek-V4 draft is "
        "overridden to dsv4, dspark_worker_v2.py:101-103) and its model runner sizes its own KV cache with "
        "`configure_kv_cache_dtype`, which gives an fa4 draft the model's compute dtype instead of a quantized KV "
        'cache only when `is_dflash` (mem_cache/kv_cache_dtype.py:78-92: "fa4 needs K.dtype == Q.dtype; cannot read '
        "the target's quantized KV\"); 0.5.16 passes `spec_algorithm.is_dflash()` (model_runner.py:1082-1096), "
        "false for DSPARK, so the draft's cache is fp8, and the FlashAttention backend does not cast the query to "
        "the KV dtype for fa4 (layers/attention/flashattention_backend.py:1196-1208). 0.5.17 passes "
        "`is_dflash_family()`, DFLASH or DSPARK (model_runner.py:1198-1213; spec_info.py:118-119). "
        "0.5.15.post1 has no DSPARK. The failure is raised inside the fa4 kernel, whose message SGLang does not "
        "write; a KV cache that `auto` resolves to fp8 from the checkpoint is not judged here.",
        fix="Give the draft fa3 or flashinfer, keep the KV cache in the model dtype, or upgrade to 0.5.17. No "
        "automatic fix: which backend runs on this GPU is the user's call.",
        fix_safety="No fix: the backend and the KV cache dtype change speed and memory.",
    ),
    bad=Example(
        argv=(*DEEPSEEK_V4_FLASH_DSPARK, DRAFT_BACKEND, "fa4", KV_DTYPE, "fp8_e4m3"),
        draft=DSPARK_DRAFT,
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(*DEEPSEEK_V4_FLASH_DSPARK, DRAFT_BACKEND, "fa4", KV_DTYPE, "fp8_e4m3"),
        draft=DSPARK_DRAFT,
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/spec_info.py:28-41 (no DSPARK algorithm)",
        "sglang 0.5.16: python/sglang/srt/model_executor/model_runner.py:1082-1096 (is_dflash only)",
        "sglang 0.5.16: python/sglang/srt/mem_cache/kv_cache_dtype.py:43-52,78-92",
        "sglang 0.5.16: python/sglang/srt/speculative/draft_worker_common.py:25,35-53",
        "sglang 0.5.16: python/sglang/srt/layers/attention/flashattention_backend.py:1196-1208",
        "sglang 0.5.17: python/sglang/srt/model_executor/model_runner.py:1198-1213 (is_dflash_family)",
        "sglang 0.5.17: python/sglang/srt/speculative/spec_info.py:118-119",
    ),
    sglang_versions="==0.5.16",
)
