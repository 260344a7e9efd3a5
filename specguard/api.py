"""``specguard.check``: the check as a Python call, for tools that would otherwise run the CLI
and parse its JSON. It builds the same inputs ``specguard check`` builds from its options, runs
the same rules, and returns the records the JSON output is written from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from specguard.engine import Outcome
from specguard.models import Finding
from specguard.records import Record
from specguard.rules.base import CheckContext
from specguard.spec import LaunchSpec


class CheckResult(Record, kw_only=False):
    """One checked launch: what was found (``outcome``) about what was read (``context``)."""

    outcome: Outcome
    context: CheckContext

    @property
    def ok(self) -> bool:
        return self.outcome.exit_code == 0

    @property
    def exit_code(self) -> int:
        """What ``specguard check`` exits with: 0 no error finding, 1 error findings remain."""
        return self.outcome.exit_code

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.outcome.findings

    @property
    def errors(self) -> tuple[Finding, ...]:
        return self.outcome.errors

    @property
    def corrected(self) -> LaunchSpec:
        return self.outcome.corrected

    def to_json(self) -> dict[str, Any]:
        """The document ``specguard check --format json`` prints for this launch (secrets masked)."""
        from specguard.report import outcome_json

        return outcome_json(self.outcome, self.context)


def check(
    argv: Sequence[str],
    *,
    target: str | None = None,
    draft: str | None = None,
    version: str | None = None,
    gpu: str | None = None,
    gpu_count: int | None = None,
    offline: bool = False,
    fix: bool = False,
    unsafe_fixes: bool = False,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    extend_select: Sequence[str] = (),
) -> CheckResult:
    """Check one launch given as SERVER_ARGS (``["--model-path", "...", ...]``), as
    ``specguard check [OPTIONS] -- ARGV`` does. ``version``: the SGLang release (--sglang-version);
    the rest are the CLI options of the same names (``select``, ``ignore``, ``extend_select``:
    codes, prefixes or categories, after the settings file closest to the current folder, as the
    CLI reads them). An unreadable input raises ``specguard.errors.InputError`` (the CLI's
    one-line error, exit code 2)."""
    from specguard.checking import run_check
    from specguard.cli.check import build_inputs, fix_level
    from specguard.project_config import selection_for_command

    inputs = build_inputs(
        list(argv), preset=None, target=target, draft=draft, dialect=None, sglang_version=version,
        gpu=gpu, gpu_count=gpu_count, env=None, offline=offline,
    )
    selection = selection_for_command(
        None, None, None if select is None else [list(select)], [list(ignore)] if ignore else None, [list(extend_select)] if extend_select else None
    )
    context, outcome = run_check(inputs, fix_level(fix, unsafe_fixes), selection=selection)
    return CheckResult(outcome, context)
