"""Run the rules, apply the fixes that are allowed, to a fixpoint, and say what changed.

Pure: the engine takes a ``CheckContext`` and rules, and returns data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from specguard.models import (
    Applicability,
    Change,
    Conflict,
    Finding,
    FlagValue,
    Severity,
)
from specguard.records import Record, replace
from specguard.rules.base import CheckContext, Rule
from specguard.spec import LaunchSpec

# One fix per round; a launch with more fixes than this is reported with the rest unapplied.
MAX_FIX_ROUNDS = 64


class Outcome(Record):
    findings: tuple[Finding, ...]
    changes: tuple[Change, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    # Findings a `# specguard: ignore[CODE]` on their line silenced: shown only on request, never
    # counted for the exit code, and never fixed (the user said to leave that line alone).
    suppressed: tuple[Finding, ...] = ()
    original: LaunchSpec  # the launch as given
    corrected: LaunchSpec  # the launch after the fixes that were applied

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity is Severity.ERROR and not f.resolved)

    @property
    def exit_code(self) -> int:
        return 1 if self.errors else 0


def run_rules(rules: Sequence[Rule], ctx: CheckContext, selected: Callable[[Rule], bool] | None = None) -> list[Finding]:
    """Every rule's findings, at the severity the policy allows (severity.py); ``selected`` says
    which rules the user selected explicitly (None: none), which lifts the quiet categories."""
    from specguard.severity import apply_policy

    findings: list[Finding] = []
    for rule in rules:
        if rule.applies_to(ctx):
            explicit = selected is not None and selected(rule)
            findings.extend(apply_policy(rule, f, ctx, explicitly_selected=explicit) for f in rule.check(ctx))
    return _one_per_cause(findings, rules)


def _one_per_cause(findings: list[Finding], rules: Sequence[Rule]) -> list[Finding]:
    """Without the findings another rule's finding supersedes (``Rule.supersedes``): one cause,
    told once, by the more specific rule. A superseded rule still speaks when the superseding
    one is not run (deselected) or says nothing about the same flags."""
    supersedes = {rule.code: frozenset(rule.supersedes) for rule in rules if rule.supersedes}
    if not supersedes:
        return findings
    covering = [(supersedes[f.code], frozenset(f.flags)) for f in findings if f.code in supersedes]
    return [f for f in findings if not any(f.code in codes and set(f.flags) <= flags for codes, flags in covering)]


def _allowed(applicability: Applicability, level: Applicability | None) -> bool:
    if level is None:
        return False
    return level == Applicability.UNSAFE or applicability == Applicability.SAFE


def check(
    rules: Sequence[Rule], ctx: CheckContext, *, fix_level: Applicability | None = None, suppressed: Callable[[Finding], bool] | None = None,
    selected: Callable[[Rule], bool] | None = None,
) -> Outcome:
    """All findings; with ``fix_level`` the fixes up to that applicability are applied to a fixpoint.

    Fixes are applied in rounds of one: the first applicable fix (errors first, then by code)
    is applied, then every rule runs again on the launch as it now stands, so no fix is computed
    on values another fix has just changed (a memory fix sized for 131072 tokens must not land
    next to the context cap to 2048). Two fixes that set one flag to different values are a
    conflict: neither is applied, and the conflict is reported if it is still there when no
    other fix applies. A fix is applied whole or not at all.
    """
    original = ctx.spec
    changes: list[Change] = []
    conflicts: dict[tuple[str, str], Conflict] = {}
    seen: dict[tuple[str, str], Finding] = {}
    findings, hidden = _split(run_rules(rules, ctx, selected), suppressed)
    for _ in range(MAX_FIX_ROUNDS):
        for finding in findings:
            seen.setdefault((finding.code, finding.message), finding)
        candidates = _fix_candidates(findings, ctx, fix_level)
        proposals = _proposals(candidates)
        blocked = {key for key, values in proposals.items() if len(values) > 1}
        applicable = [f for f in candidates if not any(edit.key() in blocked for edit in f.fix.edits)]  # type: ignore[union-attr]
        if not applicable:
            conflicts.update((key, _conflict(key, proposals[key])) for key in blocked)
            break
        ctx = ctx.with_spec(_apply(applicable[0], ctx.spec, changes))
        findings, hidden = _split(run_rules(rules, ctx, selected), suppressed)

    remaining = {(f.code, f.message) for f in findings}
    # A finding that is gone after the fixes was resolved by them: its own fix, or another
    # rule's change that removed its cause. Both are reported resolved; only the first is applied,
    # so no report claims edits the corrected launch does not hold.
    resolved = [
        replace(finding, resolved=True, applied=_fix_holds(finding, ctx.spec))
        for key, finding in seen.items()
        if key not in remaining
    ]
    ordered = sorted([*resolved, *findings], key=_order)
    return Outcome(
        findings=tuple(ordered),
        changes=tuple(changes),
        conflicts=tuple(conflicts.values()),
        suppressed=tuple(sorted(hidden, key=_order)),
        original=original,
        corrected=ctx.spec,
    )


def _split(findings: list[Finding], suppressed: Callable[[Finding], bool] | None) -> tuple[list[Finding], list[Finding]]:
    """(the findings reported, those suppressed)."""
    if suppressed is None:
        return findings, []
    return [f for f in findings if not suppressed(f)], [f for f in findings if suppressed(f)]


def _fix_holds(finding: Finding, spec: LaunchSpec) -> bool:
    """Whether each of the finding's edits is in ``spec`` (read back as typed, so '8' is 8)."""
    return finding.fix is not None and all(spec.current(edit) == spec.apply(edit).current(edit) for edit in finding.fix.edits)


def _fix_candidates(findings: Sequence[Finding], ctx: CheckContext, fix_level: Applicability | None) -> list[Finding]:
    """The findings whose fix is allowed at ``fix_level`` and would still change something, in order."""
    return sorted(
        (
            f
            for f in findings
            if f.fix is not None
            and _allowed(f.fix.applicability, fix_level)
            and any(ctx.spec.current(edit) != edit.value for edit in f.fix.edits)
        ),
        key=_order,
    )


def _proposals(candidates: Sequence[Finding]) -> dict[tuple[str, str], dict[FlagValue, list[str]]]:
    """For each flag or variable some fix sets: each value proposed, and the rules proposing it."""
    proposals: dict[tuple[str, str], dict[FlagValue, list[str]]] = {}
    for finding in candidates:
        for edit in finding.fix.edits:  # type: ignore[union-attr]
            proposals.setdefault(edit.key(), {}).setdefault(edit.value, []).append(finding.code)
    return proposals


def _conflict(key: tuple[str, str], proposed: dict[FlagValue, list[str]]) -> Conflict:
    return Conflict(
        target=key[0],  # type: ignore[arg-type]
        name=key[1],
        proposals=tuple((code, value) for value, codes in proposed.items() for code in codes),
    )


def _apply(finding: Finding, spec: LaunchSpec, changes: list[Change]) -> LaunchSpec:
    """The launch with one finding's fix applied whole; each edit that changes a value is recorded."""
    for edit in finding.fix.edits:  # type: ignore[union-attr]
        old = spec.current(edit)
        if old == edit.value:
            continue
        spec = spec.apply(edit)
        changes.append(Change(target=edit.target, name=edit.name, old=old, new=edit.value, rule=finding.code))
    return spec


_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def _order(finding: Finding) -> tuple[int, str]:
    return (_SEVERITY_ORDER[finding.severity], finding.code)

