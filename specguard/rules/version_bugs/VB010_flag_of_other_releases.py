"""VB010 flag-of-other-releases."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.flags import FLAGS_BY_NAME
from specguard.models import Applicability, Category, Dialect, Edit, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.rules.version_bugs._renames import (
    SPELLINGS_WITH_OWN_RULES as _EXPLAINED_ELSEWHERE,
)


def _value(values: tuple[str, ...]) -> str | tuple[str, ...] | bool:
    if not values:
        return True
    return values[0] if len(values) == 1 else tuple(values)


def _when(history, name: str, index: int) -> str:
    """Where ``name`` went or came from, seen from release ``index``: the rename, if one."""
    releases = history.flag_releases(name)
    later = [i for i in releases if i > index]
    earlier = [i for i in releases if i < index]
    for other in history.renamed(name):
        other_releases = history.flag_releases(other)
        if earlier and not later and (gone := max(earlier) + 1) in other_releases:
            return f"; {history.releases[gone]} renamed it {other}"
        if later and not earlier and index in other_releases:
            return f"; it is the later name of {other}"
    if earlier and not later:
        return f"; {history.releases[max(earlier) + 1]} removed it"
    return ""


def check(ctx: CheckContext) -> Iterator[Finding]:
    from specguard.dialects import sglang_spelling
    from specguard.versions import history  # the release history loads only here

    data = history()
    index = data.index_of(ctx.version)
    if index is None:
        return
    for item in ctx.spec.items:
        name = sglang_spelling(item.flag, item.written, item.extra, ctx.spec.dialect)
        if not name or not name.startswith("--") or name in _EXPLAINED_ELSEWHERE:
            continue
        releases = data.flag_releases(name)
        if not releases or index in data.accepted_by(name):
            continue  # unknown everywhere (VB004) or accepted here
        # The spelling this release knows for the same setting, when a rename links them.
        known_here = [other for other in data.renamed(name) if data.flag_info(other, index) is not None]
        fix = None
        step = "drop it, or check against a release that has it (--sglang-version)"
        if known_here:
            other = known_here[0]
            step = f"write {ctx.flag(other)}"
            if FLAGS_BY_NAME.get(item.written or item.flag) is None:  # an Edit cannot respell a modeled alias
                fix = fix_of(f"write {other}", Applicability.SAFE, Edit(name=item.flag, value=None), Edit(name=other, value=_value(item.values)))
        where = data.describe(releases)
        yield RULE.finding(
            f"{ctx.flag(name)} is not a flag of SGLang {ctx.env.sglang_version}: it exists {'in ' if where[0].isdigit() else ''}{where}"
            f"{_when(data, name, index)}. argparse exits with status 2 before anything loads; {step}",
            flags=(item.flag,),
            fix=fix,
        )


RULE = Rule(
    check=check,
    code="VB010",
    category=Category.START,
    name="flag-of-other-releases",
    summary="A flag that other SGLang releases accept, but not the one checked for",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Every SGLang flag of the launch against the flag history of every release from 0.4.0 "
        "to 0.5.23 (`specguard/data/sglang-history.json`, read from each release's wheel by "
        "`scripts/extract_sglang_flags.py`): a flag that the checked release's parser does not take "
        "(not even as a unique abbreviation) but other releases do. The message names the releases "
        "that have it and the rename, when the history pairs it with a spelling of this release.",
        why="SGLang's parser is argparse: an option it does not know ends the launch with "
        "'unrecognized arguments' (status 2). Flags come and go between releases, so a command "
        "written for one release fails on another. When no version is given, specguard checks a "
        "launch against the newest release that accepts all its flags; this fires when the release "
        "is given, installed, or no single release accepts them all.",
        fix="Write the spelling this release knows (a rename the history records), else drop the flag "
        "or check against a release that has it.",
        fix_safety="Safe for a recorded rename: the same argument under this release's name.",
    ),
    bad=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-V3.2-Exp", "--tp-size", "8", "--nsa-prefill-backend", "flashmla_sparse"),
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-V3.2-Exp", "--tp-size", "8", "--nsa-prefill-backend", "flashmla_sparse"),
        sglang_version="0.5.19",
    ),
    sources=(
        "specguard/data/sglang-history.json (scripts/extract_sglang_flags.py over every release's wheel)",
        "sglang 0.5.23: python/sglang/srt/server_args.py:668-720 (argparse, prefix matching)",
        "sglang 0.5.19: python/sglang/srt/server_args.py:3872-3875 (--nsa-prefill-backend, deprecated for --dsa-prefill-backend)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/fields/exec_.py:299 (--dsa-prefill-backend only)",
        "catalogue: shared/design/sglang-spec-checks.md P02",
    ),
    dialects=(Dialect.SGLANG, Dialect.SLIME),
)
