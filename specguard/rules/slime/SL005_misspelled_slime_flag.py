"""SL005 misspelled-slime-flag."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.dialects import SLIME_PREFIX
from specguard.models import Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.slime_flags import SlimeFlags, newest_slime_flags, slime_flags
from specguard.spelling import closest

# difflib's ratio a near miss must reach. At 0.9 none of Megatron-LM's own flags (d98e8a64dd,
# megatron/) and no flag of slime's own scripts/ and examples/ is taken for a misspelled slime flag;
# at 0.85 `--rope-type` read as `--opd-type` and `--rl-partial-rollouts` as `--partial-rollout`.
NEAR_MISS = 0.9

# Where Megatron's parser drops an unknown argument: parse_known_args() under ignore_unknown_args.
MEGATRON_DROPS = "NVIDIA/Megatron-LM d98e8a64dd: megatron/training/arguments.py:129-130 (parse_args: parse_known_args() when ignore_unknown_args)"


def _known(ctx: CheckContext) -> tuple[SlimeFlags, str]:
    """slime's flags at the launch's slime, and how the message names that slime."""
    named = ctx.env.slime_version
    found = slime_flags(named) if named else None
    if found is not None:
        return found, f"slime {found.named}"
    newest = newest_slime_flags()
    if named:
        return newest, f"slime {named} is not known to specguard, so the newest slime it knows, {newest.commit}"
    return newest, f"no --slime-version given, so the newest slime specguard knows, {newest.commit}"


def check(ctx: CheckContext) -> Iterator[Finding]:
    candidates = [
        item for item in ctx.spec.items
        if item.extra and item.flag.startswith("--") and not item.flag.startswith(SLIME_PREFIX)
    ]
    if not candidates:
        return
    known, which = _known(ctx)
    if known.ignores_unknown is None:
        return  # that slime let Megatron's parser stop on an unknown flag: nothing passes silently
    for item in candidates:
        if item.flag in known.flags or item.flag.startswith(known.prefixes):
            continue
        close = closest(item.flag, known.flags, cutoff=NEAR_MISS)
        if not close:
            continue  # most likely one of Megatron's own flags, which specguard does not list
        yield RULE.finding(
            f"slime does not know {item.flag} and passes unknown flags on to Megatron, which ignores them: "
            f"did you mean {close[0]}? (flags of {which}; {known.ignores_unknown} calls Megatron's parse_args "
            "with ignore_unknown_args=True)",
            flags=(item.flag,),
        )


RULE = Rule(
    check=check,
    code="SL005",
    category=Category.WRONG_OUTPUT,
    name="misspelled-slime-flag",
    summary="A slime flag misspelled: slime hands it to Megatron, which drops it without a word",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="Fires for a flag of a slime launch that is not `--sglang-*`, is not one of slime's own flags at "
        "the launch's slime (`--slime-version`; without it, the newest slime specguard knows, and the message "
        "says so), and is within a small edit distance (difflib ratio >= 0.9) of one of them "
        "(`--rollout-max-respons-len` for `--rollout-max-response-len`). slime's flags per commit are read "
        "from its own `add_argument` calls (`specguard/data/slime-flags.json`, `scripts/extract_slime_flags.py`). "
        "Only near misses of slime's own flags are reported: a slime launch also carries Megatron-LM's flags "
        "(`--tensor-model-parallel-size`), which are legitimate there and which specguard does not list, so a "
        "flag far from every slime flag is taken for one of Megatron's. Quiet at a slime that still let "
        "Megatron's parser stop on an unknown flag (before 96118d0c2, 2026-02-20).",
        why="slime parses its own and Megatron's flags with Megatron's `parse_args(..., ignore_unknown_args=True)` "
        "(`slime/backends/megatron_utils/arguments.py`), which reads the command line with `parse_known_args()` "
        "and drops what it does not know. A misspelled slime flag therefore disappears without a word and slime "
        "runs with that setting's default: the rollout length, batch size or path the user set never takes effect.",
        fix="Rename the flag to the one suggested. No automatic fix.",
        fix_safety="No fix: specguard does not know the value types of slime's flags, so it cannot move the value over.",
    ),
    bad=Example(
        argv=("--hf-checkpoint", "/root/MiMo-7B-RL", "--rollout-max-respons-len", "8192",
              "--sglang-speculative-algorithm", "EAGLE"),
        slime_version="v0.3.1",
        dialect=Dialect.SLIME,
    ),
    good=Example(
        argv=("--hf-checkpoint", "/root/MiMo-7B-RL", "--rollout-max-response-len", "8192",
              "--tensor-model-parallel-size", "2", "--sglang-speculative-algorithm", "EAGLE"),
        slime_version="v0.3.1",
        dialect=Dialect.SLIME,
    ),
    sources=(
        ("THUDM/slime 624b824a8 (2026-08-21): slime/backends/megatron_utils/arguments.py:195 "
         "(megatron_parse_args: _megatron_parse_args(..., ignore_unknown_args=True)); v0.3.1 a6272da0d: same file, line 186"),
        ("THUDM/slime 96118d0c2 (2026-02-20) 'separate sglang argparse from megatron with two-phase parsing': "
         "the first commit whose Megatron parse ignores unknown arguments"),
        MEGATRON_DROPS,
        "specguard/data/slime-flags.json (slime/utils/arguments.py and the slime modules it imports, per commit)",
    ),
    dialects=(Dialect.SLIME,),
)
