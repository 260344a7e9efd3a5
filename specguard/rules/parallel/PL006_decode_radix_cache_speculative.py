"""PL006 decode-radix-cache-speculative."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

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
from specguard.sglang_facts.changes import DECODE_RADIX_CACHE_ALGORITHMS, as_of

RADIX = "--disaggregation-decode-enable-radix-cache"


def allowed(version: Version) -> tuple[str, ...]:
    return as_of(DECODE_RADIX_CACHE_ALGORITHMS, version, before=())


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not ctx.spec.has(RADIX) or ctx.spec.get("disaggregation_mode") != "decode":
        return
    names = allowed(ctx.version)
    if ctx.algorithm in names:
        return
    works_with = f"works only with {', '.join(names)}" if names else "works with no speculative algorithm"
    yield RULE.finding(
        f"{ctx.flag(RADIX)} on a PD decode node in SGLang {ctx.version} {works_with}, not {ctx.algorithm}: "
        "SGLang raises a ValueError at argument time",
        flags=(RADIX,),
        fix=fix_of(f"drop {RADIX}", Applicability.UNSAFE, Edit(name=RADIX, value=None)),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="PL006",
    category=Category.START,
    name="decode-radix-cache-speculative",
    summary="PD decode radix cache with a speculative algorithm that release rejects",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="With `--disaggregation-mode decode --disaggregation-decode-enable-radix-cache`, checks the algorithm.",
        why="SGLang raises '--disaggregation-decode-enable-radix-cache is incompatible with speculative "
        "decoding': for every algorithm up to 0.5.20 (0.5.20 pd_disaggregation_hook.py:89), for all but "
        "DSPARK in 0.5.21-0.5.22 (0.5.21 pd_disaggregation_hook.py:97), for all but DSPARK, EAGLE/NEXTN "
        "and EAGLE3 from 0.5.23 (catalogue P49; 0.5.23 speculative_hook.py:164-173).",
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
        "sglang 0.5.21: python/sglang/srt/arg_groups/pd_disaggregation_hook.py:97",
        "sglang 0.5.20: python/sglang/srt/arg_groups/pd_disaggregation_hook.py:89",
        "https://github.com/sgl-project/sglang/pull/39150",
        "catalogue: shared/design/sglang-spec-checks.md P49",
    ),
    log_signatures=(
        r"--disaggregation-decode-enable-radix-cache is incompatible with speculative",
    ),
)
