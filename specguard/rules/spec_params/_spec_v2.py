"""Which speculative worker a launch runs: the EAGLE family's V2 (overlap) worker and the switches
that choose it (--enable-beta-spec, then SGLANG_ENABLE_SPEC_V2, then SGLang's own default), read
the same way by every rule whose failure lives on one worker only."""

from __future__ import annotations

from specguard.models import Applicability, Edit, Fix
from specguard.rules.base import CheckContext, fix_of
from specguard.sglang_facts.changes import spec_v2_algorithms
from specguard.versions import history

ENV = "SGLANG_ENABLE_SPEC_V2"
BETA = "--enable-beta-spec"


def in_release(
    ctx: CheckContext, *, flag: str | None = None, env: str | None = None
) -> bool:
    """Whether this release has the flag or reads the env var (the flag history read from every wheel)."""
    data = history()
    index = data.index_of(ctx.version)
    if index is None:
        return False
    return index in (
        data.flag_releases(flag) if flag is not None else data.env_releases(env or "")
    )


def beta_spec_flag(ctx: CheckContext) -> bool:
    """--enable-beta-spec, the switch that ran the EAGLE family on the V2 worker before SGLANG_ENABLE_SPEC_V2
    (0.5.3.post2 to 0.5.4); a release without it refuses the flag instead."""
    return ctx.spec.has(BETA) and in_release(ctx, flag=BETA)


def runs_overlapped_spec_v2(ctx: CheckContext) -> bool:
    """Whether the launch runs the EAGLE family's V2 worker with the overlap scheduler on.

    With --enable-beta-spec, EAGLE forces the overlap scheduler on and EAGLE3 keeps the user's
    setting (0.5.4 server_args.py:1296-1306); the scheduler then builds EAGLEWorkerV2 for both
    (0.5.4 managers/scheduler.py:564, whenever overlap is on). For SGLANG_ENABLE_SPEC_V2 the
    resolution decides (resolution/overlap.py); it counts the variable from SPEC_V2_ENV_ADDED
    (0.5.5), so 0.5.4.post1-0.5.4.post3, which read it too, stay quiet here.
    """
    if ctx.algorithm not in spec_v2_algorithms(ctx.version):
        return False
    if beta_spec_flag(ctx):
        return ctx.algorithm == "EAGLE" or not ctx.spec.get("disable_overlap_schedule")
    return ctx.resolution.disable_overlap_schedule is False


def v2_switch(ctx: CheckContext) -> str:
    """What chose the V2 worker, as the message names it."""
    if beta_spec_flag(ctx):
        return ctx.flag(BETA)
    value = ctx.spec.env_value(ENV)
    return (
        f"{ENV}={value}"
        if value is not None
        else f"SpecV2 on by default in {ctx.version}"
    )


def back_to_v1(ctx: CheckContext) -> Fix:
    """Run the V1 worker instead: drop the switch or the variable that chose V2."""
    if beta_spec_flag(ctx):
        return fix_of(
            f"drop {BETA} (the V1 worker)",
            Applicability.UNSAFE,
            Edit(name=BETA, value=None),
        )
    return fix_of(
        f"unset {ENV} (the V1 worker)",
        Applicability.UNSAFE,
        Edit(target="env", name=ENV, value=None),
    )
