"""SL003 unknown-sglang-flag."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.errors import InputError
from specguard.flags import FLAGS_BY_NAME, extracted_flags
from specguard.models import (
    Applicability,
    Category,
    Dialect,
    Edit,
    Finding,
    FlagValue,
    Severity,
)
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.rules.slime._slime import (
    SKIPPED_DESTS_HEAD,
    SLIME_HEAD,
    SLIME_OWN_SGLANG_FLAGS,
    written_as_sglang,
)
from specguard.spec import convert
from specguard.spelling import closest


def _typed(flag: str, values: tuple[str, ...]) -> FlagValue:
    """The value as the engine compares it: typed for a modeled flag, raw otherwise."""
    modeled = FLAGS_BY_NAME.get(flag)
    if modeled is not None:
        try:
            typed = convert(modeled, values)
        except InputError:
            typed = None
        if typed is not None:
            return tuple(str(v) for v in typed) if isinstance(typed, list) else typed
    if not values:
        return True
    return values[0] if len(values) == 1 else tuple(values)


def check(ctx: CheckContext) -> Iterator[Finding]:
    table = extracted_flags(ctx.env.sglang_version)
    if not table:
        return  # no flag table for this SGLang version: nothing to compare with
    registered = {opt: e.dest for opt, e in table.items() if e.dest not in SKIPPED_DESTS_HEAD}
    for item in ctx.spec.items:
        if not item.flag or item.extra or item.flag in table or item.flag in SLIME_OWN_SGLANG_FLAGS:
            continue
        spelling = written_as_sglang(item)
        if spelling is None:
            continue
        prefixed = [opt for opt in registered if opt.startswith(item.flag)]
        dests = {registered[opt] for opt in prefixed}
        if len(dests) == 1:
            continue  # argparse accepts a unique abbreviation
        if len(dests) > 1:
            names = ", ".join("--sglang-" + o[2:] for o in sorted(prefixed)[:4])
            yield RULE.finding(
                f"{spelling} is ambiguous for slime's parser (it could be {names}, ...): argparse stops with "
                "'ambiguous option'. Write the full flag",
                flags=(item.flag,),
            )
            continue
        close = closest(item.flag, registered, cutoff=0.75)
        suggestion = "--sglang-" + close[0][2:] if close else None
        fix = None
        if close:
            value = _typed(close[0], item.values)
            fix = fix_of(
                f"rename {spelling} to {suggestion}",
                Applicability.UNSAFE,
                Edit(name=item.flag, value=None),
                Edit(name=close[0], value=value),
            )
        yield RULE.finding(
            f"{spelling} is not an SGLang {ctx.env.sglang_version} flag, and slime HEAD drops unknown --sglang-* "
            "flags silently (parse_known_args); older slime stops with 'unrecognized arguments'. "
            + (f"Did you mean {suggestion}?" if suggestion else "Check the spelling against `python -m sglang.launch_server --help`"),
            flags=(item.flag,),
            fix=fix,
        )


RULE = Rule(
    check=check,
    code="SL003",
    category=Category.START,
    name="unknown-sglang-flag",
    summary="A --sglang-* flag that is not an SGLang flag (slime drops it silently)",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Fires for `--sglang-X` where `--X` is not in SGLang's own flag table for the version checked "
        "(`specguard/data/sglang-<version>-flags.json`), is not a unique abbreviation of one, and is not one "
        "of slime's own `--sglang-router-*`, `--sglang-server-concurrency` or `--sglang-config`. An "
        "ambiguous abbreviation is an error too. Skipped (forbidden) flags are SL001's.",
        why=f"slime HEAD ({SLIME_HEAD}) parses the `--sglang-*` flags with a separate parser's "
        "`parse_known_args()` and Megatron's parser ignores unknown arguments, so a misspelled flag "
        "(`--sglang-speculative-eagle-top-k`) disappears without a word and SGLang runs with its default. "
        "argparse's prefix matching still applies: a unique prefix (`--sglang-speculative-num-step`) is accepted, an ambiguous one exits.",
        fix="Rename to the closest SGLang flag (difflib), keeping the value.",
        fix_safety="Unsafe: the renamed flag starts to take effect.",
    ),
    bad=Example(
        argv=("--hf-checkpoint", "/root/MiMo-7B-RL", "--sglang-speculative-algorithm", "EAGLE",
              "--sglang-speculative-num-steps", "3", "--sglang-speculative-eagle-top-k", "1",
              "--sglang-speculative-num-draft-tokens", "4"),
        dialect=Dialect.SLIME,
    ),
    good=Example(
        argv=("--hf-checkpoint", "/root/MiMo-7B-RL", "--sglang-speculative-algorithm", "EAGLE",
              "--sglang-speculative-num-steps", "3", "--sglang-speculative-eagle-topk", "1",
              "--sglang-speculative-num-draft-tokens", "4"),
        dialect=Dialect.SLIME,
    ),
    sources=(
        "design: dialects.md §1.1 (mapping), §1.4 (parse_known_args: silently dropped)",
        f"THUDM/slime {SLIME_HEAD}: slime/backends/sglang_utils/arguments.py (sglang_parse_args)",
        "specguard/data/sglang-0.5.23-flags.json (ServerArgs.add_cli_args)",
    ),
    dialects=(Dialect.SLIME,),
)
