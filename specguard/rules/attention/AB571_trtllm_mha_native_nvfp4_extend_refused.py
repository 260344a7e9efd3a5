"""AB571 trtllm-mha-native-nvfp4-extend-refused."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, mla_of
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

# TRTLLMHAAttnBackend.forward_extend (0.5.16-0.5.20) opens with
#   if self.decode_uses_native_fp4:
#       raise RuntimeError("TRTLLM MHA with native FP4 KV cache supports decode only; "
#                          "use a separate prefill backend such as flashinfer or triton.")
# decode_uses_native_fp4 holds for the NVFP4 KV method, whose decode access is native FP4 on trtllm_mha only
# (layers/quantization/fp4_kv_cache_quant_method.py, the access registry); fp4_mx_block16 is a plain access.
KV_DTYPE = "--kv-cache-dtype"
MODE = "--speculative-attention-mode"
DRAFT_BACKEND = "--speculative-draft-attention-backend"
NATIVE = "trtllm_mha"
# nvfp4 is refused at argument time on any CUDA GPU but SM100/SM120 (handle_kv4_compatibility).
NVFP4_SM_MAJORS = (10, 12)


def typed_backend(ctx: CheckContext, flag: str) -> str | None:
    return ctx.spec.last_value(flag) or ctx.spec.last_value("--attention-backend")


def gpu_may_run_nvfp4(ctx: CheckContext) -> bool:
    gpu = ctx.env.gpu
    if gpu is None:
        return True  # the refusal below does not depend on the GPU
    return (
        gpu.platform == "cuda"
        and gpu.compute_capability is not None
        and gpu.compute_capability[0] in NVFP4_SM_MAJORS
    )


def _extend_phases_on_native(
    ctx: CheckContext,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the extend passes that run on trtllm_mha, the flags that put them there)."""
    phases: list[str] = []
    flags: list[str] = []
    decode_mode = ctx.spec.last_value(MODE) == "decode"
    if decode_mode and typed_backend(ctx, "--decode-attention-backend") == NATIVE:
        phases.append(f"target verify ({ctx.flag(MODE)} decode)")
        flags.append(MODE)
    draft = ctx.spec.last_value(DRAFT_BACKEND)
    if ctx.algorithm in EAGLE_WORKER_ALGORITHMS and draft == NATIVE:
        phases.append(f"draft extend ({ctx.flag(DRAFT_BACKEND)} {NATIVE})")
        flags.append(DRAFT_BACKEND)
    return tuple(phases), tuple(flags)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or ctx.spec.get("kv_cache_dtype") != "nvfp4"
        or mla_of(ctx.target) is True
        or not gpu_may_run_nvfp4(ctx)
    ):
        return
    prefill = typed_backend(ctx, "--prefill-attention-backend")
    if prefill is None or prefill == NATIVE:
        return  # a plain prefill on trtllm_mha meets the same refusal, speculation or not
    phases, flags = _extend_phases_on_native(ctx)
    if not phases:
        return
    yield RULE.finding(
        f"{ctx.flag(KV_DTYPE)} nvfp4 in SGLang {ctx.version}: {' and '.join(phases)} run on {NATIVE}, whose native "
        'NVFP4 KV cache serves decode only, so its extend pass raises "RuntimeError: TRTLLM MHA with native FP4 KV '
        'cache supports decode only; use a separate prefill backend such as flashinfer or triton." (at CUDA-graph '
        f"capture when the server starts, else on the first request). Use an FP8 KV cache, or upgrade to 0.5.21+ "
        "(trtllm_mha verifies natively on NVFP4 there)",
        flags=(KV_DTYPE, *flags),
        fix=fix_of(
            "use an FP8 KV cache",
            Applicability.UNSAFE,
            Edit(name=KV_DTYPE, value="fp8_e4m3"),
        ),
    )


_NVFP4_SPLIT = (
    "--prefill-attention-backend",
    "flashinfer",
    "--decode-attention-backend",
    NATIVE,
    KV_DTYPE,
    "nvfp4",
)

RULE = Rule(
    check=check,
    code="AB571",
    category=Category.START,
    name="trtllm-mha-native-nvfp4-extend-refused",
    summary="--kv-cache-dtype nvfp4 with target verify or EAGLE draft extend on trtllm_mha fails: its native NVFP4 "
    "path serves decode only (0.5.16-0.5.20)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--kv-cache-dtype nvfp4` with a speculative algorithm, a prefill backend other than trtllm_mha, and "
        "either `--speculative-attention-mode decode` with trtllm_mha as the decode backend (target verify on "
        "trtllm_mha) or, for the EAGLE family, `--speculative-draft-attention-backend trtllm_mha` (draft extend on "
        "trtllm_mha); SGLang 0.5.16 to 0.5.20. Quiet on MLA targets and on a known GPU that is not SM100/SM120 "
        "(nvfp4 is refused there first).",
        why="0.5.16 added the NVFP4 KV cache: its attention access is a dequantised FP8 workspace for prefill on "
        "flashinfer and native FP4 for decode on trtllm_mha (layers/quantization/fp4_kv_cache_quant_method.py:"
        "704-790), and `TRTLLMHAAttnBackend.forward_extend` raises when the backend uses native FP4 "
        "(layers/attention/trtllm_mha_backend.py:116-122, 1030-1034). Target verify is an extend pass that the "
        "hybrid backend gives the decode backend when `speculative_attention_mode` is decode "
        "(layers/attention/hybrid_attn_backend.py:55-62), and the draft-extend backend is the draft's own backend "
        "when given (speculative/draft_utils.py:28-42, 74-103); the draft KV pool has the same NVFP4 layout. "
        "Nothing at argument time refuses it (0.5.20 arg_groups/kv_cache_hook.py:37-108 only warns on split "
        "backends). 0.5.21 removes the raise (trtllm_mha verifies natively on NVFP4) and itself moves a mixed "
        "NVFP4 launch's verify to decode (kv_cache_hook.py:232-250).",
        fix="Use an FP8 KV cache (`--kv-cache-dtype fp8_e4m3`), or upgrade to 0.5.21+. Moving verify back to the "
        "flashinfer prefill backend is no way out: its NVFP4 dequant workspace is not prepared for target verify "
        "(AB576).",
        fix_safety="Unsafe: it doubles the KV bytes per token (a smaller pool).",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, *_NVFP4_SPLIT, MODE, "decode"),
        gpu="B200",
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(
            *LLAMA31_8B_EAGLE3,
            *_NVFP4_SPLIT[:4],
            KV_DTYPE,
            "fp8_e4m3",
            MODE,
            "decode",
        ),
        gpu="B200",
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/server_args.py:564-567 (no nvfp4 KV cache dtype; fp4_e2m1 only)",
        "sglang 0.5.16: python/sglang/srt/layers/attention/trtllm_mha_backend.py:116-122, 1020-1034",
        "sglang 0.5.16: python/sglang/srt/layers/quantization/fp4_kv_cache_quant_method.py:704-790",
        "sglang 0.5.16: python/sglang/srt/layers/attention/hybrid_attn_backend.py:40-64",
        "sglang 0.5.16: python/sglang/srt/speculative/draft_utils.py:28-42, 74-103",
        "sglang 0.5.20: python/sglang/srt/layers/attention/trtllm_mha_backend.py:1320-1334",
        "sglang 0.5.20: python/sglang/srt/arg_groups/kv_cache_hook.py:37-108",
        "sglang 0.5.21: python/sglang/srt/layers/attention/trtllm_mha_backend.py:1544-1560 (no decode-only raise)",
        "sglang 0.5.21: python/sglang/srt/arg_groups/kv_cache_hook.py:232-250",
    ),
    sglang_versions=">=0.5.16,<0.5.21",
    log_signatures=(r"TRTLLM MHA with native FP4 KV cache supports decode only",),
)
