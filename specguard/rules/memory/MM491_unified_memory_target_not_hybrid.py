"""MM491 unified-memory-target-not-hybrid."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3_CHAIN
from specguard.rules.memory._unified_memory import (
    TREE_CAPABLE,
    UNIFIED,
    allowed_algorithms,
)
from specguard.sglang_facts.architectures import DSV4_ARCHITECTURES
from specguard.sglang_facts.changes import Change

# From 0.5.22 an EAGLE/EAGLE3 launch is refused at argument time already (kv_cache_hook.py:605-611).
EAGLE_TARGET_ASSERT = Change("0.5.22", "0.5.22 arg_groups/kv_cache_hook.py:605-611")
# Full-attention architectures SGLang builds neither hybrid pool for: none is on is_hybrid_swa_model's list
# (0.5.18 configs/model_config.py:2050-2090; 0.5.22 :2536-2575), and none has a config class mambaish_config
# accepts (0.5.22 configs/hybrid_arch.py:52-155). A config.json may still opt in with is_hybrid_swa.
FULL_ATTENTION_ARCHITECTURES = frozenset(
    {
        "LlamaForCausalLM",
        "MistralForCausalLM",
        "Qwen2ForCausalLM",
        "Qwen2MoeForCausalLM",
        "Qwen3ForCausalLM",
        "Qwen3MoeForCausalLM",
        "DeepseekV2ForCausalLM",
        "DeepseekV3ForCausalLM",
    }
)
# 0.5.20 sizes a draft over the unified hybrid-SWA pool's virtual ids (kv_cache_configurator.py:494-530); 0.5.18-0.5.19
# refuse speculation on that pool when the draft's pools are built (0.5.18 :444-450, 0.5.19 :490-495).
SWA_POOL_DRAFT_SIZING = Change(
    "0.5.20", "0.5.20 mem_cache/kv_cache_configurator.py:494-530"
)
# Architectures on is_hybrid_swa_model's list (0.5.18 configs/model_config.py:2050-2076; 0.5.19 :2118-2140 with SWA_SINK_ARCHS
# :54-60) that carry no mamba state, so they get the unified hybrid-SWA pool (Laguna, whose window is a config fact, left out).
SLIDING_WINDOW_ONLY_ARCHITECTURES = frozenset(
    {
        "GptOssForCausalLM",
        "Llama4ForConditionalGeneration",
        "MiMoV2ForCausalLM",
        "MiMoV2FlashForCausalLM",
        "Step3p5ForCausalLM",
        "Gemma4ForCausalLM",
        "Gemma4ForConditionalGeneration",
        "MellumForCausalLM",
    }
)
# What SGLang prints: at pool init (0.5.18 mem_cache/kv_cache_configurator.py:420-426; 0.5.23 :637-643)
#   "--enable-unified-memory only supports hybrid Mamba and hybrid sliding-window-attention models (DeepSeek-V4
#    excluded); the current model (['LlamaForCausalLM']) is neither, so the unified memory pool cannot be built."
# and for EAGLE/EAGLE3 from 0.5.22 at argument time (arg_groups/kv_cache_hook.py:607-611)
#   "--enable-unified-memory + EAGLE/EAGLE3 requires a unified target (hybrid-SWA or a mamba hybrid)"
# and 0.5.18-0.5.19 on a hybrid-SWA target, when the draft's pools are built:
#   "Speculative decoding with --enable-unified-memory is only supported for hybrid-Mamba targets; the unified hybrid-SWA pool's draft sizing (virtual-id space) is not wired yet."


def refused_target(ctx: CheckContext) -> str | None:
    """Why the unified pool cannot be built for this target, or None (hybrid, or not known)."""
    target = ctx.target
    architecture = target.architecture if target is not None else None
    if target is None or architecture is None:
        return None
    if architecture in DSV4_ARCHITECTURES:
        return f"{architecture} is hybrid sliding-window, but DeepSeek-V4 is excluded"
    if architecture in FULL_ATTENTION_ARCHITECTURES and not target.is_hybrid_swa:
        return f"{architecture} is neither a mamba hybrid nor a hybrid sliding-window model"
    if (
        architecture in SLIDING_WINDOW_ONLY_ARCHITECTURES
        and not SWA_POOL_DRAFT_SIZING.present_in(ctx.version)
    ):
        return f"{architecture} gets the hybrid sliding-window pool, whose draft sizing is not wired before 0.5.20"
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or not ctx.spec.has(UNIFIED)
        or ctx.algorithm not in allowed_algorithms(ctx.version)
    ):
        return
    reason = refused_target(ctx)
    if reason is None:
        return
    swa_draft = (
        ctx.target is not None
        and ctx.target.architecture in SLIDING_WINDOW_ONLY_ARCHITECTURES
    )
    at_args = (
        EAGLE_TARGET_ASSERT.present_in(ctx.version)
        and ctx.algorithm in TREE_CAPABLE
        and ctx.target is not None
        and ctx.target.architecture not in DSV4_ARCHITECTURES
    )
    when = (
        "building the draft's pools raises 'ValueError: Speculative decoding with --enable-unified-memory is only "
        "supported for hybrid-Mamba targets' after the weights load"
        if swa_draft
        else "the assertion '--enable-unified-memory + EAGLE/EAGLE3 requires a unified target (hybrid-SWA or a mamba "
        "hybrid)' fails at argument time"
        if at_args
        else "building the memory pools raises 'ValueError: --enable-unified-memory only supports hybrid Mamba and "
        "hybrid sliding-window-attention models (DeepSeek-V4 excluded)' after the weights load"
    )
    yield RULE.finding(
        f"{ctx.flag(UNIFIED)} with {ctx.algorithm} in SGLang {ctx.version}: the target {reason}, and the unified "
        f"pool cannot serve this launch: {when}. Drop {ctx.flag(UNIFIED)}",
        flags=(UNIFIED, "--model-path"),
        fix=fix_of(
            f"drop {UNIFIED}", Applicability.UNSAFE, Edit(name=UNIFIED, value=None)
        ),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="MM491",
    category=Category.START,
    name="unified-memory-target-not-hybrid",
    summary="--enable-unified-memory with speculation on a full-attention or DeepSeek-V4 target (0.5.18+), or a "
    "sliding-window target (0.5.18-0.5.19), fails at start",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--enable-unified-memory` with a speculative algorithm the release admits (DSPARK from 0.5.18; EAGLE, "
        "EAGLE3 and DFLASH from 0.5.22) on a DeepSeek-V4 target, or on a full-attention target (Llama, Mistral, "
        "Qwen2/Qwen3 dense and MoE, DeepSeek-V2/V3) whose config.json does not opt in with `is_hybrid_swa`; in 0.5.18-0.5.19 "
        "also on a sliding-window target without mamba state (GPT-OSS, Llama 4, MiMo-V2, Step-3.5, Gemma 4, Mellum).",
        why="The unified pool replaces the hybrid pools only: the target worker's `_init_pools` builds it for a mamba "
        "hybrid or a hybrid sliding-window model that is not DeepSeek-V4 and otherwise raises (0.5.15 "
        "model_runner_kv_cache_mixin.py:510-529; 0.5.18 mem_cache/kv_cache_configurator.py:386-426; 0.5.22 :555-603; "
        "0.5.23 :595-643). From 0.5.22 `handle_unified_memory_pool` refuses EAGLE/EAGLE3 on such a target at argument "
        "time (kv_cache_hook.py:605-611; 0.5.23 :608-614). Before 0.5.18 the flag refuses every speculative "
        "algorithm first (MM174). 0.5.18-0.5.19 build a hybrid-SWA target the unified SWA pool but refuse a draft on it "
        "(kv_cache_configurator.py 0.5.18 :444-450, 0.5.19 :490-495); 0.5.20 sizes the draft over its virtual ids "
        "(:494-530). Other targets are not judged here.",
        fix="Drop `--enable-unified-memory`.",
        fix_safety="Unsafe: it changes the KV pool layout.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, UNIFIED),
        target={"architectures": ("LlamaForCausalLM",)},
        sglang_version="0.5.22",
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE3_CHAIN,
        target={"architectures": ("LlamaForCausalLM",)},
        sglang_version="0.5.22",
    ),
    sources=(
        "sglang 0.5.17: python/sglang/srt/server_args.py:7893-7896 (no speculation with unified memory)",
        "sglang 0.5.18: python/sglang/srt/mem_cache/kv_cache_configurator.py:386-426, 444-450; configs/model_config.py:2050-2090",
        "sglang 0.5.19: python/sglang/srt/mem_cache/kv_cache_configurator.py:490-495; configs/model_config.py:54-60, 2118-2140",
        "sglang 0.5.20: python/sglang/srt/mem_cache/kv_cache_configurator.py:494-530 (the hybrid-SWA draft sized)",
        "sglang 0.5.22: python/sglang/srt/mem_cache/kv_cache_configurator.py:555-603",
        "sglang 0.5.22: python/sglang/srt/arg_groups/kv_cache_hook.py:605-611; configs/hybrid_arch.py:52-155",
        "sglang 0.5.23: python/sglang/srt/mem_cache/kv_cache_configurator.py:595-643; arg_groups/kv_cache_hook.py:608-614",
    ),
    sglang_versions=">=0.5.18",
    log_signatures=(
        r"--enable-unified-memory only supports hybrid Mamba and hybrid sliding-window-attention models",
        r"--enable-unified-memory \+ EAGLE/EAGLE3 requires a unified target",
        r"Speculative decoding with --enable-unified-memory is only supported for hybrid-Mamba targets",
    ),
)
