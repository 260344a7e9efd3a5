"""FX361 external-linker-unpacked-draft-kv."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import DRAFT_CHECKPOINT_ALGORITHMS
from specguard.sglang_facts.architectures import DSA_ARCHITECTURES
from specguard.sglang_facts.changes import Change

LINKER = "--enable-unified-cache-external-linker"
DRAFT_PATH = "speculative_draft_model_path"
# The one DSPARK draft class whose KV packs with the target's (0.5.20 base_spec_worker.py:52-56). A
# DeepSeek-V4 checkpoint is loaded as it when it bundles the DSpark head (configs/model_config.py:795-813), so
# every DeepSeek-V4 class is left to that rewrite.
DSPARK_PACKED_PREFIX = "DeepseekV4ForCausalLM"
# 0.5.23 gives one unpacked draft pool a sidecar plan (speculative/base_spec_worker.py:331-340), but the built-in
# direct linkers (mooncake, mori: mem_cache/unified_cache/linker_factory.py:101-112) refuse a sidecar draft unless the
# target's pool strategy adds a DRAFT entry (mem_cache/hybrid_cache/linker_pool_assembler.py:612-635), which only the
# FULL + MAMBA group does (:593-606). A DSA target's group (:411-440, hybrid_pool_assembler.py:2368-2375) has none:
#   ValueError: The direct external linker does not support this model's draft KV.
# Other targets are not modeled from 0.5.23 (SWA and plain pools refuse the direct linker with or without a draft,
# hybrid_pool_assembler.py:1872-1882; DeepSeek-V4 drafts pack or fuse).
SIDECAR_DRAFT_POOL = Change(
    "0.5.23",
    "0.5.23 speculative/base_spec_worker.py:331-340; linker_pool_assembler.py:612-635",
)
BACKEND = "--unified-cache-external-linker-backend"
DIRECT_LINKERS = ("mooncake", "mori")


def _unpacked_draft(ctx: CheckContext) -> str | None:
    """Why the draft's KV cannot be packed with the target's, or None (packable, or not known)."""
    algorithm = ctx.algorithm
    draft = ctx.draft if ctx.spec.get(DRAFT_PATH) else None
    arch = draft.architecture if draft is not None else None
    if algorithm == "DSPARK":
        if arch is None or arch.startswith(DSPARK_PACKED_PREFIX):
            return None
        return f"the DSPARK draft {arch} is not the DeepSeek-V4 DSpark draft"
    if algorithm not in DRAFT_CHECKPOINT_ALGORITHMS:
        return None  # NGRAM has no draft model runner; UNO and FROZEN_KV_MTP are not modeled here
    if algorithm != "EAGLE":
        return f"{algorithm} drafts are never packed"
    # EAGLE/NEXTN packs when every draft runner's config has num_nextn_predict_layers (MTP layers, which the
    # MTP rewrites of configs/model_config.py set to 1). Only an EAGLE head's config is known to lack it.
    if draft is None or arch is None or "Eagle" not in arch or draft.num_nextn_predict_layers:
        return None
    return f"the EAGLE head {arch} has no num_nextn_predict_layers (it is not an MTP draft)"


def _sidecar_refused(ctx: CheckContext) -> bool:
    """0.5.23+: a DSA target on a built-in direct linker, without the unified pool that may fuse the draft."""
    architecture = ctx.target.architecture if ctx.target is not None else None
    backend = ctx.spec.last_value(BACKEND) or DIRECT_LINKERS[0]
    return (
        architecture in DSA_ARCHITECTURES
        and backend in DIRECT_LINKERS
        and not ctx.spec.has("--enable-unified-memory")
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.spec.has(LINKER):
        return
    reason = _unpacked_draft(ctx)
    if reason is None:
        return
    if SIDECAR_DRAFT_POOL.present_in(ctx.version):
        if not _sidecar_refused(ctx) or ctx.target is None:
            return
        yield RULE.finding(
            f"{ctx.flag(LINKER)} with {ctx.algorithm} on {ctx.target.architecture} in SGLang {ctx.version}: {reason}, "
            "so it goes to the linker as a sidecar pool, which only FULL + MAMBA hybrid targets can carry; the DSA "
            "pool group cannot, and the radix cache raises 'ValueError: The direct external linker does not support "
            f"this model's draft KV.' while the memory pools are set up. Drop {ctx.flag(LINKER)} or draft with the "
            "target's MTP layers (NEXTN)",
            flags=(LINKER, "--speculative-algorithm"),
            fix=fix_of(
                f"drop {LINKER}", Applicability.UNSAFE, Edit(name=LINKER, value=None)
            ),
        )
        return
    yield RULE.finding(
        f"{ctx.flag(LINKER)} with {ctx.algorithm} in SGLang {ctx.version}: {reason}, so its KV cache cannot be "
        "packed with the target's and the speculative worker raises 'NotImplementedError: The external linker only "
        f"supports packed draft KV caches.' while the memory pools are set up. Drop {ctx.flag(LINKER)} or use an MTP "
        "(NEXTN) draft (0.5.23 serves one unpacked draft pool, but only for FULL + MAMBA hybrid targets)",
        flags=(LINKER, "--speculative-algorithm"),
        fix=fix_of(
            f"drop {LINKER}", Applicability.UNSAFE, Edit(name=LINKER, value=None)
        ),
    )


DEEPSEEK_V3_NEXTN = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp",
    "8",
    "--speculative-algorithm",
    "NEXTN",
)

RULE = Rule(
    check=check,
    code="FX361",
    category=Category.START,
    name="external-linker-unpacked-draft-kv",
    summary="--enable-unified-cache-external-linker with a draft whose KV cannot be packed with the target's "
    "fails at start-up (0.5.20 to 0.5.22; on DSA targets 0.5.23+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--enable-unified-cache-external-linker` (new in 0.5.20) with a speculative draft whose KV cache is not "
        "packed with the target's: EAGLE3, STANDALONE or DFLASH (always), EAGLE with an EAGLE head "
        "(a draft config.json architecture named *Eagle without num_nextn_predict_layers), or DSPARK with a draft "
        "that is not a DeepSeek-V4 checkpoint, SGLang 0.5.20 to 0.5.22; from 0.5.23 on a DSA target (DeepSeek-V3.2, "
        "GLM-5) with the mooncake or mori linker, without `--enable-unified-memory`.",
        why="While the scheduler sets up the memory pools it asks the speculative worker for its HiCache draft "
        "plan (0.5.20 managers/scheduler.py:1084). With the external linker on, "
        "`BaseSpecWorker._build_hicache_draft_plan` packs the draft KV only when `_can_pack_hicache_mtp` holds "
        "(EAGLE but not EAGLE3 with num_nextn_predict_layers on every draft runner, or DSPARK with a "
        'DeepseekV4ForCausalLMDSpark draft) and otherwise raises "NotImplementedError: The external linker only '
        'supports packed draft KV caches." (0.5.20 speculative/base_spec_worker.py:41-57, :250-283). Every '
        "algorithm with a draft model runner reaches it (:165-176: NGRAM and FROZEN_KV_MTP have none). Unchanged "
        "in 0.5.21 (:253-285) and 0.5.22 (:260-306). 0.5.23 gives one unpacked draft pool a sidecar plan (:331-340) "
        "and refuses more than one, but the built-in direct linkers (mooncake, mori) then raise \"The direct external "
        "linker does not support this model's draft KV.\" unless the target's pool group adds a DRAFT entry "
        "(mem_cache/hybrid_cache/linker_pool_assembler.py:612-635), which only FULL + MAMBA hybrids do (:593-606); "
        "the DSA group has none (:411-440). 0.5.19 has no such flag. Drafts whose packability depends on SGLang's config "
        "rewrites (an MTP checkpoint, a DeepSeek-V4 DSPARK checkpoint, no draft path) are not checked.",
        fix="Drop the flag, draft with the target's MTP layers (NEXTN), or move to 0.5.23.",
        fix_safety="Unsafe: the prefix cache no longer reaches the external KV store.",
    ),
    bad=Example(argv=(*LLAMA31_8B_EAGLE3, LINKER), sglang_version="0.5.20"),
    good=Example(
        argv=(*DEEPSEEK_V3_NEXTN, LINKER),
        target={
            "architectures": ("DeepseekV3ForCausalLM",),
            "num_nextn_predict_layers": 1,
        },
        sglang_version="0.5.20",
    ),
    sources=(
        "sglang 0.5.19: python/sglang/srt/ (no --enable-unified-cache-external-linker)",
        (
            "sglang 0.5.20: python/sglang/srt/speculative/base_spec_worker.py:41-57,165-176,250-283; "
            "managers/scheduler.py:1084; arg_groups/fields/memory.py:204"
        ),
        "sglang 0.5.22: python/sglang/srt/speculative/base_spec_worker.py:37-53,260-306",
        (
            "sglang 0.5.23: python/sglang/srt/speculative/base_spec_worker.py:331-340 "
            "('The external linker supports one non-packed draft KV pool.')"
        ),
        (
            "sglang 0.5.23: python/sglang/srt/mem_cache/hybrid_cache/linker_pool_assembler.py:411-440,593-606,612-635; "
            "mem_cache/hybrid_cache/hybrid_pool_assembler.py:2368-2375; mem_cache/kv_cache_builder.py:426-431"
        ),
    ),
    sglang_versions=">=0.5.20",
    log_signatures=(
        r"The external linker only supports packed draft KV caches",
        r"The direct external linker does not support this model's draft KV",
    ),
)
