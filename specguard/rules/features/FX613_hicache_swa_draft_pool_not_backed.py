"""FX613 hicache-swa-draft-pool-not-backed."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, ModelFacts, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.draft_model._common import draft_config
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import HYBRID_SWA_HICACHE_UNIFIED, Change

HICACHE = "--enable-hierarchical-cache"
NO_HYBRID_SWA = "--disable-hybrid-swa-memory"
UNIFIED_TREE_ENV = "SGLANG_ENABLE_UNIFIED_RADIX_TREE"
MIMO_V2_TARGETS = frozenset({"MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM"})
# Hybrid sliding-window classes (configs/model_config.py is_hybrid_swa_model: 0.5.12 :1660-1680, 0.5.17 :1988-2024)
# whose pools this rule follows. DeepSeek-V4 is FX531's; Step-3.5/3.7 turn hybrid SWA memory off under HiCache
# (0.5.17 arg_groups/overrides.py:1386-1394); Gemma 4, Laguna, Mellum and Inkling are not read here.
HYBRID_SWA_CLASSES = MIMO_V2_TARGETS | frozenset(
    {"MiMoV2MTP", "GptOssForCausalLM", "Llama4ForConditionalGeneration"}
)
# 0.5.18 backs a hybrid-SWA draft up: an MTP draft's SWA pools packed after the target's SWA layers
# (mem_cache/hybrid_cache/hybrid_pool_assembler.py:335-346), any other draft as an SWA sidecar (:1064-1115).
SWA_DRAFT_BACKED = Change(
    "0.5.18",
    "0.5.18 mem_cache/hybrid_cache/hybrid_pool_assembler.py:335-346, 1064-1115 (0.5.17 kv_cache_builder.py:118-126 skips the pool)",
)
# From 0.5.12 SGLANG_ENABLE_UNIFIED_RADIX_TREE=1 builds UnifiedRadixCache with HiCache (0.5.12 managers/scheduler.py:
# 898-917); from 0.5.13 a hybrid SWA target's HiCache does so by default (HYBRID_SWA_HICACHE_UNIFIED).
UNIFIED_TREE_HICACHE = Change("0.5.12", "0.5.12 managers/scheduler.py:898-917")
# From 0.5.14 MiMo-V2's HiCache keeps hybrid SWA memory and requires the unified radix tree (server_args.py:3974-3980);
# 0.5.12 and 0.5.13 turn hybrid SWA memory off for it under HiCache (0.5.13 server_args.py:2283-2293).
MIMO_V2_HICACHE_KEEPS_SWA = Change(
    "0.5.14",
    "0.5.14 server_args.py:3974-3980 (0.5.13 :2283-2293 disables hybrid SWA memory)",
)
# What SGLang logs when it leaves the draft pool out (0.5.17 mem_cache/kv_cache_builder.py:118-126):
#   Draft pool type SWAKVPool not supported for HiCache, skipping.


def is_hybrid_swa(facts: ModelFacts | None) -> bool:
    return facts is not None and (
        facts.architecture in HYBRID_SWA_CLASSES or bool(facts.is_hybrid_swa)
    )


def _hybrid_swa_memory_on(ctx: CheckContext) -> bool:
    """Hybrid SWA memory stays on under HiCache: not turned off by flag, nor by MiMo-V2's HiCache override before 0.5.14
    (the server argument holds for the target's and the draft's ModelConfig alike)."""
    target = ctx.target
    mimo_override = (
        target is not None
        and target.architecture in MIMO_V2_TARGETS
        and not MIMO_V2_HICACHE_KEEPS_SWA.present_in(ctx.version)
    )
    return not ctx.spec.has(NO_HYBRID_SWA) and not mimo_override


def draft_pool_is_swa(ctx: CheckContext) -> bool:
    """Under HiCache the draft runner builds an SWAKVPool: its own config is a hybrid SWA model (the draft's
    ModelConfig.is_hybrid_swa, 0.5.17 configs/model_config.py:693-698, model_runner.py:307) and hybrid SWA memory is
    on."""
    return is_hybrid_swa(draft_config(ctx)) and _hybrid_swa_memory_on(ctx)


def _swa_stack_hicache(ctx: CheckContext) -> bool:
    """HiCache runs on UnifiedRadixCache's hybrid SWA stack for this target and release."""
    target = ctx.target
    if target is None or not is_hybrid_swa(target) or not _hybrid_swa_memory_on(ctx):
        return False
    unified_tree = UNIFIED_TREE_HICACHE.present_in(ctx.version) and ctx.spec.env_flag(
        UNIFIED_TREE_ENV
    )
    if target.architecture in MIMO_V2_TARGETS:
        return unified_tree  # required from 0.5.14: without it the launch is refused at argument time
    return unified_tree or HYBRID_SWA_HICACHE_UNIFIED.present_in(ctx.version)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        not ctx.spec.has(HICACHE)
        or ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or SWA_DRAFT_BACKED.present_in(ctx.version)
    ):
        return
    if not draft_pool_is_swa(ctx) or not _swa_stack_hicache(ctx):
        return
    draft = draft_config(ctx)
    named = (
        "the target's own MTP layers"
        if ctx.drafts_from_target_checkpoint
        else f"the {draft.architecture if draft else 'hybrid SWA'} draft"
    )
    yield RULE.finding(
        f"{ctx.flag(HICACHE)} with {named} as a hybrid sliding-window draft ({ctx.algorithm}) in SGLang "
        f"{ctx.version}: the draft's KV pool is an SWAKVPool, which HiCache does not "
        "back up ('Draft pool type SWAKVPool not supported for HiCache, skipping.'), so when a prefix comes back from "
        "host memory or storage the target's KV is restored but the draft's is not, and the draft reads stale KV: the "
        "accept length falls after every such hit. SGLang 0.5.18 backs the draft's window pools up; upgrade, or serve "
        "without HiCache while speculating",
        flags=(HICACHE,),
    )


_MIMO_V2_FLASH_MTP = (
    "--model-path",
    "XiaomiMiMo/MiMo-V2-Flash",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    HICACHE,
)
_MIMO_V2_FLASH = {
    "architectures": ("MiMoV2FlashForCausalLM",),
    "num_nextn_predict_layers": 1,
}
_UNIFIED_TREE = {UNIFIED_TREE_ENV: "1"}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="FX613",
    category=Category.PERF,
    name="hicache-swa-draft-pool-not-backed",
    summary="HiCache with a hybrid sliding-window draft (MiMo-V2's MTP, a gpt-oss STANDALONE draft) before 0.5.18: "
    "the draft's KV is not backed up, acceptance falls after host hits",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--enable-hierarchical-cache` with EAGLE/NEXTN, EAGLE3 or STANDALONE whose draft model is itself a hybrid "
        "sliding-window model (MiMo-V2's MTP layers, MiMoV2MTP; a gpt-oss or Llama 4 checkpoint as the draft; a draft "
        "config with is_hybrid_swa) on a hybrid sliding-window target whose HiCache runs on UnifiedRadixCache: "
        "gpt-oss and Llama 4 from 0.5.13, MiMo-V2 from 0.5.14 (with the `SGLANG_ENABLE_UNIFIED_RADIX_TREE=1` it "
        "requires), any of them in 0.5.12 with that variable; without `--disable-hybrid-swa-memory`; up to 0.5.17.",
        why="A draft model config that is_hybrid_swa_model names gets its own SWAKVPool (0.5.17 configs/model_config.py:"
        "693-698, 1988-2024; model_runner.py:307). The HiCache draft registration backs up only MHA or MLA draft pools "
        "(a hybrid mamba draft's full pool) and otherwise logs 'Draft pool type %s not supported for HiCache, "
        "skipping.' (0.5.13 mem_cache/kv_cache_builder.py:72-127; 0.5.17 :73-128), so the hybrid SWA stack "
        "(hybrid_pool_assembler.py build_hybrid_swa_stack) moves the target's full and window KV only and a prefix "
        "restored from host memory or L3 leaves the draft's slots stale, the FX081 mechanism. UnifiedRadixCache builds "
        "that stack for a hybrid SWA target's HiCache from 0.5.13 (mem_cache/registry.py:101-104; 0.5.17 :118) and "
        "with SGLANG_ENABLE_UNIFIED_RADIX_TREE=1 in 0.5.12 (managers/scheduler.py:898-917); 0.5.11's HiRadixCache "
        "refuses SWA pools ('HiRadixCache only supports MHA, MLA, and NSA (DSA) models', hiradix_cache.py:96). "
        "MiMo-V2 turns hybrid SWA memory off under HiCache in 0.5.12-0.5.13 (0.5.13 server_args.py:2283-2293) and "
        "from 0.5.14 keeps it and requires the unified tree (0.5.14 server_args.py:3974-3980; 0.5.17 :5413-5419). "
        "0.5.18 packs an MTP draft's window pools after the target's (hybrid_pool_assembler.py:335-346, packing "
        "chosen by speculative/base_spec_worker.py:38-54) and gives any other draft an SWA sidecar (:1064-1115).",
        fix="Upgrade to 0.5.18 or later, or serve without HiCache while speculating.",
        fix_safety="No automatic fix: dropping HiCache changes cache capacity and TTFT.",
    ),
    bad=Example(
        argv=_MIMO_V2_FLASH_MTP,
        target=_MIMO_V2_FLASH,
        env=_UNIFIED_TREE,
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=_MIMO_V2_FLASH_MTP,
        target=_MIMO_V2_FLASH,
        env=_UNIFIED_TREE,
        sglang_version="0.5.18",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/mem_cache/hiradix_cache.py:96",
        "sglang 0.5.12: python/sglang/srt/managers/scheduler.py:898-917,1005-1048",
        (
            "sglang 0.5.13: python/sglang/srt/mem_cache/registry.py:101-104; mem_cache/kv_cache_builder.py:72-127; "
            "server_args.py:2283-2293"
        ),
        "sglang 0.5.14: python/sglang/srt/server_args.py:3974-3980",
        "sglang 0.5.17: python/sglang/srt/mem_cache/kv_cache_builder.py:73-128; configs/model_config.py:693-698,1988-2024",
        (
            "sglang 0.5.18: python/sglang/srt/mem_cache/hybrid_cache/hybrid_pool_assembler.py:335-346,1064-1115; "
            "speculative/base_spec_worker.py:38-54"
        ),
    ),
    sglang_versions=">=0.5.12,<=0.5.17",
    log_signatures=(r"Draft pool type SWAKVPool not supported for HiCache, skipping",),
)
