"""Every rule's extra cases, as data: one YAML file per rule under ``tests/rules/cases/``.

sqlfluff's ``std_rule_cases`` layout: each case is a launch (a named base launch plus the flags it
adds), the facts and release it runs under, and what the rule must say about it. The rule's own
bad and good examples live beside it (``test_rule_examples.py``); these are the boundaries and the
conditions that silence it. Python tests stay for what data cannot say.

    rule: FX081
    launches: {hicache: [--model-path, m, --enable-hierarchical-cache]}
    cases:
      - {launch: hicache, add: [--speculative-algorithm, NEXTN], sglang_version: 0.5.10, fires: 1}
      - {launch: hicache, add: [--speculative-algorithm, NEXTN], sglang_version: 0.5.11, fires: 0, why: backed up from 0.5.11}

A case's keys: ``launch`` (a name from ``launches``) and/or ``argv``, ``add``; ``target``/``draft``
(config.json facts), ``env``, ``gpu``, ``sglang_version``, ``sgl_jax_version``, ``slime_version``, ``dialect``; and what
must hold: ``fires`` (how many findings), ``fix`` (true: each finding offers one; false: none; safe or
unsafe: one of that applicability),
``severity``, ``flags`` (every finding names them), ``message_contains`` (a text or a list of texts), ``corrected`` (the launch
after the rule's fixes, unsafe ones included), ``why`` (the reason, shown when the case fails).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from specguard import engine
from specguard.dialects import render
from specguard.models import Applicability, Dialect
from specguard.rules import RULES_BY_CODE
from specguard.rules.base import Example

CASES_DIR = Path(__file__).with_name("cases")
CONTEXT_KEYS = {"target", "draft", "env", "gpu", "sglang_version", "sgl_jax_version", "slime_version", "dialect"}
EXPECT_KEYS = {"fires", "fix", "severity", "flags", "message_contains", "corrected"}
LAUNCH_KEYS = {"launch", "argv", "add", "why"}


def _load() -> list[Any]:
    params = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        document = yaml.safe_load(path.read_text())
        code = document["rule"]
        assert path.stem == code, f"{path.name}: the file is named after its rule ({code})"
        assert set(document) <= {"rule", "launches", "cases"}, f"{path.name}: unknown keys {set(document) - {'rule', 'launches', 'cases'}}"
        launches = document.get("launches") or {}
        for index, case in enumerate(document["cases"], 1):
            unknown = set(case) - CONTEXT_KEYS - EXPECT_KEYS - LAUNCH_KEYS
            assert not unknown, f"{path.name} case {index}: unknown keys {sorted(unknown)}"
            assert "fires" in case, f"{path.name} case {index}: say how many findings (fires)"
            argv = [*launches.get(case.get("launch"), ()), *case.get("argv", ()), *case.get("add", ())]
            assert argv, f"{path.name} case {index}: no launch"
            params.append(pytest.param(code, [str(a) for a in argv], case, id=f"{code}-{index}"))
    return params


CASES = _load()


def _context(argv: list[str], case: dict[str, Any]):
    fields = {key: case[key] for key in CONTEXT_KEYS if key in case}
    for key in ("sglang_version", "sgl_jax_version", "slime_version"):
        if key in fields:
            fields[key] = str(fields[key])
    if "dialect" in fields:
        fields["dialect"] = Dialect(fields["dialect"])
    return Example(argv=tuple(argv), **fields).context()


def test_every_case_file_names_a_rule():
    for path in CASES_DIR.glob("*.yaml"):
        assert path.stem in RULES_BY_CODE, f"{path.name}: no rule {path.stem}"


@pytest.mark.parametrize(("code", "argv", "case"), CASES)
def test_rule_case(code: str, argv: list[str], case: dict[str, Any]) -> None:
    rule = RULES_BY_CODE[code]
    ctx = _context(argv, case)
    findings = list(rule.check(ctx)) if rule.applies_to(ctx) else []
    why = f" ({case['why']})" if case.get("why") else ""
    said = [f.message for f in findings]
    assert len(findings) == case["fires"], f"{code} on {' '.join(argv)}: expected {case['fires']} finding(s){why}, got {said}"
    for finding in findings:
        if "fix" in case:
            wanted = case["fix"]  # true / false, or the applicability the fix must have (safe / unsafe)
            assert (finding.fix is not None) is (wanted is not False), f"{code}: fix expected {wanted}{why}: {finding.message}"
            if isinstance(wanted, str):
                assert finding.fix is not None and finding.fix.applicability.value == wanted, f"{code}{why}: {finding.fix}"
        if "severity" in case:
            assert finding.severity.value == case["severity"], f"{code}{why}: {finding.severity.value}"
        if "flags" in case:
            assert set(case["flags"]) <= set(finding.flags), f"{code}{why}: flags {finding.flags}"
        if "message_contains" in case:
            wanted = case["message_contains"]  # a text, or a list of texts that must all appear
            for text in [wanted] if isinstance(wanted, str) else wanted:
                assert text in finding.message, f"{code}{why}: {text!r} not in {finding.message}"
    if "corrected" in case:
        outcome = engine.check([rule], ctx, fix_level=Applicability.UNSAFE)
        assert render(outcome.corrected) == [str(a) for a in case["corrected"]], f"{code}{why}"
