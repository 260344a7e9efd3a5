"""HY350 draft-kv-pool-sized-before-swa-split."""

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
from specguard.rules.spec_params._shared import float_flag
from specguard.sglang_facts.algorithms import (
    EAGLE_HEAD_ALGORITHMS,
    EAGLE_WORKER_ALGORITHMS,
)

LLAMA4 = "Llama4ForConditionalGeneration"
# The architectures 0.5.8 and 0.5.8.post1 serve from the hybrid SWA pool by default (configs/model_config.py:1220-1228).
# A draft of one of them splits its own pool the same way, so only a draft outside this set is short.
HYBRID_SWA_ARCHITECTURES = frozenset(
    {LLAMA4, "GptOssForCausalLM", "MiMoV2FlashForCausalLM", "MiMoV2MTP"}
)
# Llama 4 keeps full attention on every fourth layer (get_hybrid_layer_ids, 0.5.8 model_config.py:1236-1242).
LLAMA4_SWA_LAYER_SHARE = 0.75
DEFAULT_SWA_FULL_TOKENS_RATIO = 0.8  # 0.5.8 server_args.py:325
RATIO = "--swa-full-tokens-ratio"
NO_HYBRID = "--disable-hybrid-swa-memory"


def draft_splits_its_pool_too(ctx: CheckContext) -> bool | None:
    """Whether the draft is a hybrid SWA model itself; None when unknown."""
    if ctx.draft is not None and ctx.draft.architecture is not None:
        return ctx.draft.architecture in HYBRID_SWA_ARCHITECTURES
    # An EAGLE/EAGLE3 draft is a head class (LlamaForCausalLMEagle3 and the like), never a hybrid SWA model.
    return False if ctx.algorithm in EAGLE_HEAD_ALGORITHMS else None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or ctx.target is None
        or ctx.target.architecture != LLAMA4
        or ctx.spec.has(NO_HYBRID)
        or draft_splits_its_pool_too(ctx) is not False
    ):
        return
    given = float_flag(ctx, RATIO)
    ratio = DEFAULT_SWA_FULL_TOKENS_RATIO if given is None else given
    # At 1.0 the full pool equals the unsplit size; SGLang refuses values outside (0, 1].
    if not 0 < ratio < 1:
        return
    # The draft pool holds the unsplit size; the target's full pool that size / (ratio * swa share + full share).
    threshold = ratio * LLAMA4_SWA_LAYER_SHARE + (1 - LLAMA4_SWA_LAYER_SHARE)
    yield RULE.finding(
        f"{ctx.algorithm} on {LLAMA4} in SGLang {ctx.version}: the target serves from the hybrid SWA pool, but "
        "hands its draft the KV size from before the SWA/full split, and the full pool the target allocates "
        f"from is larger (with {RATIO} {ratio:g} the draft holds only {threshold:.0%} of it). Once the KV cache "
        "fills past that share the draft writes its KV past the end of its pool (an out-of-bounds store: an "
        f"illegal memory access or corrupted KV). Add {ctx.flag(NO_HYBRID)}, or upgrade to SGLang 0.5.9",
        flags=("--speculative-algorithm", *(f for f in (RATIO,) if ctx.spec.has(f))),
        fix=fix_of(
            f"add {NO_HYBRID}", Applicability.UNSAFE, Edit(name=NO_HYBRID, value=True)
        ),
    )


MAVERICK_EAGLE3 = (
    "--model-path",
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "nvidia/Llama-4-Maverick-17B-128E-Eagle3",
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own KV pool sizing
    check=check,
    code="HY350",
    category=Category.CRASH,
    name="draft-kv-pool-sized-before-swa-split",
    summary="a Llama 4 target on the hybrid SWA pool gives its EAGLE/STANDALONE draft a KV pool smaller than the "
    "full pool it indexes (0.5.8-0.5.8.post1)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm` EAGLE, EAGLE3, NEXTN or STANDALONE (a draft model runner with its own KV "
        "pool) on a target whose config.json architectures[0] is Llama4ForConditionalGeneration, in SGLang 0.5.8 "
        "or 0.5.8.post1, without `--disable-hybrid-swa-memory` and with `--swa-full-tokens-ratio` below 1 (0.8 by "
        "default). A draft that is itself a hybrid SWA model splits its pool the same way and is left out; a "
        "STANDALONE draft of unknown architecture keeps the rule quiet.",
        why="0.5.8 serves Llama 4 from the hybrid SWA pool by default (configs/model_config.py:316-319, "
        "is_hybrid_swa_model :1220-1228; 0.5.7 only with --hybrid-kvcache-ratio, model_config.py:1147-1167). The "
        "target sets `draft_runner_cache_size = max_total_num_tokens` (model_runner_kv_cache_mixin.py:296) before "
        "`set_num_tokens_hybrid_swa` (:325) raises its full-attention token count to total / (ratio * swa layers "
        "+ full layers) (:226-240), and its allocator hands out full-pool indices up to that count "
        "(SWATokenToKVPoolAllocator, :607-609). The draft model runner builds an MHATokenToKVPool of the unsplit "
        "size (:292, :567-568) and stores its KV at the same indices, past its end once the cache fills beyond "
        "ratio * 3/4 + 1/4 of the full pool. 0.5.8.post1 is unchanged (:296, :325). 0.5.9 hands the draft the size "
        "after the split, 'otherwise it may cause oob in kv cache store' (model_runner_kv_cache_mixin.py:407-412). "
        "GPT-OSS turns hybrid SWA memory off with speculation in 0.5.8-0.5.8.post1 (server_args.py:1288-1293) and "
        "always before, Gemma 2/3 and OLMo 2 always, and a MiMo-V2-Flash target's MTP draft is a hybrid SWA model "
        "itself; so Llama 4 is the launch that reaches the short pool.",
        fix="Add `--disable-hybrid-swa-memory` (one pool of the unsplit size for both), or upgrade to 0.5.9.",
        fix_safety="Unsafe: without the hybrid pool the sliding-window layers keep full-length KV, so fewer "
        "tokens fit in the cache.",
    ),
    bad=Example(
        argv=MAVERICK_EAGLE3,
        target={"architectures": (LLAMA4,)},
        sglang_version="0.5.8",
    ),
    good=Example(
        argv=(*MAVERICK_EAGLE3, NO_HYBRID),
        target={"architectures": (LLAMA4,)},
        sglang_version="0.5.8",
    ),
    sources=(
        "sglang 0.5.7: python/sglang/srt/configs/model_config.py:306,1147-1167 (Llama 4 hybrid only with --hybrid-kvcache-ratio)",
        "sglang 0.5.8: python/sglang/srt/configs/model_config.py:316-319,1220-1228,1236-1242",
        "sglang 0.5.8: python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py:226-240,290-297,325,567-568,607-609",
        "sglang 0.5.8: python/sglang/srt/server_args.py:325 (swa_full_tokens_ratio 0.8), :1288-1293 (GPT-OSS: 'TODO: fix spec with SWA memory cache')",
        "sglang 0.5.8.post1: python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py:296,325",
        "sglang 0.5.9: python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py:402-412 ('Draft worker should use SWA adjusted max_total_num_tokens for cache size, otherwise it may cause oob in kv cache store')",
    ),
    sglang_versions=">=0.5.8,<=0.5.8.post1",
)
