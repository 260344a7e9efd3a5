"""VB004 unknown-or-abbreviated-flag."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.flags import FLAGS_BY_NAME
from specguard.models import Applicability, Category, Dialect, Edit, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.rules.examples import LLAMA31_8B, LLAMA31_8B_EAGLE3_CHAIN
from specguard.rules.version_bugs._renames import SPELLINGS_WITH_OWN_RULES as _RENAMED
from specguard.spelling import closest


def _value(values: tuple[str, ...]) -> str | tuple[str, ...] | bool:
    if not values:
        return True
    return values[0] if len(values) == 1 else tuple(values)


def check(ctx: CheckContext) -> Iterator[Finding]:
    from specguard.versions import (  # the release history loads only here
        flags_at,
        history,
        prefix_arguments,
    )

    index = history().index_of(ctx.version)
    if index is None:  # older than the oldest release the history holds
        return
    table = flags_at(index)
    for item in ctx.spec.items:
        if not item.flag or item.extra:
            continue
        name = item.written or item.flag
        if name in table or name in _RENAMED or not name.startswith("--"):
            continue
        matches = sorted(option for option in table if option.startswith(name))
        dests = prefix_arguments(name, index)
        if len(dests) != 1 and history().flag_releases(name):
            continue  # a flag of other releases: VB010 names them
        modeled = FLAGS_BY_NAME.get(name)
        intended = modeled.flag if modeled is not None and modeled.flag in table else None
        # A modeled alias, or an abbreviation the parser already read as its modeled flag, is stored
        # under the canonical flag: an Edit cannot respell it in place, so the message says what to write.
        respellable = modeled is None and item.flag not in FLAGS_BY_NAME
        if len(dests) == 1:
            full = next(o for o in matches if o.startswith("--") and len(o) == max(len(m) for m in matches))
            full = intended or full
            yield RULE.finding(
                f"{name} is not an SGLang flag; argparse accepts it as an abbreviation of {full}, but any new "
                f"flag with the same prefix makes it ambiguous. Write {full}",
                flags=(item.flag,),
                fix=fix_of(f"write {full}", Applicability.SAFE, Edit(name=item.flag, value=None), Edit(name=full, value=_value(item.values)))
                if respellable else None,
                # Info: the launch runs as written (argparse resolves the prefix); only a future
                # release's flag can break it, which is hygiene, not a failure of this launch (#25).
                severity=Severity.INFO,
            )
            continue
        if matches:
            shown = ", ".join(matches[:4]) + (", ..." if len(matches) > 4 else "")
            problem = f"ambiguous option: {name} could match {shown}"
        else:
            problem = f"unrecognized arguments: {name}"
        fix = None
        if intended is not None and respellable:
            fix = fix_of(f"write {intended}", Applicability.SAFE, Edit(name=item.flag, value=None), Edit(name=intended, value=_value(item.values)))
            hint = f"write {intended}"
        elif intended is not None:
            hint = f"write {intended}"
        else:
            close = closest(name, sorted(table), cutoff=0.75)
            hint = f"did you mean {close[0]}?" if close else "check the spelling against `python -m sglang.launch_server --help`"
        yield RULE.finding(
            f"SGLang {ctx.env.sglang_version} exits with '{problem}' (status 2) before anything loads: {hint}",
            flags=(item.flag,),
            fix=fix,
        )


RULE = Rule(
    check=check,
    code="VB004",
    category=Category.START,
    name="unknown-or-abbreviated-flag",
    summary="A flag no SGLang release's parser knows, or that this release knows only as an abbreviation",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Every SGLang flag of the launch against the parser of the release it is checked for "
        "(`specguard/data/sglang-history.json`, every release from 0.4.0 to 0.5.23, extracted from the "
        "wheels by `scripts/extract_sglang_flags.py`; 0.5.23's matches the real parser's table). A flag "
        "that other releases know is VB010's; VB003/VB005 explain the renames they cover.",
        why="SGLang's parser uses argparse prefix matching (catalogue P02): an unknown flag or a prefix "
        "of several flags (`--speculative-draft`, `--pp`) ends the launch with status 2; a prefix of "
        "exactly one flag (`--speculative-algo`) is accepted silently, and breaks the day a new flag "
        "shares the prefix.",
        fix="Write the full flag name. specguard fixes it only when the intended flag is known (a unique "
        "prefix, or a spelling specguard models as an alias); otherwise it suggests the closest name.",
        fix_safety="Safe: the same setting under its full name.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--speculative-algo", "EAGLE3",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE3_CHAIN,
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/server_args.py:668-720 (argparse, prefix matching)",
        "specguard/data/sglang-history.json (scripts/extract_sglang_flags.py over every release's wheel)",
        "catalogue: shared/design/sglang-spec-checks.md P02",
    ),
    dialects=(Dialect.SGLANG,),
)
