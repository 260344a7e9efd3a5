"""Every launch script in slime's own ``scripts/``, checked as a user would at that slime commit
(``--script``, ``--slime-version``): slime's maintainers run them, so each must get no error and
no warning unless a public report shows that script failing (none is known at the commits below).
The scripts are kept, unchanged, in ``tests/cli/fixtures/slime/scripts`` (its SOURCES.md)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO, run_cli

# The newest slime commit specguard knows (slime-sglang-pins.json, slime-flags.json), and its scripts.
SCRIPTS = {"624b824a8": REPO / "tests" / "cli" / "fixtures" / "slime" / "scripts"}


@pytest.mark.parametrize("commit", sorted(SCRIPTS))
def test_slimes_own_scripts_get_no_error_and_no_warning(commit: str) -> None:
    scripts = sorted(SCRIPTS[commit].glob("*.sh"))
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
