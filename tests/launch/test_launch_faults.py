"""Whatever ends the launcher, nothing is left serving; a dead reader of its output never stalls it.

End to end through the real CLI against the stand-in SGLang (a real HTTP process on 127.0.0.1
that, like SGLang, runs a worker in its process group): the launcher is killed with SIGKILL, hung
up on, sent SIGQUIT, has its stderr pipe closed, or its --log-file is on a full disk.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from specguard.launch.probe import free_port
from tests.conftest import REPO
from tests.launch.conftest import assert_no_process_left, launch_env
from tests.launch.test_launch_fake_sglang import args


def port_closed(port: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) != 0:
                return True
        time.sleep(0.2)
    return False


def health_ok(port: int) -> bool:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as reply:
        return reply.status == 200


def completion(port: int) -> None:
    import json
    import urllib.request

    body = json.dumps({"model": "m", "prompt": "x", "max_tokens": 8}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as reply:
        assert reply.status == 200


def test_sigkill_of_the_launcher_leaves_nothing_serving(launcher_factory) -> None:
    port = free_port()
    launcher = launcher_factory(args(port, "--no-smoke"), launch_env({"FAKE_SGLANG_SPAWN_WORKER": "1"}, fake_sglang=True))
    launcher.wait_for("serving at", timeout=120)
    assert health_ok(port)
    launcher.process.kill()  # no handler runs: only the watchdog can stop the runtime now
    assert launcher.wait(timeout=30) == -signal.SIGKILL
    assert port_closed(port), f"port {port} still serving after the launcher was killed"
    assert_no_process_left(launcher.runtime_pgid)


def test_sighup_stops_the_runtime_and_gives_129(launcher_factory) -> None:
    port = free_port()
    launcher = launcher_factory(args(port, "--no-smoke"), launch_env({"FAKE_SGLANG_SPAWN_WORKER": "1"}, fake_sglang=True))
    launcher.wait_for("serving at", timeout=120)
    launcher.interrupt(signal.SIGHUP)
    assert launcher.wait(timeout=60) == 129
    assert "Received signal 15" in launcher.err  # passed on as SIGTERM: SGLang's clean shutdown
    assert port_closed(port)
    assert_no_process_left(launcher.runtime_pgid)


def test_sigquit_stops_the_runtime_without_a_core_dump_and_gives_131(launcher_factory) -> None:
    port = free_port()
    launcher = launcher_factory(args(port, "--no-smoke"), launch_env(fake_sglang=True))
    launcher.wait_for("serving at", timeout=120)
    launcher.interrupt(signal.SIGQUIT)
    assert launcher.wait(timeout=60) == 131
    assert "Received signal 15" in launcher.err
    assert_no_process_left(launcher.runtime_pgid)


def test_a_closed_stderr_pipe_does_not_stop_supervision(tmp_path: Path) -> None:
    """``specguard launch ... 2>&1 | head``: the reader goes away; the launcher keeps supervising
    (and stopping) the runtime instead of dying and leaving it behind."""
    port = free_port()
    # Start-up takes 2 s, so readiness and verification are reported after the reader is gone.
    env = launch_env({"FAKE_SGLANG_SPAWN_WORKER": "1", "FAKE_SGLANG_STARTUP_DELAY": "2"}, fake_sglang=True)
    process = subprocess.Popen(
        [sys.executable, "-m", "specguard", "launch", *args(port, "--no-smoke")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=REPO,
    )
    runtime_pgid = None
    try:
        assert process.stdout is not None
        seen = b""
        deadline = time.monotonic() + 120
        while b"fake sglang pgid=" not in seen and time.monotonic() < deadline:
            seen += process.stdout.readline()
        runtime_pgid = int(seen.split(b"fake sglang pgid=")[1].split()[0])
        process.stdout.close()  # the reader is gone, as when `head` has its lines
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if health_ok(port):
                    break
            except OSError:
                time.sleep(0.3)
        # Each request logs a line: 600 of them are more than a pipe holds (64 KiB), so a launcher
        # that stopped draining the runtime's log would leave the runtime blocked on a write.
        for _ in range(600):
            completion(port)
        assert process.poll() is None, f"the launcher died with its reader (exit {process.returncode})"
        assert health_ok(port)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 143
        assert port_closed(port)
        assert_no_process_left(runtime_pgid)
    finally:
        if process.poll() is None:
            process.kill()
        if runtime_pgid is not None:
            try:
                os.killpg(runtime_pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_full_disk_under_log_file_does_not_stall_the_runtime(tmp_path: Path, launcher_factory) -> None:
    # The disk is full at the log file's end: RLIMIT_FSIZE at its size fails the next write (EFBIG)
    # as ENOSPC would; the launcher's own output stays far below it.
    limit = 1 << 20
    log = tmp_path / "runtime.log"
    log.write_bytes(b"x" * limit)
    port = free_port()
    launcher = launcher_factory(args(port, "--log-file", str(log)), launch_env(fake_sglang=True), file_size_limit=limit)
    launcher.wait_for("serving at", timeout=120)  # the smoke request ran: the runtime was not blocked
    assert f"--log-file {log}: File too large" in launcher.err
    assert launcher.err.count(f"--log-file {log}") == 1  # said once, then the log is dropped
    assert "smoke request" in launcher.err
    launcher.interrupt(signal.SIGTERM)
    assert launcher.wait(timeout=60) == 143
    assert_no_process_left(launcher.runtime_pgid)
