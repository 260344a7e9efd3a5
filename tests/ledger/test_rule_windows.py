"""Every rule the ledger names covers the releases of the unit's window (issue 23: the windows agree).

A unit with ``outcome: rule`` says the rule reports its condition in its ``window``. Where the window
is a plain specifier (``>=X``, ``<=Y``, ``==Z``, ``<X``, ``>X``, joined by commas), every release in
it must satisfy the rule's ``sglang_versions`` (a rule without one covers every release). Windows in
prose ("<=0.5.16 fails (fixed >=0.5.17)", "per AB002", "all releases with the guard") say more than
a specifier can; they are not compared here (no test skips on CI for them), and a test holds
that they are a minority: 59 of the 161 ``outcome: rule`` units when this was written.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from specguard.rules import RULES_BY_CODE
from specguard.rules.base import version_in_range

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

import ledger_figures

VERSION = r"\d+(?:\.\d+)*(?:rc\d+)?(?:\.post\d+)?"
CLAUSE = rf"\s*(?:==|>=|<=|<|>)\s*{VERSION}\s*"
PLAIN_WINDOW = re.compile(rf"^{CLAUSE}(?:,{CLAUSE})*$")
RELEASES = tuple(Version(v) for v in json.loads(ledger_figures.HISTORY.read_text(encoding="utf-8"))["releases"])


def _rule_units() -> list[dict]:
    return [unit for document in ledger_figures.load().values() for unit in document.get("units") or () if unit.get("outcome") == "rule"]


RULE_UNITS = _rule_units()
PLAIN = [unit for unit in RULE_UNITS if PLAIN_WINDOW.match(str(unit.get("window") or ""))]


def test_most_rule_units_state_their_window_as_a_specifier() -> None:
    # A window in prose cannot be compared with the rule's; keep them the exception.
    assert len(PLAIN) * 2 > len(RULE_UNITS), f"only {len(PLAIN)} of {len(RULE_UNITS)} rule units have a plain window"


@pytest.mark.parametrize("unit", PLAIN, ids=[unit["id"] for unit in PLAIN])
def test_the_rule_covers_every_release_of_the_units_window(unit: dict) -> None:
    window = str(unit["window"])
    in_window = [v for v in RELEASES if version_in_range(window, v)]
    assert in_window, f"{unit['id']}: no known release is in the window {window!r}"
    rule = RULES_BY_CODE[unit["rule"]]
    if rule.sglang_versions is None:
        return
    outside = [str(v) for v in in_window if not version_in_range(rule.sglang_versions, v)]
    assert not outside, (
        f"{unit['id']}: window {window!r}, but {rule.code}'s sglang_versions {rule.sglang_versions!r} "
        f"leaves out {', '.join(outside)}"
    )
