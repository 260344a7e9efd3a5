"""DM306 dspark-draft-sample-from-anchor-ignored."""

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
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DSPARK"
        or ctx.draft is None
        or ctx.draft.sample_from_anchor is not False
    ):
        return
    yield RULE.finding(
        f"The DSPARK draft's config.json sets sample_from_anchor false, which SGLang {ctx.version} ignores (it is "
        "read from 0.5.19): the draft proposes from the anchor query rows with the target's embeddings, a layout it "
        "was not trained for, so few drafts are accepted and speculation costs more than it saves. Use SGLang "
        "0.5.19 or later with this draft",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM306",
    category=Category.PERF,
    name="dspark-draft-sample-from-anchor-ignored",
    summary="A DSpark draft with sample_from_anchor false runs with the anchor-row layout before 0.5.19 "
    "(0.5.16-0.5.18)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with a draft whose config.json sets `sample_from_anchor: false`, "
        "SGLang 0.5.16-0.5.18. An unknown draft config keeps it quiet.",
        why="0.5.19 added drafts that do not sample from the anchor row: `get_dspark_sample_from_anchor` reads the "
        "key (speculative/dspark_components/dspark_config.py:29-31), and the worker then drafts gamma + 1 query rows "
        "(dspark_worker_v2.py:173-174), embeds them with the draft's own embed_tokens and takes the non-anchor rows "
        "(dspark_draft.py:218-219, :244-251), and the draft runner sizes its logits rows to the draft-token count "
        "(model_executor/model_runner.py:800-808); unchanged to 0.5.23 (dspark_config.py:29-31). 0.5.16-0.5.18 have "
        "no sample_from_anchor reference anywhere in srt, so such a draft runs with the anchor-row layout and the "
        "target's embeddings: its proposals are shifted from what it was trained to predict. Verification keeps "
        "the output right; acceptance collapses. 0.5.15.post1 has no DSPARK.",
        fix="Upgrade to SGLang 0.5.19 or later, or use a draft trained with anchor sampling.",
        fix_safety="No automatic fix: the release or the draft checkpoint has to change.",
    ),
    bad=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        draft={"architectures": ("DSparkDraftModel",), "sample_from_anchor": False},
        sglang_version="0.5.18",
    ),
    good=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        draft={"architectures": ("DSparkDraftModel",), "sample_from_anchor": False},
        sglang_version="0.5.19",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/ (no dspark_components; no DSPARK)",
        "sglang 0.5.16: python/sglang/srt (no sample_from_anchor reference)",
        "sglang 0.5.18: python/sglang/srt (no sample_from_anchor reference)",
        (
            "sglang 0.5.19: python/sglang/srt/speculative/dspark_components/dspark_config.py:29-31; "
            "dspark_worker_v2.py:173-174; dspark_draft.py:218-219,244-251; model_executor/model_runner.py:800-808"
        ),
        "sglang 0.5.23: python/sglang/srt/speculative/dspark_components/dspark_config.py:29-31",
    ),
    sglang_versions=">=0.5.16,<=0.5.18",
)
