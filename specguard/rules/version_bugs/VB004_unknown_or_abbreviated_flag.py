"""VB004 unknown-or-abbreviated-flag."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from specguard.flags import FLAGS_BY_NAME, extracted_flags
from specguard.models import Applicability, Dialect, Edit, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.rules.version_bugs._renames import (
    CUDA_GRAPH_RENAMES,
    DRAFT_WINDOW_RENAME,
    NGRAM_DEPTH_RENAME,
    NGRAM_WINDOW_FLAGS_REMOVED,
)

# The table shipped with specguard (specguard/data/sglang-0.5.23-flags.json).
TABLE_VERSION = "0.5.23"
# Spellings VB003/VB005/VB060 explain better.
_RENAMED = frozenset(
    {r.old for r in CUDA_GRAPH_RENAMES} | {r.new for r in CUDA_GRAPH_RENAMES} | {DRAFT_WINDOW_RENAME.old}
    | {NGRAM_DEPTH_RENAME.old} | set(NGRAM_WINDOW_FLAGS_REMOVED)
)


def _value(values: tuple[str, ...]) -> str | tuple[str, ...] | bool:
    if not values:
        return True
    return values[0] if len(values) == 1 else tuple(values)


def check(ctx: CheckContext) -> Iterator[Finding]:
    table = extracted_flags(TABLE_VERSION)
    if not table:
        return
    for item in ctx.spec.items:
        if not item.flag or item.extra:
            continue
        name = item.written or item.flag
        if name in table or name in _RENAMED or not name.startswith("--"):
            continue
        matches = sorted(option for option in table if option.startswith(name))
        dests = {table[option].dest for option in matches}
        modeled = FLAGS_BY_NAME.get(name)
        intended = modeled.flag if modeled is not None and modeled.flag in table else None
        # A modeled alias is stored under its canonical flag; an Edit cannot respell it in place.
        respellable = modeled is None
        if len(dests) == 1:
            full = next(o for o in matches if o.startswith("--") and len(o) == max(len(m) for m in matches))
            full = intended or full
            yield RULE.finding(
                f"{name} is not an SGLang flag; argparse accepts it as an abbreviation of {full}, but any new "
                f"flag with the same prefix makes it ambiguous. Write {full}",
                flags=(item.flag,),
                fix=fix_of(f"write {full}", Applicability.SAFE, Edit(name=item.flag, value=None), Edit(name=full, value=_value(item.values)))
                if respellable else None,
                severity=Severity.WARNING,
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
            close = difflib.get_close_matches(name, list(table), n=1, cutoff=0.75)
            hint = f"did you mean {close[0]}?" if close else "check the spelling against `python -m sglang.launch_server --help`"
        yield RULE.finding(
            f"SGLang {ctx.env.sglang_version} exits with '{problem}' (status 2) before anything loads: {hint}",
            flags=(item.flag,),
            fix=fix,
        )


RULE = Rule(
    check=check,
    code="VB004",
    name="unknown-or-abbreviated-flag",
    summary="A flag SGLang 0.5.23's parser does not know, or knows only as an abbreviation",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Every SGLang flag of the launch (not slime's own flags) against the parser table "
        "extracted from SGLang 0.5.23 (`specguard/data/sglang-0.5.23-flags.json`). Only for that "
        "version and the sglang dialect; for other versions specguard does not have the full table "
        "and stays quiet (VB003/VB005 cover the known renames).",
        why="SGLang's parser uses argparse prefix matching (catalogue P02): an unknown flag or a prefix "
        "of several flags (`--speculative-draft`, `--pp`) ends the launch with status 2; a prefix of "
        "exactly one flag (`--speculative-algo`) is accepted silently, and breaks the day a new flag "
        "shares the prefix.",
        fix="Write the full flag name. specguard fixes it only when the intended flag is known (a unique "
        "prefix, or a spelling specguard models as an alias); otherwise it suggests the closest name.",
        fix_safety="Safe: the same setting under its full name.",
    ),
    bad=Example(
        argv=("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algo", "EAGLE3",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4"),
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4"),
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/server_args.py:668-720 (argparse, prefix matching)",
        "specguard/data/sglang-0.5.23-flags.json",
        "catalogue: shared/design/sglang-spec-checks.md P02",
    ),
    sglang_versions="==0.5.23",
    dialects=(Dialect.SGLANG,),
)
