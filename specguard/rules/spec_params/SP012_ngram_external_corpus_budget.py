"""SP012 ngram-external-corpus-budget."""

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
from specguard.rules.spec_params._shared import int_flag
from specguard.sglang_facts.defaults import NGRAM_DEFAULT_DRAFT_TOKENS

CORPUS = "--speculative-ngram-external-corpus-path"
BUDGET = "--speculative-ngram-external-sam-budget"
MAX_TOKENS = "--speculative-ngram-external-corpus-max-tokens"
SKIP_TOKENIZER = "--skip-tokenizer-init"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "NGRAM" or not ctx.spec.has(CORPUS):
        return
    budget = int_flag(ctx, BUDGET)
    budget = 0 if budget is None and not ctx.spec.has(BUDGET) else budget
    tokens = ctx.spec.get("speculative_num_draft_tokens") or NGRAM_DEFAULT_DRAFT_TOKENS
    limit = tokens - 1
    if ctx.spec.has(SKIP_TOKENIZER):
        # The worker tokenizes the corpus with the target worker's tokenizer, which this flag leaves unset.
        yield RULE.finding(
            f"{ctx.flag(CORPUS)} with {ctx.flag(SKIP_TOKENIZER)}: the NGRAM worker tokenizes the corpus at start-up "
            "with the target's tokenizer, which the flag leaves out, so the server fails with \"ValueError: A tokenizer "
            f"is required to load an external ngram corpus.\" Drop {ctx.flag(SKIP_TOKENIZER)} or the corpus",
            flags=(CORPUS, SKIP_TOKENIZER),
            fix=fix_of(f"drop {SKIP_TOKENIZER}", Applicability.UNSAFE, Edit(name=SKIP_TOKENIZER, value=None)),
        )
    max_tokens = int_flag(ctx, MAX_TOKENS)
    if max_tokens is not None and max_tokens <= 0:
        yield RULE.finding(
            f"{ctx.flag(MAX_TOKENS)} must be positive with {ctx.flag(CORPUS)}: SGLang raises for {max_tokens}",
            flags=(MAX_TOKENS,),
            fix=fix_of(f"drop {MAX_TOKENS} (default 10,000,000)", Applicability.UNSAFE, Edit(name=MAX_TOKENS, value=None)),
        )
    if budget is None or limit < 1:
        return
    if budget <= 0 or budget > limit:
        written = "is left at its default 0" if not ctx.spec.has(BUDGET) else f"is {budget}"
        yield RULE.finding(
            f"{ctx.flag(CORPUS)} is set and {ctx.flag(BUDGET)} {written}: SGLang requires 1 <= budget <= "
            f"draft tokens - 1 ({limit}) and raises at argument time. Set {ctx.flag(BUDGET)} {limit} or lower",
            flags=(BUDGET,),
            fix=fix_of(f"set {BUDGET} {limit}", Applicability.UNSAFE, Edit(name=BUDGET, value=limit)),
        )


RULE = Rule(
    check=check,
    code="SP012",
    category=Category.START,
    name="ngram-external-corpus-budget",
    summary="NGRAM external corpus with a SAM budget outside 1..draft tokens - 1",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="With `--speculative-ngram-external-corpus-path` (0.5.11+), checks the SAM budget, the corpus token cap "
        "and `--skip-tokenizer-init`.",
        why="SGLang raises when the budget is <= 0 (its default is 0, so the corpus path alone fails), when "
        "the max tokens are <= 0, or when the budget exceeds draft tokens - 1 (catalogue P66; 0.5.23 "
        "speculative_hook.py:1331-1349; since 0.5.11 server_args.py:3581-3596). At start the NGRAM worker reads the "
        "corpus through `iter_external_corpus_chunks` with the target worker's tokenizer (0.5.11 "
        "speculative/ngram_worker.py:62-75; 0.5.23 :124-137), which `--skip-tokenizer-init` leaves None "
        "(managers/tp_worker.py:267-268; 0.5.23 :326-329), and that raises \"ValueError: A tokenizer is required to "
        "load an external ngram corpus.\" (speculative/cpp_ngram/external_corpus.py:19-20, both releases); a path that "
        "is not a file raises \"External ngram corpus path does not exist\" just before (:17-18), which specguard "
        "cannot check from the launch.",
        fix="Set the budget to draft tokens - 1.",
        fix_safety="Unsafe: it changes how many draft tokens come from the corpus.",
    ),
    bad=Example(
        argv=(*QWEN25_7B_NGRAM, "--speculative-ngram-external-corpus-path", "/data/corpus.jsonl"),
    ),
    good=Example(
        argv=(*QWEN25_7B_NGRAM, "--speculative-ngram-external-corpus-path", "/data/corpus.jsonl",
              "--speculative-ngram-external-sam-budget", "4"),
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1331-1349",
        "sglang 0.5.11: python/sglang/srt/server_args.py:3581-3596",
        "sglang 0.5.11: python/sglang/srt/speculative/ngram_worker.py:62-75",
        "sglang 0.5.11: python/sglang/srt/speculative/cpp_ngram/external_corpus.py:17-20",
        "sglang 0.5.11: python/sglang/srt/managers/tp_worker.py:267-268",
        "sglang 0.5.23: python/sglang/srt/speculative/ngram_worker.py:124-137",
        "sglang 0.5.23: python/sglang/srt/speculative/cpp_ngram/external_corpus.py:17-20",
        "sglang 0.5.23: python/sglang/srt/managers/tp_worker.py:326-329",
        "catalogue: shared/design/sglang-spec-checks.md P66",
    ),
    sglang_versions=">=0.5.11",
    log_signatures=(
        r"A tokenizer is required to load an external ngram corpus",
        r"External ngram corpus path does not exist",
    ),
)
