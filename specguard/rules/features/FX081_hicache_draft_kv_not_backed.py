"""FX081 hicache-draft-kv-not-backed."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.rules.features.FX613_hicache_swa_draft_pool_not_backed import (
    draft_pool_is_swa,
)
from specguard.rules.hybrid._hybrid import MAMBA_RADIX_ARCHITECTURES
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.architectures import DSA_ARCHITECTURES, DSV4_ARCHITECTURES
from specguard.sglang_facts.changes import (
    HICACHE_DRAFT_KV_BACKED,
    HYBRID_SWA_HICACHE_UNIFIED,
    Change,
)

HICACHE = "--enable-hierarchical-cache"
UNIFIED_TREE_ENV = "SGLANG_ENABLE_UNIFIED_RADIX_TREE"
# 0.5.11 pairs the draft's KV pool with the plain HiCacheController (cache_controller.py:707-730, 783-810,
# 843-852), but HybridCacheController, which backs the hybrid stacks up, overrides start_writing and start_loading
# and moves only the target's pools (0.5.11 hybrid_cache/hybrid_cache_controller.py:262, 328; 0.5.13 :393, 465).
# 0.5.14 moves the draft there too.
HYBRID_HICACHE_DRAFT_KV_BACKED = Change(
    "0.5.14",
    "0.5.14 mem_cache/hybrid_cache/hybrid_cache_controller.py:423-429, 504-515 (0.5.13 :393, 465 move no draft)",
)
# From 0.5.12 SGLANG_ENABLE_UNIFIED_RADIX_TREE=1 builds UnifiedRadixCache, whose HiCache is a hybrid stack for every
# target (0.5.12 managers/scheduler.py:898-917, hybrid_pool_assembler.py:639-900); 0.5.11 tests HiCache first
# (scheduler.py:885-903).
UNIFIED_TREE_BEFORE_HICACHE = Change(
    "0.5.12",
    "0.5.12 managers/scheduler.py:898-917 (0.5.11 :885-903 picks HiRadixCache/HiMambaRadixCache first)",
)
# The 0.5.13 hybrid sliding-window targets (configs/model_config.py:1679-1704) whose drafts keep an MHA pool of their
# own. DeepSeek-V4 is FX531's; MiMo-V2 and Step-3.5 turn hybrid SWA memory off under HiCache (server_args.py:2284-2320)
# and Gemma 4's assistant drafts and Step-3.7's MTP are not read here.
HYBRID_SWA_TARGETS = frozenset(
    {"GptOssForCausalLM", "Llama4ForConditionalGeneration", "LagunaForCausalLM"}
)
# The hybrid SWA classes whose HiCache turns hybrid SWA memory off in 0.5.13 (server_args.py:2280-2320), so a config's
# is_hybrid_swa does not put them on the hybrid stack (configs/model_config.py:504-509).
HICACHE_TURNS_SWA_OFF = frozenset(
    {"MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM", "Step3p5ForCausalLM", "Step3p7ForConditionalGeneration"}
)


def _hybrid_stack(ctx: CheckContext) -> str | None:
    """Why this launch's HiCache runs on HybridCacheController (0.5.11-0.5.13), or None."""
    target = ctx.target
    arch = target.architecture if target is not None else None
    if arch in DSA_ARCHITECTURES or arch in DSV4_ARCHITECTURES:
        return None  # FX083 (DSA) and FX531 (DeepSeek-V4) speak of their drafts' state
    if draft_pool_is_swa(ctx):
        return None  # a hybrid sliding-window draft pool is not even registered: FX613
    if UNIFIED_TREE_BEFORE_HICACHE.present_in(ctx.version) and ctx.spec.env_flag(
        UNIFIED_TREE_ENV
    ):
        return f"{UNIFIED_TREE_ENV}=1 builds UnifiedRadixCache, whose HiCache"
    if arch in MAMBA_RADIX_ARCHITECTURES:
        return f"HiCache on the hybrid mamba target {arch}"
    swa = target is not None and (
        arch in HYBRID_SWA_TARGETS
        or (bool(target.is_hybrid_swa) and arch not in HICACHE_TURNS_SWA_OFF)
    )
    if (
        swa
        and HYBRID_SWA_HICACHE_UNIFIED.present_in(ctx.version)
        and not ctx.spec.has("--disable-hybrid-swa-memory")
    ):
        return f"HiCache on the hybrid sliding-window target {arch}"
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.spec.has(HICACHE) or ctx.algorithm not in EAGLE_WORKER_ALGORITHMS:
        return
    if not HICACHE_DRAFT_KV_BACKED.present_in(ctx.version):
        yield RULE.finding(
            f"{ctx.flag(HICACHE)} with {ctx.algorithm} in SGLang {ctx.version}: HiCache backs up and loads back "
            "only the target's KV, so after a prefix comes back from host memory or storage the draft reads KV "
            "slots that hold other requests' data and the accept length falls (fixed in 0.5.11, sglang#21125)",
            flags=(HICACHE,),
        )
        return
    stack = _hybrid_stack(ctx)
    if stack is None or HYBRID_HICACHE_DRAFT_KV_BACKED.present_in(ctx.version):
        return
    yield RULE.finding(
        f"{ctx.flag(HICACHE)} with {ctx.algorithm} in SGLang {ctx.version}: {stack} runs on the hybrid cache "
        "controller, which backs up and loads back only the target's pools; the draft's own KV is registered but "
        "never moved, so after a prefix comes back from host memory or storage the draft reads stale KV and the "
        "accept length falls. SGLang 0.5.14 moves the draft's KV there too; upgrade, or serve without HiCache while "
        "speculating",
        flags=(HICACHE,),
    )


RULE = Rule(
    check=check,
    code="FX081",
    category=Category.PERF,
    name="hicache-draft-kv-not-backed",
    summary="HiCache with a draft that keeps its own KV cache, in a release that does not back that cache up "
    "(every target before 0.5.11; hybrid cache stacks to 0.5.13)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--enable-hierarchical-cache` with EAGLE/NEXTN, EAGLE3 or STANDALONE before 0.5.11; in 0.5.11 to 0.5.13 "
        "when HiCache runs on the hybrid cache controller: a hybrid mamba target (Qwen3-Next, Qwen3.5, Nemotron-H, "
        "Falcon-H1, ...), a hybrid sliding-window target (gpt-oss, Llama 4, Laguna, or a config with is_hybrid_swa "
        "other than MiMo-V2 and Step-3.5/3.7, whose HiCache turns hybrid SWA memory off) "
        "in 0.5.13 without `--disable-hybrid-swa-memory`, or any target with `SGLANG_ENABLE_UNIFIED_RADIX_TREE=1` "
        "in 0.5.12-0.5.13. DSA targets are FX083's and DeepSeek-V4 FX531's.",
        why="Draft and target share `req_to_token_pool` but keep separate KV pools. HiCache moved only the "
        "target pool to L2/L3 and back, so on a host or storage hit the shared index table points the draft at "
        "stale KV ('the draft model ends up drafting based on a random KV cache', sglang#17338) and acceptance "
        "drops; the draft cannot re-prefill because the target's hidden states are skipped on load-back "
        "(sglang#21125, which pairs the two pools; first shipped in 0.5.11: managers/scheduler.py:441, 985-1030; "
        "cache_controller.py:707-730, 783-810, 843-852). The pairing lives in HiCacheController's start_writing and "
        "start_loading; HybridCacheController subclasses it, inherits set_draft_kv_pool, but overrides both without "
        "the draft (0.5.11 hybrid_cache/hybrid_cache_controller.py:149, 262, 328; 0.5.13 :156, 393, 465). It backs "
        "up every HiMambaRadixCache (0.5.11 scheduler.py:885-902) and UnifiedRadixCache (0.5.12 scheduler.py:898-917 "
        "with SGLANG_ENABLE_UNIFIED_RADIX_TREE=1; 0.5.13 mem_cache/registry.py:98-104 for every hybrid SWA or SSM "
        "target, hybrid_pool_assembler.py:1085-1121), while the draft's MHA or MLA pool (a hybrid mamba draft's full "
        "pool) is registered on it all the same (0.5.13 mem_cache/kv_cache_builder.py:72-127). 0.5.14 moves "
        "`mem_pool_device_draft` in both paths (hybrid_cache_controller.py:423-429, 504-515).",
        fix="Upgrade to 0.5.11 or later (0.5.14 or later on hybrid targets), or serve without HiCache while speculating.",
        fix_safety="No automatic fix: dropping HiCache changes cache capacity and TTFT.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, HICACHE),
        sglang_version="0.5.9",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, HICACHE),
        sglang_version="0.5.11",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/16964",
        "https://github.com/sgl-project/sglang/pull/17338",
        "https://github.com/sgl-project/sglang/pull/21125",
        "sglang 0.5.11: python/sglang/srt/managers/scheduler.py:441,885-917,985-1030",
        "sglang 0.5.11: python/sglang/srt/managers/cache_controller.py:707-730,783-810,843-852",
        "sglang 0.5.11: python/sglang/srt/mem_cache/hybrid_cache/hybrid_cache_controller.py:149,262,328",
        "sglang 0.5.12: python/sglang/srt/managers/scheduler.py:898-917",
        "sglang 0.5.13: python/sglang/srt/mem_cache/registry.py:98-104; mem_cache/kv_cache_builder.py:72-127",
        "sglang 0.5.13: python/sglang/srt/mem_cache/hybrid_cache/hybrid_cache_controller.py:156,393,465",
        "sglang 0.5.14: python/sglang/srt/mem_cache/hybrid_cache/hybrid_cache_controller.py:423-429,504-515",
    ),
    sglang_versions="<=0.5.13",
)
