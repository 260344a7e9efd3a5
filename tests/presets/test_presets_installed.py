"""A non-editable install finds the shipped presets (they are copied into the package)."""

from __future__ import annotations

import subprocess
import venv

import pytest

from tests.conftest import REPO


@pytest.mark.slow
def test_non_editable_install_ships_the_presets(tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(REPO)],
        capture_output=True, text=True, timeout=600,
    )
    if install.returncode != 0:
        pytest.skip(f"pip install failed (no package index?): {install.stderr[-500:]}")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [str(python), "-c", "import specguard.presets as p; print(p.shipped_dir().resolve())"],
        capture_output=True, text=True, cwd=elsewhere, timeout=60,
    )
    assert str(env_dir) in where.stdout, where
    specguard = env_dir / "bin" / "specguard"
    listed = subprocess.run([str(specguard), "presets", "list"], capture_output=True, text=True, cwd=elsewhere, timeout=60)
    assert listed.returncode == 0 and "eagle3-llama3.1-8b" in listed.stdout, listed.stderr
    checked = subprocess.run(
        [str(specguard), "check", "--preset", "eagle3-llama3.1-8b", "--offline", "--format", "json"],
        capture_output=True, text=True, cwd=elsewhere, timeout=60, env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
    )
    assert checked.returncode == 0, checked.stderr
    assert '"max_position_embeddings": 131072' in checked.stdout


