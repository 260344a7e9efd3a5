"""PL007 watermark-speculative."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.rules.examples import LLAMA31_8B
from specguard.sglang_facts.algorithms import WATERMARK_ALGORITHMS

WATERMARK = "--enable-watermark"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not ctx.spec.has(WATERMARK):
        return
    drop = fix_of(f"drop {WATERMARK}", Applicability.UNSAFE, Edit(name=WATERMARK, value=None))
    flag = ctx.flag(WATERMARK)
    if ctx.algorithm not in WATERMARK_ALGORITHMS:
        why = f"it supports NGRAM, EAGLE and EAGLE3, not {ctx.algorithm}"
    elif (ctx.spec.get("pp_size") or 1) > 1:
        why = "it does not support pipeline-parallel speculative decoding"
    elif ctx.spec.has("--speculative-use-rejection-sampling"):
        why = f"it is incompatible with {ctx.flag('--speculative-use-rejection-sampling')}"
    else:
        return
    yield RULE.finding(f"{flag}: {why}; SGLang raises a ValueError at argument time", flags=(WATERMARK,), fix=drop)


RULE = Rule(
    check=check,
    code="PL007",
    category=Category.START,
    name="watermark-speculative",
    summary="--enable-watermark with a speculative setup it does not support",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="With `--enable-watermark` (0.5.22+) and speculative decoding, checks the algorithm, pp and rejection sampling.",
        why="SGLang raises for algorithms other than NGRAM/EAGLE/EAGLE3, for pp > 1 with speculation and for "
        "rejection sampling (catalogue P57; 0.5.23 validation_hook.py:90-104).",
        fix="Drop the watermark, or change the speculative setup.",
        fix_safety="Unsafe: outputs are no longer watermarked.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, WATERMARK, "--speculative-algorithm", "STANDALONE",
              "--speculative-draft-model-path", "meta-llama/Llama-3.2-1B-Instruct"),
    ),
    good=Example(
        argv=(*LLAMA31_8B, WATERMARK, "--speculative-algorithm", "NGRAM"),
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/validation_hook.py:80-106",
        "catalogue: shared/design/sglang-spec-checks.md P57",
    ),
    sglang_versions=">=0.5.22",
)
