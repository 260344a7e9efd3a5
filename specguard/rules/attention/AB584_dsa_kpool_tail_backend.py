"""AB584 dsa-kpool-tail-backend."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Fix, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.hybrid.HY316_dsa_kpool_verify_on_rocm import KPOOL_ARCHITECTURES

DECODE = "--dsa-decode-backend"
PREFILL = "--dsa-prefill-backend"
# The DSA impls that read the K-pool tail tokens appended to topk_indices (0.5.20
# layers/attention/dsa/dsa_backend_kpool.py:35-51); flashmla_sparse is rerouted to trtllm (SM100+) or fa3 (SM90)
# first (:53-68).
TAIL_BACKENDS = frozenset({"fa3", "tilelang", "trtllm", "flashmla_sparse"})
# Prefill impls whose tail handling is decided per batch or per pool dtype (flashmla_auto picks per batch,
# 0.5.20 dsa_backend.py:3531-3545; flashmla_sparse_q8 passes on a bf16 pool from 0.5.22): not judged.
PREFILL_NOT_JUDGED = frozenset({"flashmla_auto", "flashmla_sparse_q8"})
BLACKWELL = 10
GLM_DSA = "GlmMoeDsaForCausalLM"
SM120 = 12

# What SGLang raises (0.5.20 dsa/dsa_backend_kpool.py:47-51; the same to 0.5.23 :57-61):
#   NotImplementedError: index_kpool > 1 appends tail tokens to topk_indices and is currently only supported by the
#   FA3/TileLang/TRTLLM DSA decode backend.


def _default_decode(ctx: CheckContext) -> str | None:
    """SGLang's DSA decode backend when none is typed (0.5.20 arg_groups/overrides.py:663-786, unchanged to 0.5.23
    :601-740); None when it cannot be told or hisparse picks it."""
    gpu, target = ctx.env.gpu, ctx.target
    if gpu is None or target is None or ctx.spec.has("--enable-hisparse"):
        return None
    if target.learnable_sink:
        return "flashmla_sparse"
    if gpu.platform == "rocm":
        return "triton"
    if gpu.platform != "cuda" or gpu.compute_capability is None:
        return None
    major = gpu.compute_capability[0]
    fp8 = ctx.spec.get("kv_cache_dtype") == "fp8_e4m3"
    if target.architecture == GLM_DSA and major == SM120 and fp8:
        return "flashinfer_sparse_mla"
    if fp8:
        return "trtllm" if major >= BLACKWELL else "flashmla_kv"
    return "trtllm" if major >= BLACKWELL else "fa3"


def _refused(ctx: CheckContext) -> tuple[str, str] | None:
    """(phase, how its backend was chosen) of the first DSA phase that cannot read the K-pool tail."""
    decode = ctx.spec.last_value(DECODE)
    how = f"{ctx.flag(DECODE)} {decode}"
    if decode is None:
        decode = _default_decode(ctx)
        how = f"SGLang's default DSA decode backend here, {decode}"
    if decode is not None and decode not in TAIL_BACKENDS:
        return "decode", how
    prefill = ctx.spec.last_value(PREFILL)
    if prefill is not None and prefill not in TAIL_BACKENDS | PREFILL_NOT_JUDGED:
        return "prefill", f"{ctx.flag(PREFILL)} {prefill}"
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    # The raise does not depend on speculation; specguard judges speculative launches, so it is reported for them.
    if (
        ctx.algorithm is None
        or target is None
        or target.architecture not in KPOOL_ARCHITECTURES
        or target.index_topk is None
    ):
        return
    if target.index_kpool is None or target.index_kpool <= 1:
        return
    refused = _refused(ctx)
    if refused is None:
        return
    phase, how = refused
    when = (
        "every decode and verify step (the decode CUDA-graph capture at start, else the first request)"
        if phase == "decode"
        else "every prefill long enough to leave the dense MHA path"
    )
    flag = DECODE if phase == "decode" else PREFILL
    yield RULE.finding(
        f"{target.architecture} with index_kpool {target.index_kpool} and {how}, in SGLang {ctx.version}: the pooled "
        "indexer appends K-pool tail tokens to the top-k indices, which only the fa3, tilelang and trtllm DSA "
        f"backends read, so {when} raises 'NotImplementedError: index_kpool > 1 appends tail tokens to topk_indices "
        f"...'. Set {ctx.flag(flag)} trtllm (Blackwell) or fa3 (Hopper)",
        flags=(flag,) if ctx.spec.has(flag) else ("--model-path",),
        fix=_fix(ctx, flag),
    )


def _fix(ctx: CheckContext, flag: str) -> Fix | None:
    gpu = ctx.env.gpu
    if gpu is None or gpu.platform != "cuda" or gpu.compute_capability is None:
        return None
    blackwell = gpu.compute_capability[0] >= BLACKWELL
    if not blackwell and ctx.spec.get("kv_cache_dtype") == "fp8_e4m3":
        return None  # whether fa3 reads an fp8 DSA KV cache is not read here
    backend = "trtllm" if blackwell else "fa3"
    return fix_of(
        f"set {flag} {backend}", Applicability.UNSAFE, Edit(name=flag, value=backend)
    )


GLM5_KPOOL = (
    "--model-path",
    "/ckpt/glm-dsa-kpool",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
)
KPOOL_FACTS = {
    "architectures": ("GlmMoeDsaForCausalLM",),
    "index_topk": 2048,
    "index_kpool": 4,
    "num_nextn_predict_layers": 1,
}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB584",
    category=Category.CRASH,
    name="dsa-kpool-tail-backend",
    summary="A DSA target with index_kpool > 1 needs fa3, tilelang or trtllm DSA backends (flashmla_sparse rerouted) (0.5.20+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    docs=RuleDocs(
        what="A DeepSeek sparse-attention target (DeepSeek-V3/V3.2, GLM-5, GLM-5-Next, LongCat-Flash classes, with "
        "`index_topk`) whose config.json sets `index_kpool` above 1, with a DSA decode backend (typed "
        "`--dsa-decode-backend`, else SGLang's default: triton on ROCm, flashmla_kv for `--kv-cache-dtype fp8_e4m3` "
        "below Blackwell, flashinfer_sparse_mla for GLM-5 fp8 on SM120) other than fa3, tilelang, trtllm or "
        "flashmla_sparse, or a typed `--dsa-prefill-backend` outside those (flashmla_auto and flashmla_sparse_q8 not "
        "judged); SGLang 0.5.20 or later, in a speculative launch (the same launch without speculation fails the same "
        "way; specguard judges speculative launches, so it stays quiet there).",
        why="0.5.20 introduces the pooled indexer (`index_kpool`, configs/model_config.py:353-354). Its top-k indices "
        "carry the pool's tail tokens, and the DSA backend checks, for every forward with top-k indices, that the "
        "impl reads them: `_resolve_kpool_tail_backend` reroutes flashmla_sparse to trtllm (SM100+) or fa3 (SM90), "
        "then `_check_kpool_tail_backend` raises NotImplementedError for any impl but fa3/tilelang/trtllm "
        "(layers/attention/dsa/dsa_backend_kpool.py:35-68), in forward_decode with the decode impl "
        "(dsa_backend.py:2195-2196) and in forward_extend with the decode impl for verify/draft extend and the "
        "prefill impl otherwise (:1865-1888). Decode and verify always run sparse MLA (:3528-3529); a prefill runs "
        "dense MHA while short (:3503-3527). The defaults come from `_dsa_split_backend_resolution` "
        "(arg_groups/overrides.py:663-786). 0.5.21-0.5.23 keep the check (0.5.23 dsa_backend_kpool.py:36-61) and the "
        "defaults (0.5.23 overrides.py:601-740). 0.5.19 has no `index_kpool`.",
        fix="Set `--dsa-decode-backend` (and `--dsa-prefill-backend`) to trtllm on Blackwell or fa3 on Hopper.",
        fix_safety="Unsafe: it changes the attention kernels (and, for an fp8 KV cache, how it is read).",
    ),
    bad=Example(
        argv=(*GLM5_KPOOL, DECODE, "flashmla_kv"),
        target=KPOOL_FACTS,
        gpu="H200",
        sglang_version="0.5.20",
    ),
    good=Example(
        argv=(*GLM5_KPOOL, DECODE, "fa3"),
        target=KPOOL_FACTS,
        gpu="H200",
        sglang_version="0.5.20",
    ),
    sources=(
        "sglang 0.5.19: python/sglang/srt (no index_kpool)",
        "sglang 0.5.20: python/sglang/srt/layers/attention/dsa/dsa_backend_kpool.py:35-68",
        "sglang 0.5.20: python/sglang/srt/layers/attention/dsa_backend.py:1865-1888,2195-2196,3499-3529",
        "sglang 0.5.20: python/sglang/srt/arg_groups/overrides.py:663-786; configs/model_config.py:353-354",
        "sglang 0.5.23: python/sglang/srt/layers/attention/dsa/dsa_backend_kpool.py:36-61; arg_groups/overrides.py:601-740",
    ),
    sglang_versions=">=0.5.20",
    log_signatures=(
        r"index_kpool > 1 appends tail tokens to topk_indices and is currently only supported by",
    ),
)
