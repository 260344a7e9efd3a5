"""FX087 eagle-verify-without-grammar."""

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
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.rules.examples import LLAMA2_7B_EAGLE
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

GRAMMAR_BACKEND = "--grammar-backend"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS:
        return
    item = ctx.spec.item(GRAMMAR_BACKEND)
    if item is not None and item.values and item.values[-1] == "none":
        return  # structured-output requests are refused before they reach the worker
    yield RULE.finding(
        f"{ctx.algorithm} in SGLang {ctx.version} has no grammar support in the EAGLE verify step: a request "
        "with json_schema, regex or ebnf crashes the scheduler (sglang#3724); the vocab mask over the draft "
        "tree arrives in 0.4.6.post5. Upgrade, or refuse structured output with "
        f"{ctx.flag(GRAMMAR_BACKEND)} none",
        flags=("--speculative-algorithm", GRAMMAR_BACKEND),
        fix=fix_of(f"set {GRAMMAR_BACKEND} none", Applicability.UNSAFE, Edit(name=GRAMMAR_BACKEND, value="none")),
    )


RULE = Rule(
    check=check,
    code="FX087",
    category=Category.CRASH,
    needs=RequestFeature.STRUCTURED_OUTPUT,
    name="eagle-verify-without-grammar",
    summary="EAGLE/NEXTN/EAGLE3 before 0.4.6.post5 cannot verify under a grammar",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="EAGLE-family speculative decoding before 0.4.6.post5, unless `--grammar-backend none`.",
        why="Up to 0.4.6.post4 the EAGLE worker and its verify input have no grammar handling at all "
        "(0.4.6.post4 speculative/eagle_worker.py and eagle_utils.py never mention a grammar), so a "
        "structured-output request under EAGLE or NEXTN takes the scheduler down (sglang#3724: DeepSeek-R1 with "
        "NEXTN and `--grammar-backend xgrammar`, 'sending a request with structured output causes the server "
        "to crash'). 0.4.6.post5 walks the draft tree with the grammar and masks the verify logits "
        "(eagle_worker.py:497-525, eagle_utils.py:351-356). The launch cannot tell whether clients will send "
        "such requests, so this is a warning.",
        fix="Upgrade to 0.4.6.post5 or later, or set `--grammar-backend none` so constrained requests are refused.",
        fix_safety="Unsafe: `--grammar-backend none` turns structured output off.",
    ),
    bad=Example(
        argv=LLAMA2_7B_EAGLE,
        sglang_version="0.4.5",
    ),
    good=Example(
        argv=LLAMA2_7B_EAGLE,
        sglang_version="0.4.6.post5",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/3724",
        "sglang 0.4.6.post5: python/sglang/srt/speculative/eagle_worker.py:497-525",
        "sglang 0.4.6.post5: python/sglang/srt/speculative/eagle_utils.py:351-356",
        "sglang 0.4.6.post4: python/sglang/srt/speculative/eagle_worker.py (no grammar handling)",
    ),
    sglang_versions="<0.4.6.post5",
)
