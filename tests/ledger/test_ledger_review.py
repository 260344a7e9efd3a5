"""scripts/ledger_review.py: listing, showing and applying reviews to a copy of the ledger."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "ledger_review.py"
PAIR = "0.5.22..0.5.23"
sys.path.insert(0, str(REPO / "scripts"))

import ledger_figures


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    """A copy of the real ledger, so applying reviews leaves the checked-in files alone."""
    copy = tmp_path / "ledger"
    shutil.copytree(REPO / "ledger" / "sglang", copy)
    # Three units made unreviewed, so the tests do not depend on how far the review has got.
    path = copy / f"{PAIR}.yaml"
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    document["units"][:3] = [{"id": u["id"], "detail": u["detail"], "reviewed": False} for u in document["units"][:3]]
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return copy


def run(ledger: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--ledger", str(ledger), *args], capture_output=True, text=True)


def units(ledger: Path, pair: str = PAIR) -> list[dict]:
    return yaml.safe_load((ledger / f"{pair}.yaml").read_text(encoding="utf-8"))["units"]


def unreviewed(ledger: Path, count: int) -> list[str]:
    return [u["id"] for u in units(ledger) if not u.get("reviewed")][:count]


def write(path: Path, reviews: list[dict]) -> Path:
    path.write_text(yaml.safe_dump(reviews, sort_keys=False), encoding="utf-8")
    return path


def test_todo_lists_the_unreviewed_units_and_counts_them(ledger: Path) -> None:
    left = [u["id"] for u in units(ledger) if not u.get("reviewed")]
    result = run(ledger, "todo", PAIR, "--limit", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == f"{len(left)} unreviewed units"
    assert [line for line in result.stdout.splitlines() if "|" in line and not line.startswith(" ")] == left[:2]


def test_apply_writes_reviews_that_the_figures_check_accepts(ledger: Path, tmp_path: Path) -> None:
    first, second, third = unreviewed(ledger, 3)
    reviews = write(
        tmp_path / "r.yaml",
        [
            {"id": first, "change": "a refactor", "outcome": "no behaviour change", "reason": "same statements, renamed"},
            {"ids": [second, third], "change": "a guard", "outcome": "rule needed", "reason": "raised at start", "condition": "--x", "window": ">=0.5.23"},
        ],
    )
    before = {u["id"]: u for u in units(ledger)}
    result = run(ledger, "apply", PAIR, str(reviews))
    assert result.returncode == 0, result.stderr
    after = {u["id"]: u for u in units(ledger)}
    assert after[first] == {"id": first, "detail": before[first]["detail"], "reviewed": True, "change": "a refactor", "outcome": "no behaviour change", "reason": "same statements, renamed"}
    assert after[second]["window"] == after[third]["window"] == ">=0.5.23"
    # Every other unit is as it was, in the same order.
    assert list(after) == list(before)
    assert all(after[i] == before[i] for i in before if i not in {first, second, third})
    documents = ledger_figures.load(ledger)
    assert ledger_figures.problems(documents, ledger_figures.release_pairs(), ledger_figures.rule_codes()) == []


@pytest.mark.parametrize(
    ("review", "message"),
    [
        ({"id": "0.5.22..0.5.23|srt/none.py|f|body-changed", "change": "c", "outcome": "no behaviour change", "reason": "r"}, "not a unit of 0.5.22..0.5.23"),
        ({"change": "c", "outcome": "rule needed", "reason": "r", "condition": "--x"}, "rule needed without a window"),
        ({"change": "c", "outcome": "rule", "rule": "ZZ999", "reason": "r", "condition": "--x", "window": ">=0.5.23"}, "names rule 'ZZ999'"),
        ({"change": "c", "outcome": "fine", "reason": "r"}, "is not one of"),
        ({"change": "c", "outcome": "no behaviour change", "reason": "r", "verdict": "ok"}, "unknown field(s) verdict"),
    ],
)
def test_a_batch_with_any_problem_writes_nothing(ledger: Path, tmp_path: Path, review: dict, message: str) -> None:
    (good,) = unreviewed(ledger, 1)
    bad = {"id": good, **review} if "id" not in review else review
    ok = {"id": good, "change": "c", "outcome": "no behaviour change", "reason": "r"}
    before = (ledger / f"{PAIR}.yaml").read_bytes()
    result = run(ledger, "apply", PAIR, str(write(tmp_path / "r.yaml", [ok, bad])))
    assert result.returncode == 1
    assert message in result.stderr
    assert "nothing written" in result.stderr
    assert (ledger / f"{PAIR}.yaml").read_bytes() == before


def test_an_unreadable_reviews_file_and_an_unknown_pair_are_one_line_errors(ledger: Path, tmp_path: Path) -> None:
    broken = tmp_path / "r.yaml"
    broken.write_text("- id: [unclosed\n", encoding="utf-8")
    result = run(ledger, "apply", PAIR, str(broken))
    assert result.returncode == 2
    assert result.stderr.startswith(f"ledger_review: cannot read {broken}")
    result = run(ledger, "todo", "0.5.23..0.5.24")
    assert result.returncode == 1
    assert result.stderr.strip().startswith("ledger_review: no ledger file")
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(not os.environ.get("SPECGUARD_SGLANG_WHEELS"), reason="needs SPECGUARD_SGLANG_WHEELS: a folder with the sglang 0.5.22 and 0.5.23 wheels")
def test_show_prints_the_units_function_on_both_sides(ledger: Path, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"  # the extractor writes its cache beside the wheels: keep it out of the given folder
    wheels.mkdir()
    for wheel in Path(os.environ["SPECGUARD_SGLANG_WHEELS"]).glob("sglang-0.5.2[23]-*.whl"):
        (wheels / wheel.name).symlink_to(wheel)
    body = next(u for u in units(ledger) if u["id"].endswith("|body-changed"))
    _, file, function, _ = body["id"].split("|")
    result = run(ledger, "--wheels", str(wheels), "show", PAIR, body["id"])
    assert result.returncode == 0, result.stderr
    assert f"--- 0.5.22/sglang/{file} {function}" in result.stdout
    assert f"+++ 0.5.23/sglang/{file} {function}" in result.stdout
    assert any(line.startswith("@@ ") for line in result.stdout.splitlines())
