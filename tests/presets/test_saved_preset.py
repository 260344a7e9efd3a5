"""A preset a user saved with `presets show NAME > mine.yaml` is checkable where it was saved: its
config.json snapshots stayed behind, and the ones specguard ships for the same model ids (else the
catalog's copies) stand in (issue #27; before, the check stopped with "snapshot ... does not exist")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specguard.presets import shipped_names
from tests.conftest import run_cli


def _verdict(preset: str, cwd: Path | None = None) -> tuple[int, list[tuple[str, str, str]]]:
    result = run_cli("check", "--preset", preset, "--offline", "--format", "json", cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    document = json.loads(result.stdout)
    return result.returncode, sorted((f["code"], f["severity"], f["message"]) for f in document["findings"])


def _saved(name: str, folder: Path) -> Path:
    shown = run_cli("presets", "show", name)
    assert shown.returncode in (0, 1), shown.stderr
    saved = folder / "mine.yaml"
    saved.write_text(shown.stdout, encoding="utf-8")
    return saved


@pytest.mark.parametrize("name", shipped_names())
def test_a_saved_preset_checks_as_the_shipped_one(name: str, tmp_path: Path) -> None:
    saved = _saved(name, tmp_path)
    assert list(tmp_path.iterdir()) == [saved]  # no snapshot beside it
    assert _verdict("mine.yaml", cwd=tmp_path) == _verdict(name)


def test_a_saved_preset_says_where_its_facts_came_from(tmp_path: Path) -> None:
    saved = _saved("slime-mtp-deepseek-v3", tmp_path)
    result = run_cli("check", "--preset", str(saved), "--offline", "--format", "json")
    assert result.returncode == 0, result.stderr
    detail = json.loads(result.stdout)["target"]["origin_detail"]
    assert detail.startswith(f"snapshots/deepseek-ai/DeepSeek-V3/config.json is not beside {saved}: specguard's own snapshot of deepseek-ai/DeepSeek-V3 stood in")


def test_a_saved_preset_writes_its_correction_with_the_shipped_snapshot(tmp_path: Path) -> None:
    saved = _saved("sglang-standalone-qwen2.5-7b", tmp_path)
    out = tmp_path / "out" / "fixed.yaml"
    result = run_cli("check", "--preset", str(saved), "--offline", "--fix", "--write", str(out))
    assert result.returncode == 0, result.stderr
    assert json.loads((out.parent / "snapshots" / "Qwen" / "Qwen2.5-7B-Instruct" / "config.json").read_text())["hidden_size"] == 3584


def test_a_snapshot_nothing_can_stand_in_for_is_still_an_error(tmp_path: Path) -> None:
    saved = _saved("sglang-standalone-qwen2.5-7b", tmp_path)
    saved.write_text(saved.read_text().replace("model: Qwen/Qwen2.5-7B-Instruct", "model: acme/never-published", 1))
    result = run_cli("check", "--preset", str(saved), "--offline")
    assert result.returncode == 2
    assert "does not exist, and specguard has no copy of acme/never-published" in result.stderr
