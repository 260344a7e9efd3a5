"""FX442 dflash-overlap-refuses-hidden-states."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, RequestFeature, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.rules.hybrid._hybrid import is_mamba_radix_target, runs_extra_buffer

RETURN_HIDDEN = "--enable-return-hidden-states"
NO_OVERLAP = "--disable-overlap-schedule"
# A target config's layer_types entry other than these (linear_attention, conv, mamba) marks a hybrid target.
ATTENTION_LAYER_TYPES = frozenset({"full_attention", "sliding_attention"})
# The message the scheduler aborts such a request with (speculative/dflash_utils.py validate_dflash_request):
# "DFLASH speculative decoding does not support return_hidden_states yet."


def mamba_turns_overlap_off(ctx: CheckContext) -> bool:
    """Whether a hybrid mamba target's radix cache may resolve to no_buffer, which turns the overlap scheduler off.

    With the radix cache on, a strategy that does not resolve to extra_buffer (an architecture without it, or a
    --linear-attn-backend other than triton, which only hybrid targets read) sets disable_overlap_schedule (0.5.14
    server_args.py:4380-4395; 0.5.23 arg_groups/overrides.py:477-486); the resolution does not model that, so stay
    quiet for a target the HY tables or its own layer_types show to be hybrid.
    """
    if ctx.spec.has("--disable-radix-cache") or runs_extra_buffer(ctx):
        return False
    linear = [
        item.values[0]
        for item in ctx.spec.items
        if item.flag == "--linear-attn-backend" and item.values
    ]
    layer_types = ctx.target.layer_types if ctx.target is not None else None
    return (
        is_mamba_radix_target(ctx)
        or (bool(linear) and linear[-1] != "triton")
        or any(kind not in ATTENTION_LAYER_TYPES for kind in layer_types or ())
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DFLASH"
        or not ctx.spec.has(RETURN_HIDDEN)
        or ctx.resolution.disable_overlap_schedule is not False
        or mamba_turns_overlap_off(ctx)
    ):
        return
    yield RULE.finding(
        f"{ctx.flag(RETURN_HIDDEN)} with DFLASH on the overlap scheduler in SGLang {ctx.version}: every request "
        "that asks for return_hidden_states is aborted with 'DFLASH speculative decoding does not support "
        f"return_hidden_states yet.' Add {ctx.flag(NO_OVERLAP)} (slower) for SGLang to accept them, or drop "
        f"{ctx.flag(RETURN_HIDDEN)}",
        flags=(RETURN_HIDDEN, "--speculative-algorithm"),
        fix=set_flags(
            f"add {NO_OVERLAP}", Applicability.UNSAFE, disable_overlap_schedule=True
        ),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="FX442",
    category=Category.CRASH,
    needs=RequestFeature.HIDDEN_STATES,
    name="dflash-overlap-refuses-hidden-states",
    summary="DFLASH on the overlap scheduler aborts requests for hidden states (0.5.14+)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with `--enable-return-hidden-states` and the overlap scheduler on "
        "(no `--disable-overlap-schedule`), SGLang 0.5.14 or later.",
        why="From 0.5.14 DFLASH keeps the overlap scheduler (0.5.13 `arg_groups/speculative_hook.py:240-243` still "
        "forced it off), and the scheduler checks each DFLASH request with `validate_dflash_request(req, "
        "self.enable_overlap)`, which returns 'DFLASH speculative decoding does not support return_hidden_states "
        "yet.' when the overlap scheduler is on and the request asks for hidden states; the request is then "
        "finished with an abort (0.5.14 `speculative/dflash_utils.py:807-825`, `managers/scheduler.py:2120-2126`; "
        "0.5.23 `dflash_utils.py:1108-1112`, `scheduler.py:3144-3150`, `enable_overlap` from "
        "`disable_overlap_schedule` at :500-502). A hybrid mamba target whose radix cache resolves to no_buffer "
        "runs without the overlap scheduler (0.5.14 `server_args.py:4380-4395`, 0.5.23 "
        "`arg_groups/overrides.py:477-486`), so this rule stays quiet for a hybrid target (in the HY rules' table, or whose "
        "`layer_types` name a layer other than full or sliding attention, or with a `--linear-attn-backend` other "
        "than triton) unless its strategy resolves to extra_buffer. 0.5.13's "
        "`validate_dflash_request` had no such check (`dflash_utils.py:642-657`). The flag says the clients will ask for hidden states; each such request "
        "fails.",
        fix="Add `--disable-overlap-schedule`, or drop `--enable-return-hidden-states` if no client needs them.",
        fix_safety="Unsafe: turning the overlap scheduler off slows every request.",
    ),
    bad=Example(argv=(*QWEN3_8B_DFLASH, RETURN_HIDDEN), sglang_version="0.5.14"),
    good=Example(
        argv=(*QWEN3_8B_DFLASH, RETURN_HIDDEN, NO_OVERLAP), sglang_version="0.5.14"
    ),
    sources=(
        "sglang 0.5.13: python/sglang/srt/arg_groups/speculative_hook.py:240-243",
        "sglang 0.5.13: python/sglang/srt/speculative/dflash_utils.py:642-657",
        "sglang 0.5.14: python/sglang/srt/speculative/dflash_utils.py:807-825",
        "sglang 0.5.14: python/sglang/srt/managers/scheduler.py:337, 2120-2126",
        "sglang 0.5.14: python/sglang/srt/server_args.py:4338-4353, 4380-4395",
        "sglang 0.5.23: python/sglang/srt/speculative/dflash_utils.py:1108-1112",
        "sglang 0.5.23: python/sglang/srt/managers/scheduler.py:500-502, 3144-3150",
        "sglang 0.5.23: python/sglang/srt/arg_groups/overrides.py:438-450, 477-486",
    ),
    sglang_versions=">=0.5.14",
    log_signatures=(
        r"DFLASH speculative decoding does not support return_hidden_states yet",
    ),
)
