"""AB470 aiter-swa-verify-legacy-kernel."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Fix, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, verify_backend
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import Change

# The aiter backend builds on the sliding-window (SWA) KV pool, switching its unified attention on
# (0.5.10rc0 layers/attention/aiter_backend.py:197-209; 0.5.9 has no SWA pool branch).
AITER_SWA_POOL = Change(
    "0.5.10rc0", "0.5.10rc0 layers/attention/aiter_backend.py:197-209"
)
# Target verify goes through unified_attention with the window, the sinks and the SWA page table while
# unified attention is on, unless SGLANG_AITER_UNIFIED_VERIFY=0 (0.5.12 layers/attention/aiter_backend.py:221-230).
# Its `topk == 1` test reads the backend's own topk, which the target's backend leaves at its default 1
# (:123, :141; attention_registry.py:80 `AiterAttnBackend(runner)`; 0.5.23 :356, :372, registry :131), so a tree
# verifies there too, under a causal mask instead of the tree's: a different fault this rule does not judge.
AITER_UNIFIED_VERIFY = Change(
    "0.5.12", "0.5.12 layers/attention/aiter_backend.py:221-230, 2644-2700"
)
# Its opt-out, read with the default "1" (0.5.12 aiter_backend.py:229).
UNIFIED_VERIFY = "SGLANG_AITER_UNIFIED_VERIFY"
# Unified attention without the SWA pool (0.5.10rc0 aiter_backend.py:206-209).
UNIFIED_ATTN = "SGLANG_USE_AITER_UNIFIED_ATTN"
NO_SWA_POOL = "--disable-hybrid-swa-memory"

# Targets SGLang puts on the hybrid SWA KV pool, in every release of the window (0.5.10rc0
# configs/model_config.py:1426-1436 is_hybrid_swa_model; 0.5.12 :1660-1674; 0.5.23 :2655-2680, where
# gpt-oss moved into SWA_SINK_ARCHS :88-94), whose sliding layers set RadixAttention's sliding_window_size
# (0.5.11 models/gpt_oss.py:373, mimo_v2.py:639, step3p5.py:534). Llama 4 is left out: its chunked layers keep
# sliding_window_size -1 (0.5.11 models/llama4.py:305-313) and aiter reads no chunk size on any path, so
# unified verify does not cure it either. Gemma 4 (aiter accepted only in 0.5.11-0.5.12 and from 0.5.20,
# rule AB326; its K/V-sharing layers crash instead, AB471) and the rarer entries added later are left out.
SWA_POOL_ARCHITECTURES = frozenset(
    {
        "GptOssForCausalLM",
        "MiMoV2FlashForCausalLM",
        "Step3p5ForCausalLM",
    }
)


def _unified_verify_off(ctx: CheckContext) -> bool:
    return ctx.spec.env_value(UNIFIED_VERIFY) is not None and not ctx.spec.env_flag(
        UNIFIED_VERIFY
    )


def swa_pool(ctx: CheckContext) -> bool:
    """Whether a hybrid-SWA target keeps its sliding-window pool (unless --disable-hybrid-swa-memory)."""
    return not ctx.spec.has(NO_SWA_POOL)


def legacy_verify_reason(ctx: CheckContext) -> str | None:
    """Why aiter's non-MLA target verify of a hybrid-SWA target takes the legacy triton extend kernel
    here, or None when it runs unified_attention (0.5.12 aiter_backend.py:221-230)."""
    if not AITER_UNIFIED_VERIFY.present_in(ctx.version):
        return "this release verifies every non-MLA target with the legacy triton extend kernel"
    if _unified_verify_off(ctx):
        return (
            f"{UNIFIED_VERIFY}=0 sends verify back to the legacy triton extend kernel"
        )
    if not swa_pool(ctx) and not ctx.spec.env_flag(UNIFIED_ATTN):
        return f"{NO_SWA_POOL} without {UNIFIED_ATTN}=1 turns unified attention off, so verify takes the legacy triton extend kernel"
    return None


def unified_verify_fix(ctx: CheckContext) -> Fix | None:
    """The launch that verifies through unified_attention (0.5.12+): the opt-out unset, the SWA pool kept."""
    if not AITER_UNIFIED_VERIFY.present_in(ctx.version):
        return None
    edits = (
        [Edit(target="env", name=UNIFIED_VERIFY, value=None)]
        if _unified_verify_off(ctx)
        else []
    )
    if not swa_pool(ctx) and not ctx.spec.env_flag(UNIFIED_ATTN):
        edits.append(Edit(name=NO_SWA_POOL, value=None))
    return fix_of("verify through unified attention", Applicability.UNSAFE, *edits)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None:
        return
    arch = ctx.target.architecture
    if not AITER_SWA_POOL.present_in(ctx.version) or arch not in SWA_POOL_ARCHITECTURES:
        return
    backend, flag = verify_backend(ctx)
    if backend != "aiter":
        return
    why = legacy_verify_reason(ctx)
    if why is None:
        return
    how = f"{ctx.flag(flag)} aiter" if flag else "aiter (SGLang's default on ROCm)"
    pool = (
        ", and reads the sliding-window pool through full-pool indices"
        if swa_pool(ctx)
        else ""
    )
    next_step = (
        f"Leave {UNIFIED_VERIFY} unset and keep the SWA pool, so verify runs unified attention"
        if AITER_UNIFIED_VERIFY.present_in(ctx.version)
        else "Use SGLang 0.5.12 or later"
    )
    yield RULE.finding(
        f"{arch} has sliding-window layers, and with {how} in SGLang {ctx.env.sglang_version} {why}: that kernel "
        f"gets neither the layers' sliding window nor their attention sinks{pool}, so the verify logits of those "
        f"layers are wrong and the accepted tokens are not the target's. {next_step}",
        flags=(flag,) if flag else (),
        fix=unified_verify_fix(ctx),
    )


GPT_OSS_EAGLE3 = (
    "--model-path", "openai/gpt-oss-120b", "--speculative-algorithm", "EAGLE3",
    "--speculative-draft-model-path", "lmsys/EAGLE3-gpt-oss-120b-bf16", "--speculative-num-steps", "3",
)  # fmt: skip
GPT_OSS = {"architectures": ("GptOssForCausalLM",)}

RULE = Rule(
    check=check,
    code="AB470",
    category=Category.WRONG_OUTPUT,
    name="aiter-swa-verify-legacy-kernel",
    summary="aiter verifying drafts on a sliding-window-pool target (gpt-oss, MiMo-V2-Flash, Step-3.5) with the "
    "legacy extend kernel: every verify before 0.5.12, SGLANG_AITER_UNIFIED_VERIFY=0 or no unified attention after",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.SOMETIMES,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE on ROCm where aiter runs target verify (typed, or SGLang's "
        "default on ROCm) on a hybrid sliding-window target (GptOssForCausalLM, MiMoV2FlashForCausalLM, "
        "Step3p5ForCausalLM), from 0.5.10rc0: any verify up to 0.5.11; from 0.5.12 `SGLANG_AITER_UNIFIED_VERIFY=0`, "
        "or `--disable-hybrid-swa-memory` without `SGLANG_USE_AITER_UNIFIED_ATTN=1`. Quiet for a tree from 0.5.12 "
        "and for Llama 4 (see why).",
        why="0.5.10rc0 taught the aiter backend the SWA pool (layers/attention/aiter_backend.py:197-209: "
        "`use_sliding_window_kv_pool`, unified attention on). Its non-MLA target-verify branch still calls the "
        "triton `extend_attention_fwd` (0.5.10rc0 :2313-2340; 0.5.11 :2350-2381) with the ragged full-pool "
        "`kv_indices` of `create_flashinfer_kv_indices_triton` (0.5.11 :1040-1060) against "
        "`token_to_kv_pool.get_key_buffer(layer_id)`, which for a sliding-window layer is the smaller SWA "
        "buffer (mem_cache/swa_memory_pool.py:125-137; the translation `translate_loc_from_full_to_swa` :149-154 "
        "is never applied), and passes neither the layer's sliding window nor its sinks. 0.5.12 adds "
        "`_use_unified_verify` (aiter_backend.py:221-230: unified attention, non-MLA, topk == 1, "
        "`SGLANG_AITER_UNIFIED_VERIFY` default 1; unified attention is on for the SWA pool or with "
        "`SGLANG_USE_AITER_UNIFIED_ATTN`, :207-219), whose verify runs `unified_attention` with the window, the "
        "sinks and the SWA page table (:2644-2700); any other verify keeps the legacy call (:2702-2720). "
        "The topk it tests is the backend's own, and the target's backend is built as `AiterAttnBackend(runner)` "
        "(attention_registry.py:80) with the default `topk=1` (aiter_backend.py:123, 141), so a tree verifies "
        "through `unified_attention` as well (under a causal mask, not the tree's; this rule does not judge that). "
        "0.5.23 is the same (:548-553, 356-372, registry :131, 2449-2515 metadata, 4251-4272). Llama 4 is left "
        "out: its chunked layers keep `sliding_window_size` -1 (0.5.11 models/llama4.py:305-313), which no aiter "
        "path reads otherwise, so the unified path does not cure it. Before 0.5.10rc0 aiter with EAGLE failed on "
        "non-MLA targets anyway (AB061).",
        fix="From 0.5.12: leave `SGLANG_AITER_UNIFIED_VERIFY` unset and keep the SWA pool (or set "
        "`SGLANG_USE_AITER_UNIFIED_ATTN=1`). Before 0.5.12: upgrade.",
        fix_safety="Unsafe: another verify kernel runs, and keeping the SWA pool changes how KV memory is split.",
    ),
    bad=Example(
        argv=(
            *GPT_OSS_EAGLE3,
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
        ),
        target=GPT_OSS,
        env={UNIFIED_VERIFY: "0"},
        gpu="MI300X",
        sglang_version="0.5.12",
    ),
    good=Example(
        argv=(
            *GPT_OSS_EAGLE3,
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
        ),
        target=GPT_OSS,
        gpu="MI300X",
        sglang_version="0.5.12",
    ),
    sources=(
        "sglang 0.5.9: python/sglang/srt/layers/attention/aiter_backend.py (no SWA pool branch; AB061's crash)",
        "sglang 0.5.10rc0: python/sglang/srt/layers/attention/aiter_backend.py:197-209, 2313-2340",
        "sglang 0.5.11: python/sglang/srt/layers/attention/aiter_backend.py:1040-1060, 2350-2381",
        "sglang 0.5.11: python/sglang/srt/mem_cache/swa_memory_pool.py:125-154",
        "sglang 0.5.11: python/sglang/srt/models/llama4.py:305-313",
        "sglang 0.5.12: python/sglang/srt/layers/attention/aiter_backend.py:123, 141, 221-230, 2644-2720",
        "sglang 0.5.12: python/sglang/srt/layers/attention/attention_registry.py:77-80",
        "sglang 0.5.23: python/sglang/srt/layers/attention/aiter_backend.py:356-372, 548-553, 2449-2515, 4251-4272",
        "sglang 0.5.23: python/sglang/srt/configs/model_config.py:88-94, 2655-2680",
    ),
    sglang_versions=">=0.5.10rc0",
)
