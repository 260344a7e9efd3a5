"""VB011 env-var-of-other-releases."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3


def check(ctx: CheckContext) -> Iterator[Finding]:
    from specguard.versions import history  # the release history loads only here

    data = history()
    index = data.index_of(ctx.version)
    if index is None:
        return
    for name, _ in ctx.spec.env:
        releases = data.env_releases(name)
        if not releases or index in releases:
            continue  # read here, or by no release (another package's, or a typo: not ours to judge)
        yield RULE.finding(
            f"SGLang {ctx.env.sglang_version} does not read {name}: releases {data.describe(releases)} do. "
            f"Setting it changes nothing here; drop it, or check against a release that reads it (--sglang-version)",
            fix=fix_of(f"drop {name}", Applicability.SAFE, Edit(target="env", name=name, value=None)),
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="VB011",
    # Hygiene: the launch runs exactly as it would without the variable; a bug it was meant to
    # work around is that bug's rule to report (#25).
    category=Category.HYGIENE,
    name="env-var-of-other-releases",
    summary="An SGLANG_* env var that other SGLang releases read, but not the one checked for",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="Every `SGLANG_*` env var of the launch against the env vars each release from 0.4.0 to "
        "0.5.23 reads (`specguard/data/sglang-history.json`: the quoted `SGLANG_*` names in each "
        "wheel's code and the attributes of `sglang/srt/environ.py`, by `scripts/extract_sglang_flags.py`).",
        why="SGLang reads env vars by name; one a release does not read is silently ignored, so a "
        "setting written for another release (a workaround, a feature switch) does nothing, and the "
        "launch runs without it.",
        fix="Drop the variable, or check against the release it was written for.",
        fix_safety="Safe: the release ignores it.",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE3,
        env={"SGLANG_ENABLE_SPEC_V2": "1"},
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE3,
        env={"SGLANG_ENABLE_SPEC_V2": "1"},
        sglang_version="0.5.11",
    ),
    sources=(
        "specguard/data/sglang-history.json (scripts/extract_sglang_flags.py over every release's wheel)",
        "sglang 0.5.23: python/sglang/srt/environ.py (the env vars SGLang reads, by name)",
        "sglang 0.5.11: python/sglang/srt/environ.py (SGLANG_ENABLE_SPEC_V2; no release from 0.5.21 names it)",
    ),
)
