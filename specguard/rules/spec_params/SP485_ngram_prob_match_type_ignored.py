"""SP485 ngram-prob-match-type-ignored."""

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

MATCH_TYPE = "--speculative-ngram-match-type"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "NGRAM"
        or (ctx.spec.last_value(MATCH_TYPE) or "").upper() != "PROB"
    ):
        return
    yield RULE.finding(
        f"{ctx.flag(MATCH_TYPE)} PROB with NGRAM in SGLang {ctx.version}: the NGRAM worker builds its n-gram cache "
        "without the match type, so the cache runs its default BFS matching and nothing says so; the drafts (and "
        f"the acceptance) are BFS's. Drop {ctx.flag(MATCH_TYPE)}, or upgrade to 0.5.10rc0, which passes it on",
        flags=(MATCH_TYPE,),
        fix=fix_of(
            f"drop {MATCH_TYPE}, which this release ignores",
            Applicability.SAFE,
            Edit(name=MATCH_TYPE, value=None),
        ),
    )


RULE = Rule(
    check=check,
    code="SP485",
    category=Category.PERF,
    name="ngram-prob-match-type-ignored",
    summary="--speculative-ngram-match-type PROB is accepted but NGRAM drafts with BFS (0.5.3rc2-0.5.9)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--speculative-ngram-match-type PROB` with `--speculative-algorithm NGRAM`, SGLang 0.5.3rc2 to 0.5.9.",
        why="0.5.3rc2 added the flag (server_args.py:309, 2130-2134, choices BFS and PROB), but `NGRAMWorker.__init__` "
        "built `NgramCache` without `match_type` (ngram_worker.py:47-55), whose default is 'BFS' "
        "(cpp_ngram/ngram_cache.py:32, 42): the flag never reached the cache. 0.5.9 is the same "
        "(ngram_worker.py:53-62; ngram_cache.py:32, 42); 0.5.10rc0 passes "
        "`match_type=server_args.speculative_ngram_match_type` (ngram_worker.py:58).",
        fix="Drop the flag (BFS is what runs), or upgrade to 0.5.10rc0 or later for PROB matching.",
        fix_safety="Safe: the release ignores the flag, so dropping it changes nothing that runs.",
    ),
    bad=Example(argv=(*QWEN25_7B_NGRAM, MATCH_TYPE, "PROB"), sglang_version="0.5.9"),
    good=Example(
        argv=(*QWEN25_7B_NGRAM, MATCH_TYPE, "PROB"), sglang_version="0.5.10rc0"
    ),
    sources=(
        "sglang 0.5.3rc0: python/sglang/srt/server_args.py (no speculative_ngram_match_type)",
        "sglang 0.5.3rc2: python/sglang/srt/server_args.py:309,2130-2134",
        "sglang 0.5.3rc2: python/sglang/srt/speculative/ngram_worker.py:47-55; speculative/cpp_ngram/ngram_cache.py:24-42",
        "sglang 0.5.9: python/sglang/srt/speculative/ngram_worker.py:53-62; speculative/cpp_ngram/ngram_cache.py:32,42",
        "sglang 0.5.10rc0: python/sglang/srt/speculative/ngram_worker.py:58",
    ),
    sglang_versions=">=0.5.3rc2,<=0.5.9",
)
