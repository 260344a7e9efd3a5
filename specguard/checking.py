"""One check, from inputs to outcome: gather the context, run every rule, fix to a fixpoint.

``check`` and ``launch`` both run it; the CLI only turns options into ``CheckInputs``.
"""

from __future__ import annotations

import os

from specguard import engine
from specguard.inputs import CheckInputs, gather
from specguard.models import Applicability
from specguard.rules import ALL_RULES
from specguard.rules.base import CheckContext


def run_check(inputs: CheckInputs, level: Applicability | None, notes: list[str] | None = None) -> tuple[CheckContext, engine.Outcome]:
    ctx = gather(inputs, os.environ, notes)
    outcome = engine.check(ALL_RULES, ctx, fix_level=level)
    if outcome.changes and ctx.env.sglang_version_inferred:
        # The report speaks of the release the corrected flags fit (the rounds re-inferred it).
        from specguard.versions import inferred_environment

        ctx = CheckContext.build(ctx.spec, ctx.target, ctx.draft, inferred_environment(ctx.env, outcome.corrected))
    return ctx, outcome
