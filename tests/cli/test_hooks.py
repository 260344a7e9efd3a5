"""The ecosystem's hooks: the pre-commit hooks (``.pre-commit-hooks.yaml`` and ``specguard hook``)
and the example code-scanning workflow (``docs/ci/github-code-scanning.yml``), each run as its
host would run it."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.cli.test_launch_forms import LLAMA, SLIME_SCRIPTS, validate_sarif
from tests.conftest import REPO

HOOKS = REPO / ".pre-commit-hooks.yaml"
WORKFLOW = REPO / "docs" / "ci" / "github-code-scanning.yml"
CLEAN_SCRIPT = SLIME_SCRIPTS / "run-mimo-7B-rl-eagle.sh"
FAILING_SCRIPT = SLIME_SCRIPTS / "run-glm4.7-30B-A3B.sh"


def _environment() -> dict[str, str]:
    """A user's shell: the installed console script on PATH, offline, no SGLang env vars."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_", "HF_"))}
    env.update({"HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "120", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"})
    return env


def _hooks() -> dict[str, dict]:
    return {hook["id"]: hook for hook in yaml.safe_load(HOOKS.read_text())}


def _run_hook(hook_id: str, *files: Path, args: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """As pre-commit runs a hook: its entry, split as a shell would, then its args, then the files."""
    hook = _hooks()[hook_id]
    command = [*shlex.split(hook["entry"]), *args, *map(str, files)]
    assert shutil.which(command[0], path=_environment()["PATH"]), f"{command[0]} is not installed"
    return subprocess.run(command, capture_output=True, text=True, env=_environment(), cwd=REPO, timeout=120)


def test_the_manifest_is_valid_for_pre_commit() -> None:
    clientlib = pytest.importorskip("pre_commit.clientlib")
    manifest = clientlib.load_manifest(str(HOOKS))
    assert {hook["id"] for hook in manifest} == {"specguard-check-scripts", "specguard-check-presets"}


def test_the_hooks_pick_the_files_they_are_for() -> None:
    hooks = _hooks()
    scripts, presets = re.compile(hooks["specguard-check-scripts"]["files"]), re.compile(hooks["specguard-check-presets"]["files"])
    assert scripts.search("scripts/run-eagle3.sh") and not scripts.search("README.md")
    assert presets.search("presets/eagle3.yaml") and presets.search("deploy/presets/a.yml")
    assert not presets.search(".github/workflows/ci.yml") and not presets.search(".pre-commit-config.yaml")


ARGS = ("--offline", "--sglang-version", "0.5.23", "--gpu", "H100")


def test_the_scripts_hook_checks_every_file_and_fails_on_the_worst(tmp_path: Path) -> None:
    not_a_launch = tmp_path / "build.sh"
    not_a_launch.write_text("#!/bin/sh\nmake all\n")
    result = _run_hook("specguard-check-scripts", not_a_launch, CLEAN_SCRIPT, FAILING_SCRIPT, args=ARGS)
    assert result.returncode == 1, result.stderr
    checked = [line for line in result.stdout.splitlines() if line.startswith("specguard check --script")]
    assert checked == [f"specguard check --script {CLEAN_SCRIPT}", f"specguard check --script {FAILING_SCRIPT}"]  # build.sh passed over
    assert "error(s) remain" in result.stdout


def test_the_hooks_take_the_selectors(tmp_path: Path) -> None:
    # The failing script's one error: VB003 (a flag 0.5.23 does not have), which supersedes SL003
    # (the same flag ambiguous for slime's parser). Both ignored, the hook passes.
    assert _run_hook("specguard-check-scripts", FAILING_SCRIPT, args=(*ARGS, "--ignore", "VB003")).returncode == 1
    assert _run_hook("specguard-check-scripts", FAILING_SCRIPT, args=(*ARGS, "--ignore", "VB003,SL003")).returncode == 0
    assert _run_hook("specguard-check-scripts", FAILING_SCRIPT, args=(*ARGS, "--select", "VB")).returncode == 1
    misspelled = _run_hook("specguard-check-scripts", FAILING_SCRIPT, args=(*ARGS, "--select", "pref"))
    assert misspelled.returncode == 2 and "pref" in misspelled.stderr


def test_the_scripts_hook_passes_clean_scripts() -> None:
    result = _run_hook("specguard-check-scripts", CLEAN_SCRIPT, args=ARGS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_presets_hook_checks_each_preset(tmp_path: Path) -> None:
    result = _run_hook("specguard-check-presets", REPO / "presets" / "sglang-oom-recovery.yaml", REPO / "presets" / "sglang-eagle3-llama3.1-8b.yaml", args=("--offline",))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("specguard check --preset ") == 2
    broken = tmp_path / "presets" / "broken.yaml"
    broken.parent.mkdir()
    broken.write_text("name: broken\n")
    failed = _run_hook("specguard-check-presets", REPO / "presets" / "sglang-oom-recovery.yaml", broken, args=("--offline",))
    assert failed.returncode == 2 and "broken.yaml" in failed.stderr


def test_the_code_scanning_workflow_runs_specguard_and_uploads_its_sarif(tmp_path: Path) -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = workflow["jobs"]["specguard"]["steps"]
    check = next(step for step in steps if step.get("run", "").startswith("specguard check"))
    upload = next(step for step in steps if step.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert workflow["permissions"]["security-events"] == "write" and upload["if"] == "always()"
    command = check["run"]
    assert "--format sarif" in command and command.endswith(f"> {upload['with']['sarif_file']}")
    # The command as the runner runs it (bash -e), in a checkout holding the script it names.
    (tmp_path / "scripts").mkdir()
    shutil.copy(FAILING_SCRIPT, tmp_path / "scripts" / "launch.sh")
    ran = subprocess.run(["bash", "-e", "-c", command], capture_output=True, text=True, env=_environment(), cwd=tmp_path, timeout=120)
    assert ran.returncode == 1, ran.stderr  # error findings: the job fails, and the upload step still runs
    sarif = json.loads((tmp_path / upload["with"]["sarif_file"]).read_text())
    validate_sarif(sarif)
    uris = {result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for result in sarif["runs"][0]["results"]}
    assert uris == {"scripts/launch.sh"}


def test_the_hook_command_alone_needs_a_kind() -> None:
    result = subprocess.run([sys.executable, "-m", "specguard", "hook", "--offline", str(LLAMA)], capture_output=True, text=True, env=_environment(), timeout=60)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
