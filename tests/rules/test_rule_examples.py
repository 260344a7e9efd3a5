"""Every rule's documented examples, run as tests: the bad one fires, the good one stays quiet,
and once the fixes are applied the rule is satisfied. The docs cannot go stale."""

from __future__ import annotations

import re

import pytest

from specguard import engine
from specguard.models import Applicability
from specguard.rules import ALL_RULES, RULES_BY_CODE
from specguard.rules.base import FixAvailability, Rule

RULE_IDS = [rule.code for rule in ALL_RULES]


@pytest.mark.parametrize("rule", ALL_RULES, ids=RULE_IDS)
def test_bad_example_fires(rule: Rule) -> None:
    ctx = rule.bad.context()
    assert rule.applies_to(ctx), f"{rule.code}'s bad example is outside its own version/dialect scope"
    findings = list(rule.check(ctx))
    assert findings, f"{rule.code} stays quiet on its bad example"
    assert all(f.code == rule.code for f in findings)


@pytest.mark.parametrize("rule", ALL_RULES, ids=RULE_IDS)
def test_good_example_is_quiet(rule: Rule) -> None:
    ctx = rule.good.context()
    findings = list(rule.check(ctx)) if rule.applies_to(ctx) else []
    assert findings == [], f"{rule.code} fires on its good example: {findings}"


FIXING_RULES = [rule for rule in ALL_RULES if rule.fix_availability is not FixAvailability.NEVER]


@pytest.mark.parametrize("rule", [r for r in ALL_RULES if r.fix_availability is FixAvailability.NEVER],
                         ids=[r.code for r in ALL_RULES if r.fix_availability is FixAvailability.NEVER])
def test_rules_declared_never_offer_no_fix(rule: Rule) -> None:
    findings = list(rule.check(rule.bad.context()))
    assert findings and all(f.fix is None for f in findings)


@pytest.mark.parametrize("rule", [r for r in ALL_RULES if r.fix_availability is FixAvailability.ALWAYS],
                         ids=[r.code for r in ALL_RULES if r.fix_availability is FixAvailability.ALWAYS])
def test_rules_declared_always_fix_every_finding(rule: Rule) -> None:
    findings = list(rule.check(rule.bad.context()))
    assert findings and all(f.fix is not None for f in findings)


@pytest.mark.parametrize("rule", FIXING_RULES, ids=[r.code for r in FIXING_RULES])
def test_fixes_leave_a_configuration_the_rule_accepts(rule: Rule) -> None:
    ctx = rule.bad.context()
    fixable = [f for f in rule.check(ctx) if f.fix is not None]
    if not fixable:
        pytest.skip(f"{rule.code} fixes only sometimes, and not on its bad example")
    outcome = engine.check(ALL_RULES, ctx, fix_level=Applicability.UNSAFE)
    assert outcome.changes, f"{rule.code}'s fix changed nothing"
    after = ctx.with_spec(outcome.corrected)
    remaining = [f for f in rule.check(after) if f.severity.value == "error"] if rule.applies_to(after) else []
    assert remaining == [], f"{rule.code} still fires after its fix: {remaining}"
    assert any(c.rule == rule.code for c in outcome.changes) or not any(
        f.code == rule.code and f.fix for f in outcome.findings if not f.resolved
    )


@pytest.mark.parametrize("rule", ALL_RULES, ids=RULE_IDS)
def test_rule_metadata_is_complete(rule: Rule) -> None:
    assert re.fullmatch(r"[A-Z]{2}\d{3}", rule.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", rule.name)
    assert rule.summary and rule.docs.what and rule.docs.why and rule.docs.fix and rule.docs.fix_safety
    assert rule.sources, f"{rule.code} cites no source"
    assert RULES_BY_CODE[rule.code] is rule
    # One rule per module, named by its code and name (DM001_target_draft_dtype_mismatch.py).
    module = rule.check.__module__.rsplit(".", 1)[-1]
    assert module == f"{rule.code}_{rule.name.replace('-', '_')}", f"{rule.code} lives in {module}"


def test_names_are_unique() -> None:
    names = [rule.name for rule in ALL_RULES]
    assert len(names) == len(set(names))
