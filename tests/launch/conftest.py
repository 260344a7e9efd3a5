"""Helpers for the launcher's end-to-end tests: the real CLI in a subprocess, real child processes."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from specguard.launch.supervisor import group_members
from tests.conftest import REPO

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FAKE_SGLANG = FIXTURES / "fake_sglang"


class Launcher:
    """``python -m specguard launch ARGS`` running in the background, its output in files."""

    def __init__(self, args: list[str], env: dict[str, str], tmp: Path, name: str = "launch") -> None:
        self.out_path, self.err_path = tmp / f"{name}.out", tmp / f"{name}.err"
        self._out, self._err = open(self.out_path, "wb"), open(self.err_path, "wb")  # noqa: SIM115 - held by the child until stop()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "specguard", "launch", *args], stdout=self._out, stderr=self._err, env=env, cwd=REPO
        )
        self.runtime_pgid: int | None = None

    @property
    def err(self) -> str:
        return self.err_path.read_text(errors="replace")

    @property
    def out(self) -> str:
        return self.out_path.read_text(errors="replace")

    def wait_for(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._note_runtime()
            if text in self.err:
                return
            if self.process.poll() is not None:
                raise AssertionError(f"launcher exited {self.process.returncode} before {text!r}:\n{self.err[-4000:]}")
            time.sleep(0.2)
        raise AssertionError(f"no {text!r} within {timeout} s:\n{self.err[-4000:]}")

    def _note_runtime(self) -> None:
        """The runtime is the launcher's child and leads its own process group (the stand-in also logs it)."""
        if self.runtime_pgid is None:
            found = re.search(r"fake sglang pgid=(\d+)", self.err)
            if found:
                self.runtime_pgid = int(found.group(1))
                return
            children = _children_of(self.process.pid)
            if children:
                self.runtime_pgid = children[0]

    def wait(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        try:
            while self.process.poll() is None:
                self._note_runtime()
                if time.monotonic() > deadline:
                    raise subprocess.TimeoutExpired(self.process.args, timeout)
                time.sleep(0.05)
            code = self.process.returncode
        finally:
            self._out.close()
            self._err.close()
        self._note_runtime()
        return code

    def interrupt(self, signum: int = signal.SIGINT) -> None:
        self.process.send_signal(signum)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        if self.runtime_pgid is not None:
            try:
                os.killpg(self.runtime_pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return sorted(found)


def assert_no_process_left(pgid: int | None, timeout: float = 10.0) -> None:
    assert pgid is not None, "the runtime process was never seen"
    deadline = time.monotonic() + timeout
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert group_members(pgid) == [], f"processes left in the runtime's group {pgid}: {group_members(pgid)}"


def launch_env(extra: dict[str, str] | None = None, fake_sglang: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_", "HF_", "FAKE_SGLANG_"))}
    env.update({"HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "200", "PYTHONUNBUFFERED": "1"})
    if fake_sglang:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(FAKE_SGLANG), str(REPO), env.get("PYTHONPATH", "")]))
    env.update(extra or {})
    return env


@pytest.fixture
def launcher_factory(tmp_path: Path):
    started: list[Launcher] = []

    def start(args: list[str], env: dict[str, str]) -> Launcher:
        launcher = Launcher(args, env, tmp_path, name=f"launch{len(started)}")
        started.append(launcher)
        return launcher

    yield start
    for launcher in started:
        launcher.kill()
