"""One check, from inputs to outcome: gather the context, run every rule, fix to a fixpoint.

``check`` and ``launch`` both run it; the CLI only turns options into ``CheckInputs``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from specguard import engine
from specguard.inputs import CheckInputs, gather
from specguard.models import Applicability, Edit
from specguard.rules import ALL_RULES
from specguard.rules.base import CheckContext


def run_check(
    inputs: CheckInputs, level: Applicability | None, notes: list[str] | None = None, edits: Sequence[Edit] = ()
) -> tuple[CheckContext, engine.Outcome]:
    """``edits``: flags set outside SERVER_ARGS (``launch --host/--port``), checked as if written there."""
    ctx = gather(inputs, os.environ, notes)
    if edits:
        spec = ctx.spec
        for edit in edits:
            spec = spec.apply(edit)
        ctx = ctx.with_spec(spec)
    outcome = engine.check(ALL_RULES, ctx, fix_level=level)
    if outcome.changes and ctx.env.sglang_version_inferred:
        # The report speaks of the release the corrected flags fit (the rounds re-inferred it).
        from specguard.versions import inferred_environment

        ctx = CheckContext.build(ctx.spec, ctx.target, ctx.draft, inferred_environment(ctx.env, outcome.corrected))
    return ctx, outcome
