"""Output people and tools can use: no cut text at 80 columns, `presets show` is YAML, SARIF
points at the preset's lines and carries each rule's documentation, usage errors are one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.cli.test_launch_forms import SLIME_SCRIPTS, validate_sarif
from tests.conftest import REPO, run_cli


@pytest.mark.parametrize(
    "args",
    [
        ("check", "--script", str(SLIME_SCRIPTS / "run-glm4.7-30B-A3B.sh"), "--offline", "--gpu", "H100", "--fix"),
        ("check", "--preset", "eagle3-llama3.1-8b", "--offline", "--unsafe-fixes"),
        ("rules",),
        ("presets", "list"),
    ],
)
def test_nothing_is_cut_at_80_columns(args: tuple[str, ...]) -> None:
    result = run_cli(*args, env={"COLUMNS": "80"})
    assert result.returncode in (0, 1), result.stderr
    assert "…" not in result.stdout


def test_presets_show_writes_valid_yaml(tmp_path: Path) -> None:
    result = run_cli("presets", "show", "eagle3-llama3.1-8b")
    assert result.returncode == 0, result.stderr
    shown = yaml.safe_load(result.stdout)
    original = yaml.safe_load((REPO / "presets" / "eagle3-llama3.1-8b.yaml").read_text())
    assert shown == original
    report = result.stdout.split("# specguard check --preset", 1)[1]
    assert "DM002" in report and all(line.startswith("#") for line in report.splitlines()[1:] if line)  # what check says, as comments


def test_sarif_of_a_preset_points_at_its_flag_lines() -> None:
    result = run_cli("check", "--preset", "eagle3-llama3.1-8b", "--offline", "--format", "sarif")
    document = json.loads(result.stdout)
    validate_sarif(document)
    lines = (REPO / "presets" / "eagle3-llama3.1-8b.yaml").read_text().splitlines()
    located = {r["ruleId"]: r["locations"][0]["physicalLocation"] for r in document["runs"][0]["results"]}
    dm002 = located["DM002"]
    assert dm002["artifactLocation"]["uri"] == "presets/eagle3-llama3.1-8b.yaml"
    assert lines[dm002["region"]["startLine"] - 1].strip().startswith("sglang-context-length:")
    rules = {r["id"]: r for r in document["runs"][0]["tool"]["driver"]["rules"]}
    assert "## Why is this bad" in rules["DM002"]["help"]["markdown"]
    assert all(r.get("helpUri", "https://").startswith("https://") for r in rules.values())


def test_usage_errors_are_one_line_and_json_under_format_json() -> None:
    human = run_cli("check", "--dialect", "vllm")
    assert human.returncode == 2 and len(human.stderr.strip().splitlines()) == 1 and "--dialect" in human.stderr
    as_json = run_cli("check", "--format", "json", "--gpu-count", "0")
    assert as_json.returncode == 2 and "--gpu-count" in json.loads(as_json.stdout)["error"]
    as_sarif = run_cli("check", "--format", "sarif", "--gpu-count", "0")
    assert as_sarif.returncode == 2
    validate_sarif(json.loads(as_sarif.stdout))
