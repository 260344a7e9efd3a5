"""MM492 unified-memory-draft-cannot-fuse."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import is_mla_target
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.memory._unified_memory import (
    TREE_CAPABLE,
    UNIFIED,
    allowed_algorithms,
)
from specguard.rules.memory.MM491_unified_memory_target_not_hybrid import (
    refused_target,
)
from specguard.rules.parallel._parallel import dcp_size
from specguard.sglang_facts.changes import UNIFIED_MEMORY_EAGLE_DFLASH

# The fused draft region, new with EAGLE/EAGLE3/DFLASH on the unified pool (0.5.22
# mem_cache/kv_cache_configurator.py:1018-1148): a draft that cannot fuse is refused on a mamba-hybrid
# host for EAGLE/EAGLE3/DFLASH (:1200-1221) and on a hybrid-SWA host for EAGLE/EAGLE3 (:1223-1242).
# What SGLang prints (one message a line):
#   "--enable-unified-memory + EAGLE/EAGLE3/DFLASH on a mamba-hybrid target needs the draft's KV fused into the target's pages, but this draft cannot fuse (--dcp-size 2 shards the host's rows, but the replicated draft reads every token). A private draft pool would overcommit the KV budget the unified buffer already takes."
#   "--enable-unified-memory + EAGLE/EAGLE3 on a hybrid-SWA target needs the draft's KV fused into the target's pages, but this draft cannot fuse (the draft's attention is MLA; the fused region holds dense MHA K/V rows), and the unified pool's sizing does not price a private draft pool."
# and, for --dcp-size above 1 on an MHA or sliding-window target, at argument time (kv_cache_hook.py:724-744):
#   "--enable-unified-memory with decode context parallelism (--dcp-size > 1) supports MLA models only (e.g. kimi-linear)"
#   "--enable-unified-memory with decode context parallelism (--dcp-size > 1) does not support hybrid sliding-window models"
DRAFT_FUSION = UNIFIED_MEMORY_EAGLE_DFLASH


def _mla_draft(ctx: CheckContext) -> bool:
    """Whether the draft's attention is MLA: its own config.json's, or the target's for MTP layers."""
    if ctx.drafts_from_target_checkpoint:
        return is_mla_target(ctx)
    return ctx.draft is not None and ctx.draft.kv_lora_rank is not None


def _why_not_fused(ctx: CheckContext) -> tuple[str, str] | None:
    """(why the draft cannot fuse, the flag to blame), or None."""
    dcp = dcp_size(ctx)
    if dcp is not None and dcp[0] > 1:
        return (
            (
                f"{ctx.flag(dcp[1])} {dcp[0]} shards the target's rows, but the replicated draft reads every token "
                "(an MHA or sliding-window target is refused at argument time already, since the unified pool "
                "supports decode context parallelism on MLA mamba hybrids only)"
            ),
            dcp[1],
        )
    if ctx.algorithm in TREE_CAPABLE and _mla_draft(ctx):
        return (
            "the draft's attention is MLA, and the fused region holds dense MHA K/V rows",
            "--speculative-algorithm",
        )
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or not ctx.spec.has(UNIFIED)
        or not DRAFT_FUSION.present_in(ctx.version)
        or ctx.algorithm not in allowed_algorithms(ctx.version)
        or (ctx.algorithm not in TREE_CAPABLE and ctx.algorithm != "DFLASH")
        or refused_target(ctx) is not None  # MM491 says why first
    ):
        return
    found = _why_not_fused(ctx)
    if found is None:
        return
    reason, flag = found
    yield RULE.finding(
        f"{ctx.flag(UNIFIED)} with {ctx.algorithm} in SGLang {ctx.version} keeps the draft's KV fused inside the "
        f"target's pages, and this draft cannot fuse: {reason}. Building the memory pools then raises 'ValueError: "
        "--enable-unified-memory + ... needs the draft's KV fused into the target's pages, but this draft cannot "
        f"fuse' after the weights load. Drop {ctx.flag(UNIFIED)}",
        flags=(UNIFIED, flag),
        fix=fix_of(
            f"drop {UNIFIED}", Applicability.UNSAFE, Edit(name=UNIFIED, value=None)
        ),
    )


KIMI_LINEAR_EAGLE3_MLA = (
    "--model-path",
    "moonshotai/Kimi-Linear-48B-A3B-Instruct",
    "--tp",
    "4",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "/ckpt/eagle3-draft",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    "--attention-backend",
    "trtllm_mla",
    "--speculative-draft-attention-backend",
    "triton",
)


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="MM492",
    category=Category.START,
    name="unified-memory-draft-cannot-fuse",
    summary="--enable-unified-memory with an EAGLE/EAGLE3/DFLASH draft that cannot fuse into the target's pages "
    "(--dcp-size above 1, an MLA draft) fails at start (0.5.22+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--enable-unified-memory` with EAGLE, EAGLE3 or DFLASH (admitted from 0.5.22) and `--dcp-size` above 1, "
        "or with EAGLE/EAGLE3 and an MLA draft (an MTP draft from an MLA target's checkpoint, or a draft config.json "
        "with kv_lora_rank).",
        why="From 0.5.22 the unified pool keeps an EAGLE/EAGLE3/DFLASH draft's KV in a region fused into the target's "
        "full-attention pages. `_fused_draft_decision` declines a draft whose attention is not MHA or whose KV is "
        "sharded by DCP (0.5.22 mem_cache/kv_cache_configurator.py:1046-1090; 0.5.23 :1111-1153), and the pool "
        "factories then refuse EAGLE/EAGLE3/DFLASH on a mamba hybrid (:1200-1221; 0.5.23 :1385-1406) and "
        "EAGLE/EAGLE3 on a hybrid-SWA target (:1223-1242; 0.5.23 :1408-1427). The other targets are refused "
        "before that: EAGLE/EAGLE3 needs a hybrid target (kv_cache_hook.py:605-611; MM491), and `--dcp-size` above "
        "1 needs an MLA, non-sliding-window target (`_validate_unified_memory_dcp`, :724-767; 0.5.23 :719-762), "
        "so a DCP launch of these algorithms fails on every target. Before 0.5.22 these algorithms are refused "
        "outright (MM174). The other declines (a draft backend off the MHA rails, HiCache, host-pool retraction, "
        "an explicit draft KV dtype unlike the target's) are AB490's and MM174's or not checked here.",
        fix="Drop `--enable-unified-memory` (or `--dcp-size`, where the target is an MLA mamba hybrid).",
        fix_safety="Unsafe: it changes the KV pool layout.",
    ),
    bad=Example(
        argv=(*KIMI_LINEAR_EAGLE3_MLA, "--dcp-size", "2", UNIFIED),
        sglang_version="0.5.22",
    ),
    good=Example(
        argv=(*KIMI_LINEAR_EAGLE3_MLA, UNIFIED),
        sglang_version="0.5.22",
    ),
    sources=(
        "sglang 0.5.21: python/sglang/srt/arg_groups/kv_cache_hook.py:545-550 (DSPARK only; no fused draft region)",
        "sglang 0.5.22: python/sglang/srt/mem_cache/kv_cache_configurator.py:1018-1148, 1200-1242",
        "sglang 0.5.22: python/sglang/srt/arg_groups/kv_cache_hook.py:605-611, 680-681, 724-767",
        "sglang 0.5.23: python/sglang/srt/mem_cache/kv_cache_configurator.py:1079-1153, 1385-1427",
        "sglang 0.5.23: python/sglang/srt/arg_groups/kv_cache_hook.py:687-688, 719-762",
    ),
    sglang_versions=">=0.5.22",
    log_signatures=(
        r"--enable-unified-memory \+ EAGLE/EAGLE3(/DFLASH)? on a (mamba-hybrid|hybrid-SWA) target needs the draft's KV fused into the target's pages, but this draft cannot fuse",
        r"--enable-unified-memory with decode context parallelism \(--dcp-size > 1\) supports MLA models only",
        r"--enable-unified-memory with decode context parallelism \(--dcp-size > 1\) does not support hybrid sliding-window models",
    ),
)
