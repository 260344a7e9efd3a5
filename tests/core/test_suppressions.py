"""`# specguard: ignore[...]` directives and what they cover (specguard/suppressions.py)."""

from __future__ import annotations

import pytest

from specguard.models import Finding, Severity
from specguard.suppressions import EVERY_CODE, Suppressions, directive


@pytest.mark.parametrize(
    ("line", "codes"),
    [
        ("  --tp 2  # specguard: ignore[MM003]", frozenset({"MM003"})),
        ("  --tp 2  #specguard:ignore[mm003, SV001]", frozenset({"MM003", "SV001"})),
        ("  tp: 2  # specguard: ignore", EVERY_CODE),
        ("  --tp 2  # a comment", None),
        ("  --tp 2  # specguard: ignored", None),
    ],
)
def test_directive(line: str, codes: frozenset[str] | None) -> None:
    assert directive(line) == codes


def finding(code: str, *flags: str) -> Finding:
    return Finding(code=code, name="x", severity=Severity.ERROR, message="m", flags=flags)


def test_a_finding_is_covered_by_the_directive_on_one_of_its_flags_lines() -> None:
    table = Suppressions(written=frozenset({"--tp-size", "--dtype"}), by_flag={"--tp-size": frozenset({"MM003"})}, on_launch=EVERY_CODE)
    assert table.covers(finding("MM003", "--tp-size", "--dtype"))
    assert not table.covers(finding("SV001", "--tp-size"))
    assert not table.covers(finding("MM003", "--dtype"))  # its line has no directive
    assert table.covers(finding("DM001", "--context-length"))  # not written: placed on the launch's line
    assert table.covers(finding("DM001"))
