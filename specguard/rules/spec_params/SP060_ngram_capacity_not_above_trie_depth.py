"""SP060 ngram-capacity-not-above-trie-depth."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B
from specguard.rules.spec_params._shared import int_flag

CAPACITY = "--speculative-ngram-capacity"
DEPTH = "--speculative-ngram-max-trie-depth"
# SGLang's defaults (0.5.10 server_args.py:513-514; 0.5.23 arg_groups/fields/spec.py:264-271).
DEFAULT_DEPTH = 18
DEFAULT_CAPACITY = 10 * 1000 * 1000


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "NGRAM" or not (ctx.spec.has(CAPACITY) or ctx.spec.has(DEPTH)):
        return
    capacity = int_flag(ctx, CAPACITY) if ctx.spec.has(CAPACITY) else DEFAULT_CAPACITY
    depth = int_flag(ctx, DEPTH) if ctx.spec.has(DEPTH) else DEFAULT_DEPTH
    if capacity is None or depth is None or capacity > depth:
        return
    # The root counts against the capacity, so a full-depth suffix needs depth + 1 nodes.
    needed = depth + 1
    yield RULE.finding(
        f"{ctx.flag(CAPACITY)} {capacity} is not above {ctx.flag(DEPTH)} {depth}: the NGRAM trie counts its root "
        f"against the capacity, so the first insertion of a {depth}-token suffix has no node to evict and the "
        f"scheduler aborts on the first request (munmap_chunk(): invalid pointer). SGLang accepts it at start-up. "
        f"Raise the capacity to at least {needed} (SGLang's default is {DEFAULT_CAPACITY:,})",
        flags=(CAPACITY,),
        fix=fix_of(f"drop {CAPACITY} (default {DEFAULT_CAPACITY:,})", Applicability.UNSAFE, Edit(name=CAPACITY, value=None)),
    )


RULE = Rule(
    check=check,
    code="SP060",
    category=Category.CRASH,
    name="ngram-capacity-not-above-trie-depth",
    summary="NGRAM trie capacity at or below its max trie depth (scheduler abort on the first request)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="With NGRAM, compares `--speculative-ngram-capacity` (default 10,000,000) with "
        "`--speculative-ngram-max-trie-depth` (default 18) when either is typed.",
        why="The C++ NGRAM trie counts its root node against the capacity, so a capacity equal to the depth "
        "leaves depth - 1 nodes for a suffix that needs depth; the first insertion calls `Trie::squeeze()` "
        "with nothing to evict and the scheduler aborts with `munmap_chunk(): invalid pointer` on the first "
        "request (issue 36495, reported on 0.5.18 with both set to 4; capacity 5 or 8 ran). SGLang does not "
        "check the pair: the worker passes both straight to the trie (0.5.23 speculative/ngram_worker.py:"
        "114-119) and no argument hook compares them (0.5.23 arg_groups/speculative_hook.py). The rule is "
        "scoped to 0.5.10+, where `--speculative-ngram-max-trie-depth` replaced `--speculative-ngram-branch-length` "
        "(0.5.10 server_args.py:513); the older spelling was not verified against the crash.",
        fix="Drop the capacity (SGLang's default is far above any depth) or raise it above the depth.",
        fix_safety="Unsafe: the trie's memory budget changes.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "NGRAM", "--speculative-ngram-capacity", "4",
              "--speculative-ngram-max-trie-depth", "4"),
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "NGRAM", "--speculative-ngram-capacity", "8",
              "--speculative-ngram-max-trie-depth", "4"),
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/36495",
        "sglang 0.5.23: python/sglang/srt/speculative/ngram_worker.py:114-119; python/sglang/srt/arg_groups/fields/spec.py:264-271",
        "sglang 0.5.10: python/sglang/srt/server_args.py:513-514",
    ),
    sglang_versions=">=0.5.10",
)
