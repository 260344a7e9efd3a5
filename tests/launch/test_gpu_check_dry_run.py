"""scripts/gpu_check.sh --dry-run: the GPU check's every step, on the CPU with tiny sizes, so the
script a GPU machine runs in one call cannot rot between the times a GPU is lent (issue #29).
Its figures are not a GPU's and are not judged here; that each step ran and wrote its results is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytest.importorskip("torch")
pytest.importorskip("uvicorn")


def test_the_gpu_check_runs_every_step_on_the_cpu_and_writes_its_results(tiny_root: Path, tmp_path: Path) -> None:
    from specguard.runtime.tiny import ensure_tiny_eagle3

    ensure_tiny_eagle3(tiny_root)  # built once for the session, not inside the script's time
    env = {**os.environ, "PYTHON": sys.executable, "SPECGUARD_CACHE_DIR": str(tiny_root)}
    out = tmp_path / "out"
    result = subprocess.run(["bash", str(REPO / "scripts" / "gpu_check.sh"), str(out), "--dry-run"],
                            capture_output=True, text=True, env=env, cwd=REPO, timeout=900)
    logs = {p.name: p.read_text(errors="replace")[-2000:] for p in out.glob("*.log")}
    assert result.returncode == 0, (result.stdout[-3000:], logs)
    steps = json.loads((out / "steps.json").read_text())
    assert [(s["step"], s["exit_code"]) for s in steps] == [("runtime-tests", 0), ("launch", 0), ("roofline", 0), ("accept", 0)]
    roofline = json.loads((out / "roofline.json").read_text())
    assert roofline["dry_run"] is True and roofline["device"] == "cpu"
    assert {(r["kind"], r["batch"]) for r in roofline["rows"]} == {("decode", 1), ("verify", 1), ("decode", 4), ("verify", 4)}
    assert all(r["seconds"] > 0 and r["roofline_seconds"] > 0 for r in roofline["rows"])
    accept = json.loads((out / "accept.json").read_text())
    assert accept, "accept wrote no figures"
    summary = (out / "summary.txt").read_text()
    assert "dry run on the CPU" in summary and "roofline" in summary and "FAILED" not in summary
