"""SP010 block-verification-unsupported."""

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
from specguard.rules.examples import QWEN25_7B_NGRAM
from specguard.rules.spec_params._shared import device
from specguard.sglang_facts.algorithms import BLOCK_VERIFICATION_ALGORITHMS

BLOCK = "--speculative-use-block-verification"
SUPPORTED = BLOCK_VERIFICATION_ALGORITHMS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.spec.has(BLOCK):
        return
    drop = fix_of(f"drop {BLOCK}", Applicability.UNSAFE, Edit(name=BLOCK, value=None))
    if ctx.algorithm not in SUPPORTED:
        algorithm = ctx.algorithm or f"no {ctx.flag('--speculative-algorithm')}"
        yield RULE.finding(
            f"{ctx.flag(BLOCK)} only supports EAGLE, EAGLE3, NEXTN, DFLASH and DSPARK: SGLang raises a "
            f"ValueError at argument time with {algorithm}",
            flags=(BLOCK,),
            fix=drop,
        )
        return
    where = device(ctx)
    if where is not None and where != "cuda":
        yield RULE.finding(
            f"{ctx.flag(BLOCK)} only runs on CUDA or ROCm: SGLang raises a ValueError on device {where!r}",
            flags=(BLOCK, "--device"),
            fix=drop,
        )


RULE = Rule(
    check=check,
    code="SP010",
    category=Category.START,
    name="block-verification-unsupported",
    summary="--speculative-use-block-verification with an algorithm or device it does not support",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Checks the algorithm and device of `--speculative-use-block-verification` (new in 0.5.22).",
        why="SGLang checks it before the algorithm's own handler and raises unless the algorithm is "
        "EAGLE/EAGLE3/NEXTN/DFLASH/DSPARK and the device is cuda (catalogue P51; 0.5.23 "
        "speculative_hook.py:175-195); even without any algorithm it raises. On EAGLE/EAGLE3 it turns "
        "rejection sampling on, whose own limits SP009 checks.",
        fix="Drop the flag.",
        fix_safety="Unsafe: it changes verification.",
    ),
    bad=Example(
        argv=(*QWEN25_7B_NGRAM, "--speculative-use-block-verification"),
    ),
    good=Example(
        argv=QWEN25_7B_NGRAM,
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:175-195",
        "catalogue: shared/design/sglang-spec-checks.md P51",
    ),
    sglang_versions=">=0.5.22",
)
