"""Start a runtime in its own process group, stream its log, wait for it to serve, verify, stop it.

The phases, each ending the run with a clear outcome (``RunResult.kind``):

1. start: the child runs in a new session (its own process group), log to us line by line,
   with SIGTERM from the kernel should the launcher die (``parent_death.py``) and a watchdog
   in a session of its own (``watchdog.py``) that stops its group after the launcher's SIGKILL;
2. readiness: ``/health_generate`` answers 200 within ``ready_timeout`` ("timeout" if not,
   "crashed" if the child exits first, "stopped" on Ctrl-C/SIGTERM);
3. verification: ``/server_info`` compared with specguard's prediction, one greedy smoke
   request, the speculative statistics ("unhealthy" if the smoke request fails);
4. serving: until a stop signal or the child's exit; ``/health`` is polled and three
   failures in a row end the run ("unhealthy").

Whatever the ending, the child's whole process group is stopped: the stop signal first,
SIGKILL after ``grace`` seconds, so no process is left behind.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from specguard.launch import parent_death
from specguard.launch.exit_codes import LaunchExit, RunKind
from specguard.launch.probe import Client, Smoke, smoke_request

ACCEPT_LEN = re.compile(r"accept len: ([0-9.]+)")
HEALTH_FAILURES_TO_GIVE_UP = 3


class StopRequest:
    """Set from a signal handler: which signal asked the launcher to stop."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signum: int | None = None
        self.count = 0  # a second Ctrl-C means: do not wait for the grace period

    def __call__(self, signum: int, _frame: object = None) -> None:
        if self.signum is None:
            self.signum = signum
        self.count += 1
        self.event.set()

    @property
    def requested(self) -> bool:
        return self.event.is_set()


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group ``pgid``, read from /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


class Child:
    """The runtime process: its own process group, its log read line by line on a thread."""

    def __init__(
        self, argv: list[str], env: dict[str, str], log: Callable[[str], None], tail: int = 500, watchdog_grace: float = 30.0
    ) -> None:
        self.argv = argv
        self.watchdog_grace = watchdog_grace
        self._watchdog: subprocess.Popen[bytes] | None = None
        self.env = env
        self._log = log
        self.lines: deque[str] = deque(maxlen=tail)
        self.last_accept_len: float | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None

    def start(self) -> None:
        # Both started from this (the main) thread: the kernel's parent-death signal follows the
        # thread that forked, and the runtime and the watchdog must outlive only the launcher itself.
        self.process = subprocess.Popen(
            parent_death.wrap(self.argv, os.getpid()),  # SIGTERM to the runtime when the launcher dies
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=self.env,
            start_new_session=True,  # own session and process group: signals reach it only through us
        )
        self._reader = threading.Thread(target=self._read, name="specguard-runtime-log", daemon=True)
        self._reader.start()
        self._watchdog = subprocess.Popen(
            [sys.executable, "-m", "specguard.launch.watchdog", str(os.getpid()), str(self.process.pid), str(self.watchdog_grace)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # out of the launcher's group: a kill of that whole group spares it
        )

    def dismiss_watchdog(self) -> None:
        """The launcher has stopped the runtime itself: the watchdog has nothing left to guard."""
        if self._watchdog is not None and self._watchdog.poll() is None:
            self._watchdog.kill()
            self._watchdog.wait()

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for raw in iter(self.process.stdout.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.lines.append(line)
            found = ACCEPT_LEN.search(line)
            if found:
                self.last_accept_len = float(found.group(1))
            try:
                self._log(line)
            except Exception:  # noqa: BLE001, S110 - a failing sink must never stop the draining, or the runtime blocks on a full pipe
                pass

    def poll(self) -> int | None:
        assert self.process is not None
        return self.process.poll()

    def finish_log(self, timeout: float = 5.0) -> None:
        if self._reader is not None:
            self._reader.join(timeout)

    def stop(
        self, first_signal: int = signal.SIGTERM, grace: float = 30.0, hurry: Callable[[], bool] = lambda: False
    ) -> tuple[int, bool]:
        """Signal the group, wait ``grace`` s (or until ``hurry()``), then SIGKILL what is left. (returncode, killed)."""
        assert self.process is not None
        killed = False
        if self.process.poll() is None:
            self._signal_group(first_signal)
            deadline = time.monotonic() + grace
            while self.process.poll() is None and time.monotonic() < deadline and not hurry():
                time.sleep(0.05)
            if self.process.poll() is None:
                killed = True
                self._signal_group(signal.SIGKILL)
                self.process.wait()
        self.reap_group(grace=min(grace, 5.0))
        self.dismiss_watchdog()
        self.finish_log()
        return self.process.returncode, killed

    def reap_group(self, grace: float = 5.0) -> None:
        """The child is gone: stop whatever it left in its group (workers, schedulers)."""
        pgid = self.pid
        if not group_members(pgid):
            return
        self._signal_group(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while group_members(pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if group_members(pgid):
            self._signal_group(signal.SIGKILL)

    def _signal_group(self, signum: int) -> None:
        try:
            os.killpg(self.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


@dataclass
class RunResult:
    kind: RunKind
    exit_code: int
    message: str = ""
    ready_seconds: float | None = None
    server_info: dict[str, Any] | None = None
    smoke: Smoke | None = None
    log_tail: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SuperviseOptions:
    ready_timeout: float = 900.0
    smoke: bool = True
    grace: float = 30.0
    health_interval: float = 10.0
    wait_for_http: bool = True  # False for a worker node of a multi-node launch (no HTTP server)


class Reporter(Protocol):
    """What the supervisor tells the user; the CLI supplies a rich implementation."""

    def phase(self, text: str) -> None: ...
    def waiting(self, seconds: float, timeout: float) -> None: ...
    def ready(self, seconds: float) -> None: ...
    def server_info(self, route: str, info: dict[str, Any]) -> None: ...
    def smoke(self, result: Smoke) -> None: ...
    def statistics(self, info: dict[str, Any] | None, smoke: Smoke | None, log_accept_len: float | None) -> None: ...
    def serving(self, url: str) -> None: ...
    def problem(self, text: str) -> None: ...
    def close_progress(self) -> None: ...


def signal_for_runtime(signum: int) -> int:
    """The signal the runtime's group gets when the launcher receives ``signum``: Ctrl-C stays
    SIGINT (SGLang and the reference runtime shut down on it); a closed terminal (SIGHUP) or
    Ctrl-\\ (SIGQUIT, whose default action dumps core: gigabytes for a GPU process) become SIGTERM."""
    return signum if signum in (signal.SIGINT, signal.SIGTERM) else signal.SIGTERM


def exit_code_of(returncode: int) -> int:
    """A child's status as a shell reports it: a signal N is 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def supervise(
    argv: list[str],
    env: dict[str, str],
    *,
    host: str,
    port: int,
    api_key: str | None,
    model: str,
    options: SuperviseOptions,
    stop: StopRequest,
    reporter: Reporter,
    log: Callable[[str], None],
) -> RunResult:
    child = Child(argv, env, log, watchdog_grace=options.grace)
    child.start()
    try:
        return _supervise(child, host=host, port=port, api_key=api_key, model=model, options=options, stop=stop, reporter=reporter)
    except BaseException:
        # An error in the launcher itself (or KeyboardInterrupt outside the handlers): stop the
        # runtime before the error propagates, so nothing is left serving without a supervisor.
        child.stop(signal.SIGTERM, options.grace, hurry=lambda: stop.count > 1)
        raise
    finally:
        child.dismiss_watchdog()


def _supervise(
    child: Child,
    *,
    host: str,
    port: int,
    api_key: str | None,
    model: str,
    options: SuperviseOptions,
    stop: StopRequest,
    reporter: Reporter,
) -> RunResult:
    client = Client(host, port, api_key)
    began = time.monotonic()

    def ended(kind: RunKind, message: str, exit_code: int | None = None, signum: int = signal.SIGTERM) -> RunResult:
        reporter.close_progress()
        passed_on = signal_for_runtime(signum)
        returncode, killed = child.stop(passed_on, options.grace, hurry=lambda: stop.count > 1)
        code = exit_code if exit_code is not None else exit_code_of(returncode)
        if kind is RunKind.STOPPED:
            # A stop we asked for: the runtime's code if it failed on its own, else the shell's 128 + N
            # for the signal the launcher received.
            stopped_cleanly = returncode in (0, -passed_on)
            code = exit_code_of(-signal.SIGKILL) if killed else (128 + signum if stopped_cleanly else exit_code_of(returncode))
        return RunResult(kind, code, message, log_tail=list(child.lines))

    def exited(during_start: bool) -> RunResult:
        reporter.close_progress()
        child.reap_group(grace=min(options.grace, 5.0))
        child.dismiss_watchdog()
        child.finish_log()
        returncode = child.poll() or 0
        code = exit_code_of(returncode)
        if during_start:
            return RunResult(
                RunKind.CRASHED, code if code != 0 else 1, f"the runtime exited during start-up (exit code {code})", log_tail=list(child.lines)
            )
        return RunResult(RunKind.EXITED, code, f"the runtime exited (exit code {code})", log_tail=list(child.lines))

    # ---------------------------------------------------------------- readiness
    if options.wait_for_http:
        reporter.phase(f"waiting for {client.base}/health_generate")
        while True:
            if stop.requested:
                return ended(RunKind.STOPPED, "stopped before the runtime was ready", signum=stop.signum or signal.SIGTERM)
            if child.poll() is not None:
                return exited(during_start=True)
            elapsed = time.monotonic() - began
            if elapsed > options.ready_timeout:
                return ended(
                    RunKind.TIMEOUT,
                    f"the runtime was not ready within --ready-timeout {options.ready_timeout:g} s "
                    f"({client.base}/health_generate never answered 200)",
                    exit_code=LaunchExit.NOT_READY,
                )
            reporter.waiting(elapsed, options.ready_timeout)
            reply = _interruptible(lambda: client.get("/health_generate", timeout=30.0), stop, child)
            if reply is not None and reply.ok:
                break
            stop.event.wait(0.5)
        ready_seconds = time.monotonic() - began
        reporter.close_progress()
        reporter.ready(ready_seconds)

        # ------------------------------------------------------------ verification
        info_reply = _interruptible(client.server_info, stop, child)
        if info_reply is not None:
            reporter.server_info(*info_reply)
        smoke = None
        if options.smoke:
            reporter.phase("smoke request (temperature 0)")
            smoke = _interruptible(lambda: smoke_request(client, model), stop, child)
            reporter.close_progress()
            if smoke is not None:
                reporter.smoke(smoke)
                if not smoke.ok:
                    if child.poll() is not None:
                        return exited(during_start=False)
                    return ended(RunKind.UNHEALTHY, f"the runtime is up but the smoke request failed: {smoke.error}", exit_code=LaunchExit.NOT_SERVING)
            stats = _interruptible(client.server_info, stop, child)
            reporter.statistics(stats[1] if stats else None, smoke, child.last_accept_len)
        reporter.serving(client.base)
    else:
        reporter.serving(f"node process {child.pid}")

    # ---------------------------------------------------------------- serving
    failures = 0
    next_check = time.monotonic() + options.health_interval
    while True:
        if stop.requested:
            return ended(RunKind.STOPPED, "stopped", signum=stop.signum or signal.SIGTERM)
        if child.poll() is not None:
            return exited(during_start=False)
        if options.wait_for_http and options.health_interval > 0 and time.monotonic() >= next_check:
            reply = _interruptible(lambda: client.get("/health", timeout=max(options.health_interval, 20.0)), stop, child)
            if reply is not None:
                failures = 0 if reply.ok else failures + 1
                if failures:
                    reporter.problem(f"/health answered {reply.status or reply.error} ({failures}/{HEALTH_FAILURES_TO_GIVE_UP})")
                if failures >= HEALTH_FAILURES_TO_GIVE_UP:
                    return ended(
                        RunKind.UNHEALTHY,
                        f"the health endpoint failed {failures} times in a row after start-up; the runtime was stopped",
                        exit_code=LaunchExit.NOT_SERVING,
                    )
            next_check = time.monotonic() + options.health_interval
        stop.event.wait(0.2)




def _interruptible(call: Callable[[], Any], stop: StopRequest, child: Child) -> Any:
    """Run a blocking HTTP call on a thread; give up (None) as soon as a stop is asked or the child exits."""
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(call()), daemon=True)
    worker.start()
    while worker.is_alive():
        if stop.requested or child.poll() is not None:
            return None
        worker.join(0.1)
    return box[0] if box else None
