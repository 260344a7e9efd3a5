"""SP551 multi-layer-eagle-v2-hidden-pool-short-row."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B_EAGLE_CHAIN
from specguard.rules.spec_params.SP401_multi_layer_eagle_v1_worker_unpack_crash import (
    MULTI_LAYER,
    NO_OVERLAP,
    forced_by_model,
)


def runs_v2_multi_layer_worker(ctx: CheckContext) -> bool:
    """Multi-layer EAGLE with the overlap scheduler on, which dispatches to MultiLayerEagleWorkerV2
    (0.5.11 speculative/spec_info.py:77-84)."""
    if forced_by_model(ctx):
        # The override sets SGLANG_ENABLE_SPEC_V2 itself, so only the typed flag turns the overlap scheduler off.
        return not ctx.spec.has(NO_OVERLAP)
    return (
        ctx.spec.has(MULTI_LAYER) and ctx.resolution.disable_overlap_schedule is False
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE" or not runs_v2_multi_layer_worker(ctx):
        return
    steps = ctx.resolution.num_steps
    if steps is None or steps < 2:
        return  # the pool keeps steps - 1 hidden states per request: none for one step
    yield RULE.finding(
        f"multi-layer EAGLE on the overlap scheduler in SGLang {ctx.version}: the draft's req_to_hidden_states_pool "
        "has one row per request slot, but this release numbers the slots 1..size (row 0 is padding), so the "
        "request that gets the last slot, which the first-in-first-out slot list hands out once the server has "
        "served as many requests as it runs at once, reads and writes its draft hidden states one row past the "
        "end of the pool: depending on what lies there, silently corrupted memory or a CUDA illegal memory access. Upgrade to 0.5.12, or add "
        f"{ctx.flag(NO_OVERLAP)} (the V1 multi-layer worker has no such pool)",
        flags=(MULTI_LAYER, NO_OVERLAP),
    )


RULE = Rule(
    check=check,
    code="SP551",
    category=Category.WRONG_OUTPUT,
    name="multi-layer-eagle-v2-hidden-pool-short-row",
    summary="0.5.11: the multi-layer EAGLE SpecV2 draft's hidden-state pool is one request slot short",
    # Info: the kernels certainly touch one row past the pool, but what lies there is the allocator's doing (a free
    # block, a live tensor, or unmapped memory), so the launch may also serve correctly.
    severity=Severity.INFO,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="Multi-layer EAGLE (`--enable-multi-layer-eagle`, or MiMo-V2-Flash / Step-3.5-Flash with EAGLE, "
        "whose model overrides turn it and SpecV2 on) on the overlap scheduler with two or more draft steps, "
        "SGLang 0.5.11.",
        why="0.5.11 gives `ReqToTokenPool` a padding row 0 and hands out slots 1..size (mem_cache/memory_pool.py:"
        "145-152; 0.5.10 :147 used 0..size-1), but `MultiLayerEagleDraftWorker` still sizes "
        "`req_to_hidden_states_pool` with `req_to_token_pool.size` rows (speculative/multi_layer_eagle_worker_v2.py:"
        "150-158) and indexes it by `req_pool_idx` in Triton kernels with no bound "
        "(:434-439, :539-558; multi_layer_eagle_utils.py:178-185). `alloc` takes slots from the front of the free "
        "list and `free` appends them (memory_pool.py:160-190), so slot `size` is reached after `size` requests "
        "in all, and its reads and writes fall one row past the pool. 0.5.12 sizes the pool with "
        "`req_to_token.shape[0]` (multi_layer_eagle_worker_v2.py:157-165). The V1 multi-layer worker "
        "(overlap off) has no such pool. An info: the out-of-bounds row lands in whatever the allocator placed "
        "after the pool, so the effect (none, corrupted draft state, or an illegal memory access) is not known "
        "from the launch.",
        fix="Upgrade to 0.5.12, or add `--disable-overlap-schedule` (the V1 worker).",
        fix_safety="No automatic fix: both change what runs.",
    ),
    bad=Example(argv=(*LLAMA31_8B_EAGLE_CHAIN, MULTI_LAYER), sglang_version="0.5.11"),
    good=Example(argv=(*LLAMA31_8B_EAGLE_CHAIN, MULTI_LAYER), sglang_version="0.5.12"),
    sources=(
        "sglang 0.5.10: python/sglang/srt/mem_cache/memory_pool.py:147 (slots 0..size-1)",
        "sglang 0.5.10: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:144-152",
        "sglang 0.5.11: python/sglang/srt/mem_cache/memory_pool.py:145-152,160-190",
        "sglang 0.5.11: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:150-158,434-439,539-558",
        "sglang 0.5.11: python/sglang/srt/speculative/spec_info.py:77-90 (V2 worker when overlap is on)",
        "sglang 0.5.12: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:157-165 (req_to_token.shape[0])",
    ),
    sglang_versions="==0.5.11",
)
