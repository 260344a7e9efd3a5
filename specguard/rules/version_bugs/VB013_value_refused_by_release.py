"""VB013 value-refused-by-release."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.environment import DATED_ORIGIN
from specguard.models import Applicability, Category, Dialect, Edit, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.rules.examples import LLAMA31_8B

# Where a release came from when it only dates the launch: the flags, or a report's date
# (--sglang-version ~X.Y.Z). The launch may have run a build from between two releases
# (sglang#3724's NEXTN on a main build before 0.4.3.post2 listed it), so a choice a later
# release takes is a warning, not an error.
DATED_ORIGINS = ("inferred from flags", DATED_ORIGIN)


def check(ctx: CheckContext) -> Iterator[Finding]:
    from specguard.flag_values import (
        refused_values,  # reads the release history: only here
    )

    dated = ctx.env.sglang_version_origin in DATED_ORIGINS
    for refusal in refused_values(ctx.spec, ctx.env.sglang_version):
        fix = None
        if refusal.replacement is not None:
            fix = fix_of(f"write {refusal.written} {refusal.replacement}", Applicability.UNSAFE, Edit(name=refusal.flag, value=refusal.replacement))
        if dated and refusal.accepted_from is not None:
            yield RULE.finding(
                f"{refusal.problem}; SGLang {refusal.accepted_from} takes it, so the launch ran a later build than "
                f"{ctx.env.sglang_version} ({ctx.env.sglang_version_origin}), or fails with argparse's 'invalid choice': "
                f"give --sglang-version {refusal.accepted_from} to check it as that build",
                flags=(refusal.flag,),
                fix=fix,
                severity=Severity.WARNING,
            )
            continue
        yield RULE.finding(
            f"{refusal.problem}: SGLang {ctx.env.sglang_version} refuses it before anything loads; {refusal.hint}",
            flags=(refusal.flag,),
            fix=fix,
        )


RULE = Rule(
    check=check,
    code="VB013",
    name="value-refused-by-release",
    summary="A flag value the checked SGLang release's parser or argument checks refuse",
    severity=Severity.ERROR,
    category=Category.START,
    docs=RuleDocs(
        what="Every value of the launch as the checked release's parser reads it: a choice that "
        "release lacks (`--attention-backend fa4` before fa4 existed), a value of the wrong type "
        "(`--port abc`), a number out of range (`--port 70000`, `--mem-fraction-static 1.5`), a "
        "switch given a value (`--disable-cuda-graph true`). Choices are each release's own "
        "(`specguard/data/sglang-history.json`); types and ranges are 0.5.23's parser table.",
        why="argparse exits with status 2 ('invalid choice', 'invalid int value', 'unrecognized "
        "arguments') before anything loads, and a number out of range fails later, at bind time "
        "or once the weights are loaded. Every other rule still runs, reading a refused value as "
        "unset. When the release was only dated (inferred from the flags, or from a report's date), "
        "a choice a later release takes is a warning naming that release: the launch may have run "
        "a build from between two releases.",
        fix="Write one of the release's choices (the closest one is proposed), a value of the "
        "right type or range, or the switch alone.",
        fix_safety="Unsafe: the closest spelling of a choice may not be the one meant.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--attention-backend", "fa4"),
        sglang_version="0.5.2",
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--attention-backend", "fa3"),
        sglang_version="0.5.2",
    ),
    sources=(
        "specguard/data/sglang-history.json (each release's server_args.py argparse choices, scripts/extract_sglang_flags.py)",
        "specguard/data/sglang-0.5.23-flags.json (argparse types of sglang 0.5.23's server_args.py)",
        "sglang 0.5.2: python/sglang/srt/server_args.py (--attention-backend choices: no fa4)",
        "sglang 0.5.23: python/sglang/srt/utils/common.py:3394 (human_readable_int), 4818 (json_list_type)",
    ),
    dialects=(Dialect.SGLANG, Dialect.SLIME, Dialect.SGL_JAX),
)
