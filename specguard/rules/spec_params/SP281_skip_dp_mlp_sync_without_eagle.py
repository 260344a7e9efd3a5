"""SP281 skip-dp-mlp-sync-without-eagle."""

from __future__ import annotations

from collections.abc import Iterator

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
from specguard.rules.examples import LLAMA31_8B_EAGLE, LLAMA31_8B_EAGLE3

SKIP = "--speculative-skip-dp-mlp-sync"


def check(ctx: CheckContext) -> Iterator[Finding]:
    # The assert runs in handle_speculative_decoding whether or not speculation is on, after NEXTN
    # is aliased to EAGLE, so only EAGLE (or NEXTN) passes.
    if not ctx.spec.has(SKIP) or ctx.algorithm == "EAGLE":
        return
    launch = ctx.algorithm or "no speculative algorithm"
    yield RULE.finding(
        f"{ctx.flag(SKIP)} with {launch}: SGLang {ctx.version} asserts at argument time that the algorithm is EAGLE "
        f"(AssertionError '--speculative-skip-dp-mlp-sync is only supported with speculative_algorithm == EAGLE, "
        f"got {ctx.algorithm}.'), so the server does not start. Drop {ctx.flag(SKIP)}: only EAGLE/NEXTN skip "
        "the DP MLP sync",
        flags=(SKIP,),
        fix=fix_of(f"drop {SKIP}", Applicability.SAFE, Edit(name=SKIP, value=None)),
    )


RULE = Rule(
    check=check,
    code="SP281",
    category=Category.START,
    name="skip-dp-mlp-sync-without-eagle",
    summary="--speculative-skip-dp-mlp-sync with an algorithm other than EAGLE/NEXTN (or none) fails an assert at start (0.5.11-0.5.22)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    supersedes=("SP006",),
    docs=RuleDocs(
        what="`--speculative-skip-dp-mlp-sync` with `--speculative-algorithm` EAGLE3, STANDALONE, NGRAM, DFLASH, "
        "DSPARK or any algorithm but EAGLE/NEXTN, or with no algorithm, SGLang 0.5.11 through 0.5.22.",
        why="0.5.11 added the flag (server_args.py:534, 5541-5547) with an assert in `_handle_speculative_decoding`, "
        'right after NEXTN is renamed EAGLE: `assert self.speculative_algorithm == "EAGLE", '
        '"--speculative-skip-dp-mlp-sync is only supported with speculative_algorithm == EAGLE, got ..."` '
        "(0.5.11 server_args.py:3310-3317; 0.5.12.post1 :3584-3587). 0.5.13 moved it to "
        "`handle_speculative_decoding` (arg_groups/speculative_hook.py:105-109), which runs with or without an "
        "algorithm; 0.5.22 keeps it (:238-242). The flag is gone in 0.5.23 (arg_groups/fields/spec.py has no "
        "speculative_skip_dp_mlp_sync) and absent from 0.5.10.post1.",
        fix="Drop the flag: the scheduler reads it (managers/scheduler.py) only to skip the DP MLP sync that EAGLE "
        "with attention DP would run.",
        fix_safety="Safe: the launch cannot start with it, and without it the algorithm runs as it would have.",
    ),
    bad=Example(
        argv=(
            *LLAMA31_8B_EAGLE3,
            "--enable-dp-attention",
            "--dp-size",
            "2",
            "--tp-size",
            "2",
            SKIP,
        ),
        sglang_version="0.5.11",
    ),
    good=Example(
        argv=(
            *LLAMA31_8B_EAGLE,
            "--enable-dp-attention",
            "--dp-size",
            "2",
            "--tp-size",
            "2",
            SKIP,
        ),
        sglang_version="0.5.11",
    ),
    sources=(
        "sglang 0.5.10.post1: python/sglang/srt/server_args.py (no speculative_skip_dp_mlp_sync)",
        "sglang 0.5.11: python/sglang/srt/server_args.py:534,3310-3317,5541-5547",
        "sglang 0.5.12.post1: python/sglang/srt/server_args.py:3584-3587",
        "sglang 0.5.13: python/sglang/srt/arg_groups/speculative_hook.py:105-109",
        "sglang 0.5.22: python/sglang/srt/arg_groups/speculative_hook.py:238-242",
        "sglang 0.5.23: python/sglang/srt/arg_groups/fields/spec.py (no speculative_skip_dp_mlp_sync)",
    ),
    sglang_versions=">=0.5.11,<=0.5.22",
    log_signatures=(
        r"--speculative-skip-dp-mlp-sync is only supported with speculative_algorithm == EAGLE",
    ),
)
