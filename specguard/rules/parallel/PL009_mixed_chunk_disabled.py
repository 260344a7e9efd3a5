"""PL009 mixed-chunk-disabled."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import LLAMA31_8B
from specguard.sglang_facts.algorithms import (
    MIXED_CHUNK_ALGORITHMS,
    MIXED_CHUNK_OFF_ALGORITHMS,
)
from specguard.sglang_facts.changes import MIXED_CHUNK_PER_ALGORITHM, Change

# 0.5.19 moved the decision to SpeculativeAlgorithm.supports_mixed_chunk() (arg_groups/
# speculative_hook.py:675-684; the table is sglang_facts.algorithms). Before, the handlers of the
# algorithms that keep it now turned it off too: the EAGLE family and DFLASH (0.5.13
# arg_groups/speculative_hook.py:245-249, 306-311) and DSPARK (0.5.16 :400-404, 0.5.18 :420-424).
OFF_BEFORE_PER_ALGORITHM = MIXED_CHUNK_OFF_ALGORITHMS | MIXED_CHUNK_ALGORITHMS
# A release without DSPARK has no handler to turn anything off for it.
DSPARK_HANDLER = Change(
    "0.5.16",
    "0.5.16 arg_groups/speculative_hook.py:400-404 (0.5.15.post1 speculative/spec_info.py:28-41 has no DSPARK)",
)


def turned_off(ctx: CheckContext) -> bool:
    if ctx.algorithm == "DSPARK" and not DSPARK_HANDLER.present_in(ctx.version):
        return False
    per_algorithm = MIXED_CHUNK_PER_ALGORITHM.present_in(ctx.version)
    return ctx.algorithm in (MIXED_CHUNK_OFF_ALGORITHMS if per_algorithm else OFF_BEFORE_PER_ALGORITHM)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not ctx.spec.get("enable_mixed_chunk") or not turned_off(ctx):
        return
    flag = ctx.flag("--enable-mixed-chunk")
    yield RULE.finding(
        f"SGLang {ctx.version} turns {flag} off for {ctx.algorithm} (with a log warning): prefill chunks are not "
        "mixed into decode batches",
        flags=("--enable-mixed-chunk",),
        fix=set_flags(f"drop {flag}, which SGLang turns off", Applicability.SAFE, enable_mixed_chunk=None),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="PL009",
    category=Category.HYGIENE,
    name="mixed-chunk-disabled",
    summary="--enable-mixed-chunk with an algorithm SGLang turns it off for",
    severity=Severity.INFO,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Says when `--enable-mixed-chunk` is silently turned off by the speculative algorithm.",
        why="STANDALONE and FROZEN_KV_MTP (catalogue P24) and NGRAM (P62, unconditionally) do not support mixed "
        "chunked prefill, and SGLang turns it off with a warning; before 0.5.19 the EAGLE family, DFLASH and "
        "DSPARK (from 0.5.16, its first release) did the same (0.5.13 speculative_hook.py:245-249, 306-311; 0.5.16 :400-404, "
        "0.5.18 :420-424). From 0.5.19 EAGLE, EAGLE3, DFLASH and "
        "DSPARK keep it (`supports_mixed_chunk`, 0.5.19 speculative_hook.py:675-684).",
        fix="Drop the flag.",
        fix_safety="Safe: SGLang turns it off anyway.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--enable-mixed-chunk", "--speculative-algorithm", "STANDALONE",
              "--speculative-draft-model-path", "meta-llama/Llama-3.2-1B-Instruct"),
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--enable-mixed-chunk", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B"),
    ),
    sources=(
        "seed: sglang-speculative-decoding.md (Ngram: disables mixed chunked prefill)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1104-1118, 1304-1308",
        "sglang 0.5.23: python/sglang/srt/speculative/spec_info.py:147-158",
        "sglang 0.5.19: python/sglang/srt/arg_groups/speculative_hook.py:675-684",
        "sglang 0.5.13: python/sglang/srt/arg_groups/speculative_hook.py:245-249, 306-311",
        "sglang 0.5.15.post1: python/sglang/srt/speculative/spec_info.py:28-41 (no DSPARK algorithm)",
        "sglang 0.5.16: python/sglang/srt/arg_groups/speculative_hook.py:400-404 (DSPARK turns it off)",
        "sglang 0.5.18: python/sglang/srt/arg_groups/speculative_hook.py:420-424 (DSPARK turns it off)",
        "catalogue: shared/design/sglang-spec-checks.md P24, P47, P62",
    ),
)
