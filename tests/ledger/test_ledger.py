"""The release ledger's own consistency, its figures, and (given wheels) its regeneration."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from specguard.rules import RULES_BY_CODE

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

import ledger_figures

RULE_CODES = frozenset(RULES_BY_CODE)
PAIR = "0.5.22..0.5.23"


def reviewed(**fields: object) -> dict:
    unit = {"id": f"{PAIR}|srt/speculative/x.py|f|guard-added|abc", "reviewed": True, "change": "guard added", "reason": "why"}
    unit.update(fields)
    return unit


def test_the_ledger_holds_every_pair_and_is_consistent() -> None:
    documents = ledger_figures.load()
    assert ledger_figures.problems(documents, ledger_figures.release_pairs(), RULE_CODES) == []
    assert len(documents) == 85


def test_an_entry_naming_a_rule_that_does_not_exist_is_reported() -> None:
    existing = min(RULE_CODES)
    good = reviewed(outcome="rule", rule=existing, condition="--page-size 2", window=">=0.5.23")
    bad = reviewed(id=f"{PAIR}|srt/speculative/x.py|g|guard-added|def", outcome="rule", rule="ZZ999", condition="c", window="w")
    found = ledger_figures.problems({PAIR: {"pair": PAIR, "changed_lines": 1, "units": [good, bad]}}, [PAIR], RULE_CODES)
    assert found == [f"{bad['id']}: names rule 'ZZ999', which specguard does not have"]


def test_incomplete_reviews_and_foreign_ids_are_reported() -> None:
    units = [
        reviewed(outcome="rule needed"),  # no condition, no window
        reviewed(id=f"{PAIR}|srt/speculative/x.py|h|guard-added", outcome="maybe"),
        {"id": f"{PAIR}|srt/speculative/x.py|i|body-changed", "reviewed": False, "outcome": "not checkable"},
        {"id": "0.5.21..0.5.22|srt/speculative/x.py|j|body-changed", "reviewed": False},
        {"id": f"{PAIR}|srt/speculative/x.py|k|refactored", "reviewed": False},
    ]
    found = ledger_figures.problems({PAIR: {"pair": PAIR, "changed_lines": 1, "units": units}, "0.1..0.2": {"pair": "0.1..0.2", "changed_lines": 0}}, [PAIR], RULE_CODES)
    assert f"{units[0]['id']}: rule needed without a condition" in found
    assert f"{units[0]['id']}: rule needed without a window" in found
    assert any(line.startswith(f"{units[1]['id']}: outcome 'maybe'") for line in found)
    assert f"{units[2]['id']}: an outcome without reviewed: true" in found
    assert f"{units[3]['id']}: the id is not of the pair {PAIR}" in found
    assert f"{units[4]['id']}: unknown kind 'refactored'" in found
    assert "0.1..0.2: not a pair of consecutive releases" in found


def test_figures_count_outcomes_and_end_with_the_totals_line() -> None:
    units = [
        reviewed(outcome="rule", rule="X", condition="c", window="w"),
        reviewed(id="b", outcome="not checkable"),
        reviewed(id="c", outcome="no behaviour change"),
        reviewed(id="d", outcome="rule needed", condition="c", window="w"),
        {"id": "e", "reviewed": False},
    ]
    rows = ledger_figures.figures({PAIR: {"pair": PAIR, "changed_lines": 40, "units": units}}, [PAIR, "0.5.21..0.5.22"])
    assert rows[0] == ledger_figures.PairFigures(PAIR, 40, 5, 4, 1, 1, 1, 1)
    assert rows[1].units == 0
    assert ledger_figures.render(rows).splitlines()[-1] == "5 units, 4 reviewed, 1 became or extended a rule"


def test_the_figures_script_prints_every_pair_and_the_totals() -> None:
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "ledger_figures.py")], capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"\d+ units, \d+ reviewed, \d+ became or extended a rule", lines[-1])
    assert sum(1 for line in lines if line and ".." in line.split()[0]) == 85
    jax_rows = [line for line in lines if re.match(r"\d{4}-\d\d-\d\d-[0-9a-f]{8} ", line)]
    assert len(jax_rows) == len(list(ledger_figures.JAX_LEDGER.glob("*.yaml")))


@pytest.mark.skipif(not os.environ.get("SPECGUARD_SGLANG_WHEELS"), reason="needs SPECGUARD_SGLANG_WHEELS: a folder with the sglang 0.5.22 and 0.5.23 wheels")
def test_the_generator_finds_no_unit_the_ledger_lacks() -> None:
    """The newest pair regenerated from its wheels: every unit is in the ledger, and no more."""
    command = [sys.executable, str(REPO / "scripts" / "extract_sglang_units.py"), "--only", PAIR, "--check", "--wheels", os.environ["SPECGUARD_SGLANG_WHEELS"]]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
