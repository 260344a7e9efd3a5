"""DM411 dflash-selector-draft-without-rank."""

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
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.sglang_facts.changes import SELECTOR_DRAFT_CLASSES


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DFLASH"
        or ctx.draft is None
        or ctx.draft.dflash_selector_rank != 0
    ):
        return
    arch = ctx.draft.architecture
    registered = SELECTOR_DRAFT_CLASSES.get(arch or "")
    if registered is None or not registered.present_in(ctx.version):
        return  # another class, or one this release does not register (DM042's case)
    yield RULE.finding(
        f"the DFLASH draft is a {arch} (a DFlash selector draft) whose config.json sets no dflash_config.selector_rank: "
        f'SGLang {ctx.version} builds the draft when the draft worker starts and raises "DFlash selector draft requires '
        'dflash_config.selector_rank." (or, with selector_top_k set alone, "DFLASH selector needs rank and top_k '
        "together\"). Use the checkpoint's own config.json, which sets dflash_config.selector_rank and selector_top_k",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM411",
    category=Category.START,
    name="dflash-selector-draft-without-rank",
    summary="A DFlash2DraftModel (selector) draft without dflash_config.selector_rank fails at start (0.5.19+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a draft whose `architectures[0]` is `DFlash2DraftModel` "
        "(from 0.5.19; its aliases `DFlash2BeamDraftModel` and `MiniMaxDFlash2DraftModel` from 0.5.23) and whose "
        "config.json has no `dflash_config.selector_rank` (or 0).",
        why="0.5.19 added `DFlash2DraftModel` (models/dflash.py:1066-1075): its constructor raises "
        '`ValueError("DFlash selector draft requires dflash_config.selector_rank.")` when the parsed rank is 0, '
        'and `parse_dflash_draft_config` reads it as `dflash_config.get("selector_rank", 0)` '
        "(speculative/dflash_utils.py:632-646), refusing first a `selector_top_k` without a rank. 0.5.23 keeps both "
        "(models/dflash.py:1264-1273; dflash_utils.py:635-649) and adds the two aliases as subclasses (:1305-1314). "
        "0.5.18 registers no such class (models/dflash.py:632), which DM042 would report.",
        fix="Use the selector draft's published config.json (it sets `selector_rank` and `selector_top_k` in "
        "`dflash_config`), or a plain `DFlashDraftModel` draft. No automatic fix.",
        fix_safety="No fix: the draft checkpoint is the user's choice.",
    ),
    bad=Example(
        argv=QWEN3_8B_DFLASH,
        draft={"architectures": ("DFlash2DraftModel",), "dflash_selector_rank": 0},
        sglang_version="0.5.19",
    ),
    good=Example(
        argv=QWEN3_8B_DFLASH,
        draft={"architectures": ("DFlash2DraftModel",), "dflash_selector_rank": 64},
        sglang_version="0.5.19",
    ),
    sources=(
        "sglang 0.5.18: python/sglang/srt/models/dflash.py:632 (EntryClass without DFlash2DraftModel)",
        "sglang 0.5.19: python/sglang/srt/models/dflash.py:1066-1075,1146-1151 (DFlash2DraftModel refuses a zero selector_rank)",
        "sglang 0.5.19: python/sglang/srt/speculative/dflash_utils.py:632-646 (selector_rank default 0; rank and top_k together)",
        "sglang 0.5.23: python/sglang/srt/models/dflash.py:1264-1273,1305-1314,1317-1324",
        "sglang 0.5.23: python/sglang/srt/speculative/dflash_utils.py:635-649",
    ),
    sglang_versions=">=0.5.19",
    log_signatures=(
        r"DFlash selector draft requires dflash_config\.selector_rank",
        r"DFLASH selector needs rank and top_k together",
    ),
)
