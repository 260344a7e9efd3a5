"""At a terminal, ``launch`` shows the unsafe fixes and applies them only after a yes."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import time

from tests.conftest import REPO
from tests.launch.conftest import launch_env


def _run_at_terminal(answer: bytes, *args: str) -> tuple[int, str]:
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "specguard", "launch", *args],
        stdin=secondary, stdout=subprocess.PIPE, stderr=secondary, env=launch_env(), cwd=REPO,
    )
    os.close(secondary)
    seen = b""
    answered = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            chunk = os.read(primary, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        if not answered and b"Apply them before starting?" in seen:
            os.write(primary, answer + b"\n")
            answered = True
    process.wait(timeout=60)
    os.close(primary)
    return process.returncode, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode("utf-8", "replace"))


def test_yes_applies_the_unsafe_fixes() -> None:
    code, text = _run_at_terminal(b"y", "--preset", "sglang-eagle3-llama3.1-8b")
    assert "Fixes that change what runs (unsafe):" in text and "MM003" in text
    assert "--max-running-requests" in text.split("Apply them before starting?")[1]  # the corrected launch shows it
    assert code == 2  # then: no runtime here can start EAGLE3 (no SGLang, no GPU)


def test_no_keeps_them_unapplied() -> None:
    code, text = _run_at_terminal(b"n", "--preset", "sglang-eagle3-llama3.1-8b")
    assert "unsafe fix(es) not applied: pass --unsafe-fixes" in text
    assert code == 2
