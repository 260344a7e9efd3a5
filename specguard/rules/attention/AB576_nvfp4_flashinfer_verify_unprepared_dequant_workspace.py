"""AB576 nvfp4-flashinfer-verify-unprepared-dequant-workspace."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.AB571_trtllm_mha_native_nvfp4_extend_refused import (
    KV_DTYPE,
    MODE,
    NATIVE,
    gpu_may_run_nvfp4,
    typed_backend,
)
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

# With an NVFP4 KV cache, FlashInfer prefill attends over an FP8 dequant workspace (one layer's worth, shared
# by every layer) that _prepare_dequant_workspace_metadata_for_extend fills only for extends "without
# speculative" (is_extend() and not is_target_verify()). A target verify on flashinfer skips the fill but
# forward_extend still hands the kernel the workspace in place of the KV pool, indexed by pool slots.
PREFILL = "flashinfer"
# NVFP4's only decode access is native FP4 on trtllm_mha; a flashinfer decode refuses the cache at start
# (FlashInferAttnBackend._check_kv_attention_access), so only the split launch reaches a verify.


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or ctx.spec.get("kv_cache_dtype") != "nvfp4"
        or mla_of(ctx.target) is True
        or not gpu_may_run_nvfp4(ctx)
        or ctx.spec.last_value(MODE) == "decode"
        or typed_backend(ctx, "--prefill-attention-backend") != PREFILL
        or typed_backend(ctx, "--decode-attention-backend") != NATIVE
    ):
        return
    yield RULE.finding(
        f"{ctx.flag(KV_DTYPE)} nvfp4 with {ctx.algorithm} in SGLang {ctx.version}: target verify runs on the "
        f"{PREFILL} prefill backend, which reads NVFP4 KV through an FP8 dequant workspace that SGLang fills only "
        "for non-speculative extends; the verify pass attends over that shared one-layer workspace (left from "
        "another batch and layer) instead of the request's KV, so the verified tokens are wrong. Use an FP8 KV "
        "cache, or upgrade to 0.5.21+ (which verifies NVFP4 on trtllm_mha)",
        flags=(KV_DTYPE, "--prefill-attention-backend", MODE),
        fix=fix_of(
            "use an FP8 KV cache",
            Applicability.UNSAFE,
            Edit(name=KV_DTYPE, value="fp8_e4m3"),
        ),
    )


_SPLIT = (
    "--prefill-attention-backend",
    PREFILL,
    "--decode-attention-backend",
    "trtllm_mha",
)

RULE = Rule(
    check=check,
    code="AB576",
    category=Category.WRONG_OUTPUT,
    name="nvfp4-flashinfer-verify-unprepared-dequant-workspace",
    summary="--kv-cache-dtype nvfp4 with target verify on the flashinfer prefill backend verifies against a stale "
    "dequant workspace (0.5.16-0.5.20)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--kv-cache-dtype nvfp4` with any speculative algorithm, flashinfer as the prefill backend "
        "(`--prefill-attention-backend`, else `--attention-backend`), trtllm_mha as the decode backend (the only "
        "one with an NVFP4 decode access; flashinfer decode refuses the cache at start, 0.5.16 "
        "flashinfer_backend.py:337-341, 540-548) and `--speculative-attention-mode` not decode "
        "(target verify on the prefill backend); SGLang 0.5.16 to 0.5.20. Quiet on MLA targets and on a known GPU "
        "that is not SM100/SM120. From 0.5.21 only SM100 launches move verify off flashinfer; SM120 there was not "
        "traced and stays quiet.",
        why="0.5.16's NVFP4 KV method gives flashinfer prefill a dequant-workspace access "
        "(layers/quantization/fp4_kv_cache_quant_method.py:704-790) whose workspace is one `(pool size, heads, "
        "head_dim)` FP8 buffer shared across layers (:608-617). FlashInfer fills it only in "
        "`_prepare_dequant_workspace_metadata_for_extend`, which returns at once unless "
        "`forward_mode.is_extend_without_speculative()` (layers/attention/flashinfer_backend.py:836-853; "
        "model_executor/forward_batch_info.py:189-190, `is_extend() and not is_target_verify()`) and is not called "
        "from the target-verify branch of `init_forward_metadata` (:939-956). `forward_extend` still passes the "
        "workspace as the paged KV whenever the prefill uses it (:1278-1294), so verify attends over rows the "
        "verify batch never wrote, with its kv indices taken from the pool's req_to_token. Hybrid attention gives "
        "target verify to the prefill backend unless the mode is decode (hybrid_attn_backend.py:55-62). 0.5.21 "
        "moves SM100 mixed NVFP4 verify to trtllm_mha ('FlashInfer prefill reads a transient FP8 dequant "
        "workspace', arg_groups/kv_cache_hook.py:232-250), where it runs natively; 0.5.20 has the same "
        "flashinfer path (kv_cache_hook.py:37-108 only warns on split backends).",
        fix="Use an FP8 KV cache, or upgrade to SGLang 0.5.21+. `--speculative-attention-mode decode` is no way out "
        "before 0.5.21: trtllm_mha then refuses the verify (AB571).",
        fix_safety="Unsafe: an FP8 KV cache takes twice the bytes per token (a smaller pool).",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, *_SPLIT, KV_DTYPE, "nvfp4"),
        gpu="B200",
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, *_SPLIT, KV_DTYPE, "fp8_e4m3"),
        gpu="B200",
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/server_args.py:564-567 (no nvfp4 KV cache dtype)",
        "sglang 0.5.16: python/sglang/srt/layers/quantization/fp4_kv_cache_quant_method.py:608-617, 704-790",
        "sglang 0.5.16: python/sglang/srt/layers/attention/flashinfer_backend.py:337-347, 540-548, 836-853, 916-1294",
        "sglang 0.5.16: python/sglang/srt/model_executor/forward_batch_info.py:189-190",
        "sglang 0.5.16: python/sglang/srt/layers/attention/hybrid_attn_backend.py:40-64",
        "sglang 0.5.20: python/sglang/srt/layers/attention/flashinfer_backend.py:858-873, 1005, 1326",
        "sglang 0.5.20: python/sglang/srt/arg_groups/kv_cache_hook.py:37-108",
        "sglang 0.5.21: python/sglang/srt/arg_groups/kv_cache_hook.py:232-250",
    ),
    sglang_versions=">=0.5.16,<0.5.21",
)
