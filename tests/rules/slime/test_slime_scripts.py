"""Every launch script in slime's own ``scripts/``, checked as a user would at that slime commit
(``--script``, ``--slime-version``): slime's maintainers run them, so each must get no error and
no warning unless a public report shows that script failing (none is known at the commits below).
The scripts come from a slime clone whose path SPECGUARD_SLIME_REPO gives; without one the test
skips, saying so."""

from __future__ import annotations

import json
import subprocess
import tarfile
from io import BytesIO
from pathlib import Path

import pytest

from tests.conftest import NO_SLIME_CLONE, SLIME_CLONE, run_cli

# The newest slime commit specguard knows (slime-sglang-pins.json, slime-flags.json).
COMMITS = ["624b824a8"]


def _scripts_at(commit: str, into: Path) -> list[Path]:
    """scripts/ at ``commit`` (its model files included: the launch scripts source them)."""
    assert SLIME_CLONE is not None
    archive = subprocess.run(["git", "-C", str(SLIME_CLONE), "archive", commit, "scripts"], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return sorted((into / "scripts").glob("*.sh"))


@pytest.mark.skipif(SLIME_CLONE is None, reason=NO_SLIME_CLONE)
@pytest.mark.parametrize("commit", COMMITS)
def test_slimes_own_scripts_get_no_error_and_no_warning(commit: str, tmp_path: Path) -> None:
    scripts = _scripts_at(commit, tmp_path)
    assert len(scripts) >= 20, "the scripts were not all found"
    loud: dict[str, object] = {}
    for script in scripts:
        result = run_cli("check", "--offline", "--script", str(script), "--slime-version", commit, "--format", "json", cwd=script.parent, timeout=120)
        document = json.loads(result.stdout) if result.stdout.strip() else {"error": result.stderr}
        if "error" in document:
            loud[script.name] = document["error"]
            continue
        findings = [f for launch in document.get("launches", [document]) for f in launch["findings"]]
        warned = [(f["code"], f["severity"]) for f in findings if f["severity"] != "info"]
        if result.returncode or warned:
            loud[script.name] = warned or result.returncode
    assert not loud, loud
