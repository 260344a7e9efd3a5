"""SP006 spec-flags-without-algorithm."""

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

ALGORITHM = "--speculative-algorithm"
# Checked before the algorithm is known, so they fail even without one: SP010 and SP011 say so.
CHECKED_WITHOUT_ALGORITHM = frozenset(
    {"--speculative-use-block-verification", "--speculative-draft-window-size", "--speculative-draft-sink-size"}
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.spec.get("speculative_algorithm") is not None:
        return
    ignored = tuple(
        dict.fromkeys(
            item.flag
            for item in ctx.spec.items
            if item.flag.startswith("--speculative-") and item.flag not in CHECKED_WITHOUT_ALGORITHM
        )
    )
    if not ignored:
        return
    shown = ", ".join(ctx.flag(f) for f in ignored)
    yield RULE.finding(
        f"{shown} without {ctx.flag(ALGORITHM)}: SGLang keeps the values and runs without speculative "
        f"decoding. Add {ctx.flag(ALGORITHM)} (EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM or DFLASH) or drop them",
        flags=ignored,
        fix=fix_of("drop the ignored speculative flags", Applicability.SAFE, *(Edit(name=f, value=None) for f in ignored)),
    )


RULE = Rule(
    check=check,
    code="SP006",
    category=Category.PERF,
    name="spec-flags-without-algorithm",
    summary="Speculative flags are given without --speculative-algorithm",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Finds `--speculative-*` flags when `--speculative-algorithm` is missing.",
        why="SGLang reads the speculative settings only for a speculative algorithm: without one they are "
        "kept in the record and ignored (catalogue P09), so a launch that was meant to speculate runs "
        "plain decoding without a word.",
        fix="Add the algorithm you meant, or drop the flags.",
        fix_safety="Safe: SGLang ignores the flags, so dropping them changes nothing that runs.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B"),
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B"),
    ),
    sources=(
        "seed: sglang-speculative-decoding.md (Full Parameter Reference)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:118-160 (handle_speculative_decoding)",
        "catalogue: shared/design/sglang-spec-checks.md P09",
    ),
)
