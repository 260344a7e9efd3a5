"""Ctrl-C exits 130 in every command (the shell's 128 + SIGINT), never 1, which means "error
findings remain": a CI script must tell an interrupted run from a failed check.

The real CLI in a subprocess, interrupted at a point read from its state, not after a sleep: a
hub lookup held by a local server that accepts and never answers, a check blocked reading its
launch from stdin, a tiny-model build whose scratch directory has appeared.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO

NGRAM_ON_THE_HUB = ["--model-path", "acme/never-published", "--speculative-algorithm", "NGRAM"]


def start_cli(args: list[str], env: dict[str, str], **popen: object) -> subprocess.Popen[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_", "HF_"))}
    base.update({"NO_COLOR": "1", "COLUMNS": "200", **env})
    return subprocess.Popen([sys.executable, "-m", "specguard", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=base, cwd=REPO, **popen)  # type: ignore[call-overload]


def interrupt_when(process: subprocess.Popen[str], ready: Callable[[], bool], timeout: float = 120) -> tuple[int, str]:
    """SIGINT once ``ready()`` holds; (exit code, stderr)."""
    try:
        deadline = time.monotonic() + timeout
        while not ready():
            assert process.poll() is None, f"exited {process.returncode} first: {process.communicate()[1][-3000:]}"
            assert time.monotonic() < deadline, "the point to interrupt at never came"
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
        return process.returncode, err
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def assert_aborted(code: int, err: str) -> None:
    assert code == 130, err[-3000:]
    assert err.strip().splitlines()[-1] == "specguard: aborted" and "Traceback" not in err, err[-3000:]


@pytest.mark.parametrize(
    "args",
    [["check", "--", *NGRAM_ON_THE_HUB], ["launch", "--dry-run", "--gpu", "H100", "--", *NGRAM_ON_THE_HUB],
     ["models", "show", "acme/never-published"]],
    ids=["check", "launch", "models"],
)
def test_ctrl_c_during_the_hub_lookup_exits_130(tmp_path: Path, args: list[str]) -> None:
    with socket.socket() as hub:
        hub.bind(("127.0.0.1", 0))
        hub.listen(8)
        hub.setblocking(False)
        env = {"HF_ENDPOINT": f"http://127.0.0.1:{hub.getsockname()[1]}", "HF_HOME": str(tmp_path / "hf")}
        process = start_cli(args, env)
        connections: list[socket.socket] = []

        def asked_the_hub() -> bool:
            try:
                connections.append(hub.accept()[0])  # accepted, never answered
            except BlockingIOError:
                return False
            return True

        try:
            code, err = interrupt_when(process, asked_the_hub)
        finally:
            for connection in connections:
                connection.close()
    assert_aborted(code, err)


def blocked_reading_stdin(pid: int) -> bool:
    """The process sleeps in a read of a pipe, on file descriptor 0 (/proc's wchan and syscall)."""
    try:
        waiting_in = (Path("/proc") / str(pid) / "wchan").read_text()
        syscall = (Path("/proc") / str(pid) / "syscall").read_text().split()
    except OSError:
        return False
    return "pipe_read" in waiting_in and len(syscall) > 1 and syscall[1] == "0x0"


def test_ctrl_c_while_the_check_reads_its_launch_exits_130() -> None:
    process = start_cli(["check", "-"], {"HF_HUB_OFFLINE": "1"}, stdin=subprocess.PIPE)
    assert process.stdin is not None
    process.stdin.write("python -m sglang.launch_server --model-path ")  # half a launch: the check waits for the rest
    process.stdin.flush()
    try:
        code, err = interrupt_when(process, lambda: blocked_reading_stdin(process.pid))
    finally:
        process.stdin.close()
    assert_aborted(code, err)


@pytest.mark.parametrize(
    "args", [["launch", "--preset", "tiny-cpu"], ["accept", "--target", "tiny:target", "--draft", "tiny:draft"]],
    ids=["launch", "accept"],
)
def test_ctrl_c_during_the_tiny_model_build_exits_130_and_leaves_no_half_build(tmp_path: Path, args: list[str]) -> None:
    pytest.importorskip("torch")
    cache = tmp_path / "cache"
    process = start_cli(args, {"SPECGUARD_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"})
    # The build writes into a scratch directory beside its final place and renames it when done.
    code, err = interrupt_when(process, lambda: cache.is_dir() and any(p.name.startswith(".tiny-") for p in cache.iterdir()))
    assert_aborted(code, err)
    assert [p.name for p in cache.iterdir()] == [], "an interrupted build left files in the cache"
