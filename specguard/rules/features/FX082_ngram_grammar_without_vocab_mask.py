"""FX082 ngram-grammar-without-vocab-mask."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import (
    Applicability,
    Category,
    Edit,
    Finding,
    RequestFeature,
    Severity,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import QWEN25_7B_NGRAM

GRAMMAR_BACKEND = "--grammar-backend"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "NGRAM":
        return
    item = ctx.spec.item(GRAMMAR_BACKEND)
    if item is not None and item.values and item.values[-1] == "none":
        return  # structured-output requests are refused, so no grammar reaches the NGRAM verify
    yield RULE.finding(
        f"NGRAM in SGLang {ctx.version} builds no grammar vocab mask for verification: the first request with "
        "json_schema, regex or ebnf crashes the server (fixed in 0.5.9, sglang#17585). Upgrade, or refuse "
        f"structured output with {ctx.flag(GRAMMAR_BACKEND)} none",
        flags=("--speculative-algorithm", GRAMMAR_BACKEND),
        fix=fix_of(f"set {GRAMMAR_BACKEND} none", Applicability.UNSAFE, Edit(name=GRAMMAR_BACKEND, value="none")),
    )


RULE = Rule(
    check=check,
    code="FX082",
    category=Category.CRASH,
    needs=RequestFeature.STRUCTURED_OUTPUT,
    name="ngram-grammar-without-vocab-mask",
    summary="NGRAM before 0.5.9 crashes on the first structured-output request",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="NGRAM speculative decoding before 0.5.9, unless `--grammar-backend none` refuses structured output.",
        why="Up to 0.5.8 the NGRAM worker never generated the grammar vocab mask nor passed it into verify, so a "
        "request with json_schema (or regex, ebnf) crashes the scheduler (sglang#17576). sglang#17585 added the "
        "mask (0.5.9 speculative/ngram_worker.py:224-254; 0.5.8 ngram_worker.py has no grammar handling). The "
        "launch cannot tell whether clients will send such requests, so this is a warning.",
        fix="Upgrade to 0.5.9 or later, or set `--grammar-backend none` so constrained requests are refused.",
        fix_safety="Unsafe: `--grammar-backend none` turns structured output off.",
    ),
    bad=Example(
        argv=QWEN25_7B_NGRAM,
        sglang_version="0.5.8",
    ),
    good=Example(
        argv=QWEN25_7B_NGRAM,
        sglang_version="0.5.9",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/17576",
        "https://github.com/sgl-project/sglang/pull/17585",
        "sglang 0.5.9: python/sglang/srt/speculative/ngram_worker.py:224-254",
    ),
    sglang_versions="<0.5.9",
)
