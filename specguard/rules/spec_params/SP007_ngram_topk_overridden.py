"""SP007 ngram-topk-overridden."""

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
from specguard.rules.examples import QWEN25_7B_NGRAM
from specguard.sglang_facts.defaults import NGRAM_DEFAULT_MAX_BFS_BREADTH


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "NGRAM":
        return
    topk = ctx.spec.get("speculative_eagle_topk")
    if topk is None:
        return
    breadth = ctx.spec.get("speculative_ngram_max_bfs_breadth") or NGRAM_DEFAULT_MAX_BFS_BREADTH
    if topk == breadth:
        return
    breadth_flag = ctx.flag("--speculative-ngram-max-bfs-breadth")
    yield RULE.finding(
        f"NGRAM replaces {ctx.flag('--speculative-eagle-topk')} {topk} with {breadth_flag} ({breadth}) without "
        f"a warning. To change the tree width, set {breadth_flag} {topk} instead",
        flags=("--speculative-eagle-topk",),
        fix=fix_of(
            "drop --speculative-eagle-topk, which NGRAM ignores",
            Applicability.SAFE,
            Edit(name="--speculative-eagle-topk", value=None),
        ),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="SP007",
    category=Category.HYGIENE,
    name="ngram-topk-overridden",
    summary="NGRAM silently replaces --speculative-eagle-topk with --speculative-ngram-max-bfs-breadth",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="With NGRAM, compares a user `--speculative-eagle-topk` with the BFS breadth (default 10).",
        why="`_handle_ngram` sets topk to `--speculative-ngram-max-bfs-breadth` unconditionally "
        "(speculative_hook.py:1309-1313 in 0.5.23, catalogue P63), so the written topk never runs. "
        "The seed document notes it for slime too ('Topk is taken from speculative_ngram_max_bfs_breadth').",
        fix="Drop the topk, or move its value to `--speculative-ngram-max-bfs-breadth`.",
        fix_safety="Safe: dropping the topk leaves what SGLang runs unchanged.",
    ),
    bad=Example(
        argv=(*QWEN25_7B_NGRAM, "--speculative-eagle-topk", "3"),
    ),
    good=Example(
        argv=(*QWEN25_7B_NGRAM, "--speculative-ngram-max-bfs-breadth", "3"),
    ),
    sources=(
        "seed: sglang-speculative-decoding.md (Ngram Speculative Decoding)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1309-1313",
        "catalogue: shared/design/sglang-spec-checks.md P63",
    ),
)
