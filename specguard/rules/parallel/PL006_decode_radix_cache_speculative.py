"""PL006 decode-radix-cache-speculative."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Edit, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of

RADIX = "--disaggregation-decode-enable-radix-cache"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm in (None, "DSPARK", "EAGLE", "EAGLE3") or not ctx.spec.has(RADIX):
        return
    if ctx.spec.get("disaggregation_mode") != "decode":
        return
    yield RULE.finding(
        f"{ctx.flag(RADIX)} on a PD decode node does not work with {ctx.algorithm} (only EAGLE, EAGLE3, NEXTN "
        "and DSPARK): SGLang raises a ValueError at argument time",
        flags=(RADIX,),
        fix=fix_of(f"drop {RADIX}", Applicability.UNSAFE, Edit(name=RADIX, value=None)),
    )


RULE = Rule(
    check=check,
    code="PL006",
    name="decode-radix-cache-speculative",
    summary="PD decode radix cache with a speculative algorithm other than EAGLE/EAGLE3/DSPARK",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="With `--disaggregation-mode decode --disaggregation-decode-enable-radix-cache`, checks the algorithm.",
        why="SGLang raises '--disaggregation-decode-enable-radix-cache is incompatible with speculative "
        "decoding (--speculative-algorithm STANDALONE)' for anything but DSPARK, EAGLE and EAGLE3 "
        "(catalogue P49; 0.5.23 speculative_hook.py:164-173).",
        fix="Drop the decode radix cache.",
        fix_safety="Unsafe: prefix reuse on the decode node stops.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen2.5-7B-Instruct", "--disaggregation-mode", "decode", RADIX,
              "--speculative-algorithm", "NGRAM"),
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen2.5-7B-Instruct", "--disaggregation-mode", "decode",
              "--speculative-algorithm", "NGRAM"),
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:164-173",
        "catalogue: shared/design/sglang-spec-checks.md P49",
    ),
    sglang_versions=">=0.5.22",
)
