"""Every real-world case through the real CLI; the README's figures are the runner's own.

A failure case must be caught (a finding of at least warning severity naming a flag the case
says must change); a good case must get no error finding. A case the rules cannot catch yet is
marked ``xfail`` in its YAML with the reason, strictly: if it starts passing, the test says so
and the mark must go.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import HF_FIXTURES, all_results, load_cases

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import realworld_figures

CASES = load_cases()


def _param(case):
    marks = [pytest.mark.xfail(reason=case.xfail, strict=True)] if case.xfail else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES if c.is_failure])
def test_failure_case_is_caught(case):
    result = all_results()[case.id]
    assert result.error is None, result.describe()
    assert result.caught, f"{case.source.report}: expected a finding naming one of {list(case.expect.flags)} ({case.expect.verdict.value}); {result.describe()}"


@pytest.mark.parametrize("case", [_param(c) for c in CASES if not c.is_failure])
def test_good_case_has_no_error(case):
    result = all_results()[case.id]
    assert not result.false_alarm, f"{case.source.report}: a documented-good launch got an error; {result.describe()}"


def test_fixtures_named_by_cases_exist():
    for case in CASES:
        for model in (case.target, case.draft):
            if model is not None and model.fixture:
                assert (HF_FIXTURES / model.fixture / "config.json").is_file(), f"{case.id}: no fixture {model.fixture}"


def test_readme_figures_are_the_runners():
    readme = (REPO / "README.md").read_text()
    assert realworld_figures.current_block(readme) == realworld_figures.block(all_results().values()), (
        "README's real-world figures are stale: run `python scripts/realworld_figures.py --write`"
    )


@pytest.mark.parametrize("verdict", ["reject", "fix", "warn"])
def test_failure_case_must_name_the_flags_to_change(verdict):
    # Without flags, any unrelated warning (an open --host, say) would count as catching the case.
    from corpus import Expect

    with pytest.raises(ValueError, match="expect.flags"):
        Expect(verdict=verdict)
    assert Expect(verdict=verdict, flags=("--page-size",)).flags == ("--page-size",)
