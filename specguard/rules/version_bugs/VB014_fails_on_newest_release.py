"""VB014 fails-on-newest-release."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B


def check(ctx: CheckContext) -> Iterator[Finding]:
    # Only an inferred release can hide the newest: a given, installed or pinned one is the
    # release the launch runs on, and VB010/VB013 judge the launch against it.
    if ctx.env.sglang_version_origin != "inferred from flags":
        return
    from specguard.dialects import sglang_spelling
    from specguard.flag_values import (
        refused_values,  # the release history loads only here
    )
    from specguard.versions import history

    data = history()
    newest = len(data.releases) - 1
    if data.index_of(ctx.version) == newest:
        return
    for item in ctx.spec.items:
        name = sglang_spelling(item.flag, item.written, item.extra, ctx.spec.dialect)
        if not name or not name.startswith("--") or not data.flag_releases(name) or newest in data.accepted_by(name):
            continue
        renamed = [other for other in data.renamed(name) if data.flag_info(other, newest) is not None]
        how = f"write {ctx.flag(renamed[0])} there" if renamed else f"SGLang {data.newest} has no such flag: drop it there"
        yield RULE.finding(
            f"{ctx.flag(name)} pins this launch to SGLang {ctx.env.sglang_version} or older (inferred from its flags); "
            f"on SGLang {data.newest}, the newest release, argparse exits with 'unrecognized arguments': {how}",
            flags=(item.flag,),
        )
    refused_here = {refusal.flag for refusal in refused_values(ctx.spec, ctx.env.sglang_version)}
    for refusal in refused_values(ctx.spec, data.newest):
        if refusal.flag not in refused_here:
            yield RULE.finding(
                f"on SGLang {data.newest}, the newest release, {refusal.problem}; this launch was checked as "
                f"{ctx.env.sglang_version} (inferred from its flags): {refusal.hint} there",
                flags=(refusal.flag,),
            )


RULE = Rule(
    check=check,
    code="VB014",
    name="fails-on-newest-release",
    summary="A launch dated by its flags to an older release that the newest release refuses",
    severity=Severity.WARNING,
    category=Category.START,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="When no release is given, installed or pinned, specguard checks a launch against the "
        "newest release that takes all its flags and values. This rule then checks it against the "
        "newest release specguard knows (0.5.23): a flag that release does not have (with its new "
        "spelling when the history records a rename) or a value it refuses.",
        why="Dating a launch by its flags is right for an old script, but silent about the release "
        "a user who upgrades will run: argparse exits with status 2 there ('unrecognized arguments', "
        "'invalid choice') before anything loads.",
        fix="Give --sglang-version if the launch runs on the older release; otherwise write the newest "
        "release's spelling the message names.",
        fix_safety="No fix: the launch is right for the release it was dated to.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--attention-backend", "dual_chunk_flash_attn"),
        sglang_version="0.5.19",
        sglang_version_origin="inferred from flags",
    ),
    # The same launch on a release the user named: it runs there, and VB010/VB013 judge it.
    good=Example(
        argv=(*LLAMA31_8B, "--attention-backend", "dual_chunk_flash_attn"),
        sglang_version="0.5.19",
    ),
    sources=(
        "specguard/data/sglang-history.json (each release's flags, choices and renames, scripts/extract_sglang_flags.py)",
        "sglang 0.5.23: python/sglang/srt/server_args.py:668-720 (argparse; --attention-backend choices without dual_chunk_flash_attn)",
    ),
    dialects=(Dialect.SGLANG, Dialect.SLIME),
)
