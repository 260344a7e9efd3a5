"""FX531 hicache-dsv4-mtp-draft-state-not-backed."""

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
from specguard.rules.draft_model._common import draft_config
from specguard.sglang_facts.architectures import DSV4_ARCHITECTURES
from specguard.sglang_facts.changes import HYBRID_SWA_HICACHE_UNIFIED

HICACHE = "--enable-hierarchical-cache"
# ROCm's unified KV layout for DeepSeek-V4 keeps the sliding-window ring on the device and never offloads it, for the
# target as for the draft (0.5.18 mem_cache/hybrid_cache/hybrid_pool_assembler.py:440-444); the rule stays out of it.
UNIFIED_KV_ENV = "SGLANG_HACK_FLASHMLA_BACKEND"
UNIFIED_KV = "unified_kv_triton"
# Before HYBRID_SWA_HICACHE_UNIFIED the DeepSeek-V4 HiCache stack needs the unified radix tree; without it SGLang
# builds HiRadixCache, which refuses the DeepSeek-V4 pool at start-up (another failure, not this one).
UNIFIED_TREE_ENV = "SGLANG_ENABLE_UNIFIED_RADIX_TREE"

# What SGLang logs when it leaves the draft pool out (0.5.17 mem_cache/kv_cache_builder.py:121-126; 0.5.12
# managers/scheduler.py:1042-1046): "Draft pool type DeepSeekV4TokenToKVPool not supported for HiCache, skipping."


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.spec.has(HICACHE) or ctx.algorithm != "EAGLE" or ctx.target is None:
        return
    draft = draft_config(ctx)
    if (
        ctx.target.architecture not in DSV4_ARCHITECTURES
        or draft is None
        or draft.architecture not in DSV4_ARCHITECTURES
    ):
        return  # only a DeepSeek-V4 NextN draft gets the DeepSeek-V4 KV pool
    if not HYBRID_SWA_HICACHE_UNIFIED.present_in(ctx.version) and not ctx.spec.env_flag(
        UNIFIED_TREE_ENV
    ):
        return
    if ctx.spec.has("--disable-hybrid-swa-memory"):
        return  # not a hybrid SWA model then (0.5.13 configs/model_config.py:506-509): another HiCache path, not read
    gpu = ctx.env.gpu
    if (
        gpu is not None
        and gpu.platform == "rocm"
        and ctx.spec.env_value(UNIFIED_KV_ENV) == UNIFIED_KV
    ):
        return
    yield RULE.finding(
        f"{ctx.flag(HICACHE)} with the DeepSeek-V4 MTP draft ({ctx.target.architecture}, EAGLE/NEXTN) in SGLang "
        f"{ctx.version}: HiCache backs up only MHA or MLA draft pools and logs 'Draft pool type DeepSeekV4TokenToKVPool "
        "not supported for HiCache, skipping.', so when a prefix comes back from host memory or storage the target's "
        "sliding-window KV is restored but the draft's is not, and the draft reads stale KV: the accept length falls "
        "after every such hit. SGLang 0.5.18 packs the draft's window layers into the target's host pool; upgrade, or "
        "serve without HiCache while speculating",
        flags=(HICACHE,),
    )


_DSV4_FLASH_MTP = (
    "--model-path",
    "deepseek-ai/DeepSeek-V4-Flash",
    "--tp",
    "8",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    HICACHE,
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="FX531",
    category=Category.PERF,
    name="hicache-dsv4-mtp-draft-state-not-backed",
    summary="HiCache with DeepSeek-V4's MTP draft before 0.5.18: the draft's sliding-window KV is not backed up, acceptance falls after host hits",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--enable-hierarchical-cache` with EAGLE/NEXTN on a DeepSeek-V4 target (config.json `architectures[0]` "
        "`DeepseekV4ForCausalLM`) whose draft is its NextN layer, SGLang 0.5.12 to 0.5.17 (not ROCm's unified KV "
        "layout); in 0.5.12 and 0.5.12.post1 only with `SGLANG_ENABLE_UNIFIED_RADIX_TREE=1`, without which HiCache "
        "builds HiRadixCache and start-up fails on the DeepSeek-V4 pool first.",
        why="Draft and target share the request-to-token table but keep separate KV pools; the DeepSeek-V4 NextN draft "
        "runs on a `DeepSeekV4TokenToKVPool` (the DeepSeek-V4 attention backend takes `model_runner.token_to_kv_pool` "
        "as one, 0.5.17 layers/attention/deepseek_v4_backend.py:520), which is neither MHA nor MLA. The draft "
        "registration backs up only those two and otherwise logs 'Draft pool type %s not supported for HiCache, "
        "skipping.' (0.5.12 managers/scheduler.py:1005-1048; 0.5.17 mem_cache/kv_cache_builder.py:73-128). The "
        "DeepSeek-V4 HiCache stack (0.5.12 mem_cache/hybrid_cache/hybrid_pool_assembler.py:322; 0.5.17 :316-391, "
        ":876) then moves the target's window KV only, so a prefix restored from host memory or L3 leaves the "
        "draft's window slots stale, the mechanism FX081 and FX083 describe. In 0.5.12 and 0.5.12.post1 that stack is built by UnifiedRadixCache "
        "only with `SGLANG_ENABLE_UNIFIED_RADIX_TREE=1` (managers/scheduler.py:898-930; otherwise HiRadixCache raises "
        "'HiRadixCache only supports MHA, MLA, and NSA (DSA) models', hiradix_cache.py:97-100); from 0.5.13 a hybrid "
        "SWA model's HiCache builds it by default (mem_cache/registry.py:101-104). 0.5.18 appends the draft's "
        "uncompressed window layers to the target's host pool (hybrid_pool_assembler.py:458-468, 511-518).",
        fix="Upgrade to 0.5.18 or later, or serve without HiCache while speculating.",
        fix_safety="No automatic fix: dropping HiCache changes cache capacity and TTFT.",
    ),
    bad=Example(
        argv=_DSV4_FLASH_MTP,
        target={
            "architectures": ("DeepseekV4ForCausalLM",),
            "num_nextn_predict_layers": 1,
        },
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=_DSV4_FLASH_MTP,
        target={
            "architectures": ("DeepseekV4ForCausalLM",),
            "num_nextn_predict_layers": 1,
        },
        sglang_version="0.5.18",
    ),
    sources=(
        "sglang 0.5.12: python/sglang/srt/managers/scheduler.py:898-930,987-1048; mem_cache/hiradix_cache.py:97-100",
        "sglang 0.5.13: python/sglang/srt/mem_cache/registry.py:101-104",
        "sglang 0.5.12: python/sglang/srt/mem_cache/hybrid_cache/hybrid_pool_assembler.py:322",
        "sglang 0.5.17: python/sglang/srt/mem_cache/kv_cache_builder.py:73-128",
        "sglang 0.5.17: python/sglang/srt/layers/attention/deepseek_v4_backend.py:520",
        "sglang 0.5.17: python/sglang/srt/mem_cache/hybrid_cache/hybrid_pool_assembler.py:316-391, 850-900",
        "sglang 0.5.18: python/sglang/srt/mem_cache/hybrid_cache/hybrid_pool_assembler.py:440-468, 511-518",
    ),
    sglang_versions=">=0.5.12,<=0.5.17",
    log_signatures=(
        r"Draft pool type DeepSeekV4TokenToKVPool not supported for HiCache, skipping",
    ),
)
