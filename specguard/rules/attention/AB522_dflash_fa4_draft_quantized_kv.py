"""AB522 dflash-fa4-draft-quantized-kv."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import QWEN3_8B_DFLASH

DRAFT_BACKEND = "--speculative-draft-attention-backend"
KV_DTYPE = "--kv-cache-dtype"
# The KV dtypes this rule judges: fp8 caches the draft's runner builds as they are typed (model_runner.py
# configure_kv_cache_dtype); 'auto' resolving to fp8 from the checkpoint is not read here.
FP8_KV = ("fp8_e4m3", "fp8_e5m2")
TARGET_BACKEND_FLAGS = (
    "--attention-backend",
    "--prefill-attention-backend",
    "--decode-attention-backend",
)
# FlashAttention 4 runs on Hopper and Blackwell only; elsewhere the backend fails first.
FA4_MIN_MAJOR = 9


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DFLASH" or ctx.spec.last_value(DRAFT_BACKEND) != "fa4":
        return
    kv = ctx.spec.last_value(KV_DTYPE)
    if kv not in FP8_KV:
        return
    if any(ctx.spec.last_value(flag) == "fa4" for flag in TARGET_BACKEND_FLAGS):
        return  # the target's own fa4 reads the same fp8 cache first
    gpu = ctx.env.gpu
    if gpu is not None and (
        gpu.platform != "cuda"
        or gpu.compute_capability is None
        or gpu.compute_capability[0] < FA4_MIN_MAJOR
    ):
        return
    yield RULE.finding(
        f"DFLASH with {ctx.flag(DRAFT_BACKEND)} fa4 and {ctx.flag(KV_DTYPE)} {kv} in SGLang {ctx.version}: the "
        f"draft's KV cache is {kv} too, and SGLang's FlashAttention backend casts the query to the KV dtype for "
        "fa3 but not for fa4, whose kernel needs the query and the KV in one dtype, so the draft's first "
        "forward fails. Give the draft fa3 or flashinfer, keep the KV cache in the model dtype, or upgrade "
        "to 0.5.16 (which gives an fa4 DFLASH draft a model-dtype cache)",
        flags=(DRAFT_BACKEND, KV_DTYPE),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB522",
    category=Category.START,
    name="dflash-fa4-draft-quantized-kv",
    summary="A DFLASH draft on fa4 with an fp8 KV cache fails: its cache takes the target's fp8 dtype "
    "(0.5.11-0.5.15.post1)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with `--speculative-draft-attention-backend fa4` and "
        "`--kv-cache-dtype fp8_e4m3` or `fp8_e5m2`, SGLang 0.5.11 to 0.5.15.post1, on a CUDA GPU of SM90 or "
        "newer (or an unknown GPU). Quiet when the target's own attention backend is typed fa4 (it reads the "
        "same cache first), and for a KV cache that `auto` resolves to fp8 from the checkpoint.",
        why="The DFLASH draft worker keeps fa4 (0.5.11 speculative/dflash_worker.py:102-135; 0.5.15.post1 "
        "arg_groups/speculative_hook.py:255-297), and the draft's model runner builds its KV cache in the dtype "
        "`--kv-cache-dtype` names, like the target's (0.5.11 model_executor/model_runner.py:2210; 0.5.15.post1 "
        ":2446-2484). `FlashAttentionBackend` casts the query to an fp8 KV dtype only when `fa_impl_ver != 4` "
        "(0.5.11 layers/attention/flashattention_backend.py:655-665; 0.5.15.post1 :1083-1097), so fa4 gets a "
        "bf16 query over an fp8 cache. 0.5.16 moved the dtype choice to `mem_cache/kv_cache_dtype.py` and gives "
        'an fa4 DFLASH draft the model dtype instead (:78-92: "fa4 needs K.dtype == Q.dtype; cannot read the '
        "target's quantized KV\"; model_runner.py:1082-1096 passes `is_dflash`); DSPARK's draft missed that "
        "override in 0.5.16 (AB453). The failure is raised inside the fa4 kernel, whose message SGLang does not "
        "write.",
        fix="Give the draft fa3 or flashinfer, keep the KV cache in the model dtype, or upgrade to 0.5.16. No "
        "automatic fix: which backend runs on this GPU is the user's call.",
        fix_safety="No fix: the backend and the KV cache dtype change speed and memory.",
    ),
    bad=Example(
        argv=(*QWEN3_8B_DFLASH, DRAFT_BACKEND, "fa4", KV_DTYPE, "fp8_e4m3"),
        sglang_version="0.5.15.post1",
    ),
    good=Example(
        argv=(*QWEN3_8B_DFLASH, DRAFT_BACKEND, "fa4", KV_DTYPE, "fp8_e4m3"),
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.10.post1: python/sglang/srt/speculative/ (no DFLASH)",
        "sglang 0.5.11: python/sglang/srt/speculative/dflash_worker.py:102-135",
        "sglang 0.5.11: python/sglang/srt/layers/attention/flashattention_backend.py:655-665",
        "sglang 0.5.15.post1: python/sglang/srt/arg_groups/speculative_hook.py:255-297",
        "sglang 0.5.15.post1: python/sglang/srt/model_executor/model_runner.py:2446-2484",
        "sglang 0.5.15.post1: python/sglang/srt/layers/attention/flashattention_backend.py:1083-1097",
        "sglang 0.5.16: python/sglang/srt/mem_cache/kv_cache_dtype.py:78-92",
        "sglang 0.5.16: python/sglang/srt/model_executor/model_runner.py:1082-1096",
    ),
    sglang_versions=">=0.5.11,<=0.5.15.post1",
)
