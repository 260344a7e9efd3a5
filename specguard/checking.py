"""One check, from inputs to outcome: gather the context, run every rule, fix to a fixpoint.

``check`` and ``launch`` both run it; the CLI only turns options into ``CheckInputs``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from specguard import engine
from specguard.inputs import CheckInputs, gather
from specguard.models import Applicability, Edit, Finding
from specguard.rules import ALL_RULES
from specguard.rules.base import CheckContext

if TYPE_CHECKING:  # selection is imported only when a selector or a settings file is given
    from specguard.selection import Selection


def run_check(
    inputs: CheckInputs,
    level: Applicability | None,
    notes: list[str] | None = None,
    edits: Sequence[Edit] = (),
    *,
    selection: Selection | None = None,
    suppressed: Callable[[Finding], bool] | None = None,
) -> tuple[CheckContext, engine.Outcome]:
    """``edits``: flags set outside SERVER_ARGS (``launch --host/--port``), checked as if written there.
    ``selection``: the rules to run (--select/--ignore, the settings file; None: every rule).
    ``suppressed``: the findings a ``# specguard: ignore`` silences (specguard/suppressions.py)."""
    ctx = gather(inputs, os.environ, notes)
    if edits:
        spec = ctx.spec
        for edit in edits:
            spec = spec.apply(edit)
        ctx = ctx.with_spec(spec)
    rules = ALL_RULES if selection is None else [rule for rule in ALL_RULES if selection.includes(rule)]
    selected = selection.explicitly_selects if selection is not None else None
    outcome = engine.check(rules, ctx, fix_level=level, suppressed=suppressed, selected=selected)
    if outcome.changes and ctx.env.sglang_version_inferred:
        # The report speaks of the release the corrected flags fit (the rounds re-inferred it).
        from specguard.environment import with_release_of

        ctx = CheckContext.build(ctx.spec, ctx.target, ctx.draft, with_release_of(ctx.env, outcome.corrected))
    return ctx, outcome
