"""The engine on synthetic rules: fix rounds, conflicts, fix levels and the round cap.

The real rules exercise the engine only where real launches lead; these rules exist to drive it
into the corners it must get right: a fix chain that needs a second round, two rules that set one
flag to different values, a fix that removes another finding's cause, and a rule that never settles.
"""

from __future__ import annotations

from collections.abc import Iterator

from specguard import engine
from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)

MODEL = ("--model-path", "/models/target")
DOCS = RuleDocs(what="synthetic", why="drives the engine", fix="synthetic", fix_safety="synthetic")


def _rule(code: str, check, severity: Severity = Severity.ERROR) -> Rule:
    return Rule(
        code=code,
        name=f"synthetic-{code.lower()}",
        summary="a synthetic rule for the engine's tests",
        severity=severity,
        docs=DOCS,
        bad=Example(argv=MODEL),
        good=Example(argv=MODEL),
        sources=("tests/core/test_engine.py",),
        check=check,
        category=Category.START,
        fix_availability=FixAvailability.SOMETIMES,
    )


def _ctx(*argv: str) -> CheckContext:
    return Example(argv=(*MODEL, *argv)).context()


def _needs_steps(ctx: CheckContext) -> Iterator[Finding]:
    """Round 1: no steps given -> set 3 (safe)."""
    if ctx.spec.get("speculative_num_steps") is None:
        fix = set_flags("set steps 3", Applicability.SAFE, speculative_num_steps=3)
        yield STEPS.finding("steps missing", flags=("--speculative-num-steps",), fix=fix)


def _tokens_follow_steps(ctx: CheckContext) -> Iterator[Finding]:
    """Round 2: only once steps are set, the draft tokens must be steps + 1 (safe)."""
    steps = ctx.spec.get("speculative_num_steps")
    if steps is not None and ctx.spec.get("speculative_num_draft_tokens") != steps + 1:
        fix = set_flags("tokens = steps + 1", Applicability.SAFE, speculative_num_draft_tokens=steps + 1)
        yield TOKENS.finding("tokens do not follow steps", flags=("--speculative-num-draft-tokens",), fix=fix)


STEPS = _rule("ZZ001", _needs_steps)
TOKENS = _rule("ZZ002", _tokens_follow_steps)


def test_a_fix_chain_that_needs_two_rounds_is_applied_whole():
    outcome = engine.check([TOKENS, STEPS], _ctx("--speculative-algorithm", "EAGLE"), fix_level=Applicability.SAFE)
    assert [(c.name, c.old, c.new, c.rule) for c in outcome.changes] == [
        ("--speculative-num-steps", None, 3, "ZZ001"),
        ("--speculative-num-draft-tokens", None, 4, "ZZ002"),
    ]
    assert outcome.corrected.get("speculative_num_steps") == 3
    assert outcome.corrected.get("speculative_num_draft_tokens") == 4
    assert outcome.original.get("speculative_num_steps") is None  # what the user wrote is kept
    assert {f.code: f.applied for f in outcome.findings} == {"ZZ001": True, "ZZ002": True}
    assert outcome.exit_code == 0 and not outcome.conflicts


def test_without_a_fix_level_nothing_changes_and_errors_count():
    outcome = engine.check([TOKENS, STEPS], _ctx("--speculative-algorithm", "EAGLE"))
    assert outcome.changes == ()
    assert outcome.corrected == outcome.original
    # ZZ002 cannot fire before steps exist: only ZZ001 is reported, unapplied.
    assert [(f.code, f.applied) for f in outcome.findings] == [("ZZ001", False)]
    assert outcome.exit_code == 1


def _wants(code: str, value: int, applicability: Applicability = Applicability.SAFE):
    def check(ctx: CheckContext) -> Iterator[Finding]:
        if ctx.spec.get("speculative_eagle_topk") != value:
            fix = set_flags(f"set topk {value}", applicability, speculative_eagle_topk=value)
            yield RULES[code].finding(f"topk must be {value}", flags=("--speculative-eagle-topk",), fix=fix)

    return check


RULES: dict[str, Rule] = {}
for _code, _value in (("ZZ010", 1), ("ZZ011", 4)):
    RULES[_code] = _rule(_code, _wants(_code, _value))


def test_two_rules_setting_one_flag_differently_conflict_and_neither_applies():
    outcome = engine.check(list(RULES.values()), _ctx("--speculative-algorithm", "EAGLE"), fix_level=Applicability.UNSAFE)
    assert outcome.changes == ()
    assert len(outcome.conflicts) == 1
    conflict = outcome.conflicts[0]
    assert (conflict.target, conflict.name) == ("flag", "--speculative-eagle-topk")
    assert sorted(conflict.proposals) == [("ZZ010", 1), ("ZZ011", 4)]
    assert outcome.exit_code == 1  # both errors stand


def test_a_conflict_does_not_block_an_unrelated_fix():
    rules = [*RULES.values(), STEPS]
    outcome = engine.check(rules, _ctx("--speculative-algorithm", "EAGLE"), fix_level=Applicability.SAFE)
    assert [(c.name, c.new) for c in outcome.changes] == [("--speculative-num-steps", 3)]
    assert [c.name for c in outcome.conflicts] == ["--speculative-eagle-topk"]


def test_an_unsafe_fix_waits_for_the_unsafe_level():
    unsafe = _rule("ZZ020", _wants("ZZ020", 2, Applicability.UNSAFE))
    RULES["ZZ020"] = unsafe
    try:
        ctx = _ctx("--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "8")
        assert engine.check([unsafe], ctx, fix_level=Applicability.SAFE).changes == ()
        applied = engine.check([unsafe], ctx, fix_level=Applicability.UNSAFE)
        assert [(c.old, c.new) for c in applied.changes] == [(8, 2)]
    finally:
        del RULES["ZZ020"]


def _warns_while_topk_above_one(ctx: CheckContext) -> Iterator[Finding]:
    if (ctx.spec.get("speculative_eagle_topk") or 1) > 1:
        yield WARN.finding("a tree", flags=("--speculative-eagle-topk",))


WARN = _rule("ZZ030", _warns_while_topk_above_one, Severity.WARNING)


def test_a_finding_whose_cause_another_fix_removed_is_reported_resolved_not_applied():
    ctx = _ctx("--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4")
    outcome = engine.check([RULES["ZZ010"], WARN], ctx, fix_level=Applicability.SAFE)
    assert [(c.rule, c.new) for c in outcome.changes] == [("ZZ010", 1)]
    assert {f.code: (f.resolved, f.applied) for f in outcome.findings} == {"ZZ010": (True, True), "ZZ030": (True, False)}


def _never_settles(ctx: CheckContext) -> Iterator[Finding]:
    steps = ctx.spec.get("speculative_num_steps") or 0
    fix = set_flags("one more step", Applicability.SAFE, speculative_num_steps=steps + 1)
    yield RESTLESS.finding("one more step", flags=("--speculative-num-steps",), fix=fix)


RESTLESS = _rule("ZZ040", _never_settles)


def test_a_rule_that_never_settles_stops_at_the_round_cap():
    outcome = engine.check([RESTLESS], _ctx("--speculative-algorithm", "EAGLE"), fix_level=Applicability.SAFE)
    assert len(outcome.changes) == engine.MAX_FIX_ROUNDS
    assert outcome.corrected.get("speculative_num_steps") == engine.MAX_FIX_ROUNDS
    assert outcome.exit_code == 1  # still unresolved: reported, not hidden
