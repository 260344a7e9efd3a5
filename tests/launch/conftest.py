"""Helpers for the launcher's end-to-end tests: the real CLI in a subprocess, real child processes."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from specguard.launch.supervisor import group_members
from tests.conftest import REPO

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FAKE_SGLANG = FIXTURES / "fake_sglang"


# Sets RLIMIT_FSIZE, then becomes the command (the same process: the launcher's pid is this one's).
_LIMIT_FILE_SIZE_THEN_EXEC = (
    "import os, resource, sys; limit = int(sys.argv[1]); "
    "resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)); os.execv(sys.argv[2], sys.argv[2:])"
)


class Launcher:
    """``python -m specguard launch ARGS`` running in the background, its output in files."""

    def __init__(
        self, args: list[str], env: dict[str, str], tmp: Path, name: str = "launch", *,
        new_session: bool = False, file_size_limit: int | None = None,
    ) -> None:
        """``new_session``: started as ``setsid specguard launch`` is, leading its own process group.
        ``file_size_limit``: RLIMIT_FSIZE in bytes (a write past it fails with EFBIG: a full disk)."""
        self.out_path, self.err_path = tmp / f"{name}.out", tmp / f"{name}.err"
        self._out, self._err = open(self.out_path, "wb"), open(self.err_path, "wb")  # noqa: SIM115 - held by the child until stop()
        argv = [sys.executable, "-m", "specguard", "launch", *args]
        if file_size_limit is not None:
            argv = [sys.executable, "-c", _LIMIT_FILE_SIZE_THEN_EXEC, str(file_size_limit), *argv]
        self.process = subprocess.Popen(argv, stdout=self._out, stderr=self._err, env=env, cwd=REPO, start_new_session=new_session)
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
            children = children_of(self.process.pid)
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


def watchdog_of(launcher_pid: int) -> int | None:
    """The pid of the launcher's watchdog (``python -m specguard.launch.watchdog``), if it runs."""
    for pid in children_of(launcher_pid):
        try:
            if b"specguard.launch.watchdog" in (Path("/proc") / str(pid) / "cmdline").read_bytes():
                return pid
        except OSError:
            continue
    return None


def process_gone(pid: int, timeout: float = 10.0) -> bool:
    """Whether ``pid`` has exited (or is a zombie nobody reaps) within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            stat = (Path("/proc") / str(pid) / "stat").read_text()
        except OSError:
            return True
        if stat[stat.rfind(")") + 2 :].startswith("Z"):
            return True
        time.sleep(0.1)
    return False


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (read from /proc), in pid order."""
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


@pytest.fixture(scope="session")
def tiny_root(request: pytest.FixtureRequest) -> Path:
    """Where the tiny pair is built once (``$SPECGUARD_CACHE_DIR`` or pytest's cache): point the launcher there."""
    pytest.importorskip("torch")
    from specguard.runtime.tiny import ensure_tiny_pair

    root = Path(os.environ.get("SPECGUARD_CACHE_DIR") or request.config.cache.mkdir("specguard-tiny"))
    ensure_tiny_pair(root)
    return root


@pytest.fixture
def launcher_factory(tmp_path: Path):
    started: list[Launcher] = []

    def start(args: list[str], env: dict[str, str], **options: Any) -> Launcher:
        launcher = Launcher(args, env, tmp_path, name=f"launch{len(started)}", **options)
        started.append(launcher)
        return launcher

    yield start
    for launcher in started:
        launcher.kill()
