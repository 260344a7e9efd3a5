"""AB471 gemma4-aiter-legacy-verify-kv-shared."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.AB326_gemma4_attention_backend_refused import (
    GEMMA4_TARGETS,
)
from specguard.rules.attention.AB470_aiter_swa_verify_legacy_kernel import (
    AITER_UNIFIED_VERIFY,
    UNIFIED_VERIFY,
    legacy_verify_reason,
    unified_verify_fix,
)
from specguard.rules.attention.backends import verify_backend
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.sglang_facts.changes import GEMMA4_ATTENTION_BACKENDS, Change, as_of

# Gemma 4 arrives (models/gemma4_causal.py, absent from 0.5.10.post1); its K/V-sharing layers pass k = v = None
# (0.5.11 gemma4_causal.py:344-347).
GEMMA4 = Change("0.5.11", "0.5.11 models/gemma4_causal.py:344-347")
# The legacy verify refuses them by name instead of failing on k.contiguous() (0.5.20 aiter_backend.py:2744-2758,
# called at :3343).
CROSS_LAYER_KV_REFUSAL = Change(
    "0.5.20", "0.5.20 layers/attention/aiter_backend.py:2744-2758, 3343"
)
# What SGLang raises from 0.5.20: "aiter target_verify does not support cross-layer KV sharing (k/v are None).
# Use the unified verify path (speculative_eagle_topk=1 and SGLANG_AITER_UNIFIED_VERIFY=1)."; before it the
# legacy call fails with "AttributeError: 'NoneType' object has no attribute 'contiguous'".
REFUSAL = "aiter target_verify does not support cross-layer KV sharing (k/v are None)"
ATTRIBUTE_ERROR = "AttributeError: 'NoneType' object has no attribute 'contiguous'"


def _shares_kv(ctx: CheckContext) -> bool:
    shared = ctx.target.num_kv_shared_layers if ctx.target is not None else None
    return shared is not None and shared > 0


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or ctx.target is None
        or ctx.target.architecture not in GEMMA4_TARGETS
    ):
        return
    if not GEMMA4.present_in(ctx.version) or not _shares_kv(ctx):
        return
    accepted = as_of(GEMMA4_ATTENTION_BACKENDS, ctx.version, before=None)
    if accepted is not None and "aiter" not in accepted:
        return  # SGLang refuses aiter for Gemma 4 at start (AB326)
    backend, flag = verify_backend(ctx)
    if backend != "aiter" or flag is None:
        return  # SGLang's Gemma 4 default is triton, not aiter
    why = legacy_verify_reason(ctx)
    if why is None:
        return
    error = (
        f"ValueError '{REFUSAL}'"
        if CROSS_LAYER_KV_REFUSAL.present_in(ctx.version)
        else ATTRIBUTE_ERROR
    )
    next_step = (
        f"Leave {UNIFIED_VERIFY} unset and keep the SWA pool, so verify runs unified attention, or drop the flag "
        "(SGLang's Gemma 4 default, triton)"
        if AITER_UNIFIED_VERIFY.present_in(ctx.version)
        else "Drop the flag (SGLang's Gemma 4 default, triton), or use SGLang 0.5.12 or later"
    )
    yield RULE.finding(
        f"{ctx.target.architecture} with {ctx.target.num_kv_shared_layers} K/V-sharing layers and {ctx.flag(flag)} "
        f"aiter in SGLang {ctx.env.sglang_version}: {why}, which needs each layer's own K and V, and the sharing "
        f"layers pass none, so the first verify fails with {error}. {next_step}",
        flags=(flag,),
        fix=unified_verify_fix(ctx),
    )


GEMMA4_E4B_EAGLE3 = (
    "--model-path", "google/gemma-4-E4B-it", "--speculative-algorithm", "EAGLE3",
    "--speculative-draft-model-path", "d", "--speculative-num-steps", "3", "--attention-backend", "aiter",
)  # fmt: skip
GEMMA4_KV_SHARED = {
    "architectures": ("Gemma4ForConditionalGeneration",),
    "num_kv_shared_layers": 18,
}

RULE = Rule(
    check=check,
    code="AB471",
    category=Category.CRASH,
    name="gemma4-aiter-legacy-verify-kv-shared",
    summary="A Gemma 4 target with K/V-sharing layers on aiter crashes at the first verify unless it verifies "
    "through unified attention (0.5.11-0.5.12, 0.5.20+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="A speculative launch on a Gemma 4 target (Gemma4ForConditionalGeneration, Gemma4ForCausalLM, "
        "Gemma4UnifiedForConditionalGeneration) whose config.json sets `num_kv_shared_layers` above 0, with "
        "`--attention-backend aiter` (or aiter as the verify phase's backend), where the target verify takes the "
        "legacy extend kernel: always in 0.5.11; from 0.5.12 with `SGLANG_AITER_UNIFIED_VERIFY=0`, or "
        "`--disable-hybrid-swa-memory` without `SGLANG_USE_AITER_UNIFIED_ATTN=1`. 0.5.13-0.5.19 refuse aiter for "
        "Gemma 4 at start (AB326). A tree (topk above 1) does not matter: the target's aiter backend keeps topk 1.",
        why="Gemma 4's last `num_kv_shared_layers` layers reuse an earlier layer's cache and call attention with "
        "k = v = None (0.5.11 models/gemma4_causal.py:344-347; 0.5.20 :439-492). aiter's legacy non-MLA "
        "target-verify call hands k and v to the triton `extend_attention_fwd` as `k.contiguous()` (0.5.11 "
        "layers/attention/aiter_backend.py:2362-2365), an AttributeError on None; 0.5.12's unified verify "
        "(:221-230, :2644-2700) reads K/V from the pool whenever unified attention is on: its `topk == 1` test "
        "reads the backend's own topk, left at the default 1 for the target (:123, 141; attention_registry.py:80), "
        "so a tree takes it too, whatever the ValueError's advice says. 0.5.20 "
        "names the failure: `_reject_target_verify_cross_layer_kv` raises ValueError before the legacy call "
        "(aiter_backend.py:2744-2758, :3343; 0.5.23 :3638, :4251). Gemma 4 accepts aiter in 0.5.11-0.5.12 (no "
        "backend check) and again from 0.5.20 (arg_groups/model_hook.py:546-559). With `num_kv_shared_layers` 0 "
        "(gemma-4-26B-A4B, 31B) no layer passes None.",
        fix="From 0.5.12: leave `SGLANG_AITER_UNIFIED_VERIFY` unset and keep the SWA pool; or drop "
        "`--attention-backend aiter` for SGLang's Gemma 4 default (triton).",
        fix_safety="Unsafe: another verify kernel runs, and keeping the SWA pool changes how KV memory is split.",
    ),
    bad=Example(
        argv=(
            *GEMMA4_E4B_EAGLE3,
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
        ),
        target=GEMMA4_KV_SHARED,
        env={UNIFIED_VERIFY: "0"},
        gpu="MI300X",
        sglang_version="0.5.20",
    ),
    good=Example(
        argv=(
            *GEMMA4_E4B_EAGLE3,
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
        ),
        target=GEMMA4_KV_SHARED,
        gpu="MI300X",
        sglang_version="0.5.20",
    ),
    sources=(
        "sglang 0.5.10.post1: python/sglang/srt/models (no gemma4_causal.py)",
        "sglang 0.5.11: python/sglang/srt/models/gemma4_causal.py:344-347",
        "sglang 0.5.11: python/sglang/srt/layers/attention/aiter_backend.py:2350-2381",
        "sglang 0.5.12: python/sglang/srt/layers/attention/aiter_backend.py:123, 141, 221-230, 2644-2720",
        "sglang 0.5.12: python/sglang/srt/layers/attention/attention_registry.py:77-80",
        "sglang 0.5.19: python/sglang/srt/arg_groups/model_hook.py:482-497 (aiter refused for Gemma 4)",
        "sglang 0.5.20: python/sglang/srt/layers/attention/aiter_backend.py:401-406, 2744-2758, 3343",
        "sglang 0.5.20: python/sglang/srt/arg_groups/model_hook.py:546-559",
        "sglang 0.5.23: python/sglang/srt/layers/attention/aiter_backend.py:548-553, 3638-3652, 4251",
    ),
    sglang_versions=">=0.5.11",
    log_signatures=(
        r"aiter target_verify does not support cross-layer KV sharing \(k/v are None\)",
    ),
)
