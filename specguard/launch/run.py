"""Start a prepared launch and supervise it: the port check, the runtime's log, the signals that
stop it, the diagnosis of a start-up crash and the one retry with its fix."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import IO, Any

from specguard.diagnosis import diagnose, retry_spec
from specguard.launch.console import RichReporter
from specguard.launch.exit_codes import RunKind
from specguard.launch.probe import port_is_free
from specguard.launch.session import LaunchSession
from specguard.launch.supervisor import StopRequest, SuperviseOptions, supervise

# The signals that stop a launch: Ctrl-C, kill, the terminal closing (SIGHUP) and Ctrl-\\ (SIGQUIT).
# Each is passed to the runtime's process group and the launcher exits 128 + N.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def run(session: LaunchSession, console: Any, *, ready_timeout: float, smoke: bool, log_file: Path | None,
        retry_with_fix: bool, stop_timeout: float, health_interval: float) -> int:
    """Start the planned runtime and supervise it until it ends; after a diagnosed start-up crash,
    retry once with its fix when asked. Returns the launcher's exit code."""
    plan, spec = session.plan, session.spec
    assert plan is not None  # a session without a plan is blocked and never run
    outcome, check_ctx = session.outcome, session.ctx
    node_rank = spec.get("node_rank") or 0
    sink: IO[str] | None = None
    if log_file is not None:
        try:
            sink = open(log_file, "a", encoding="utf-8", buffering=1, opener=_open_without_waiting)  # noqa: SIM115 - lives as long as the run
        except OSError as error:
            fail(console, f"--log-file {log_file}: {error.strerror or error}")
            return 2

    runtime = plan.runtime  # a retry keeps the runtime: its log lines keep their label

    def log(line: str) -> None:
        nonlocal sink
        if sink is not None:
            try:
                sink.write(line + "\n")
            except OSError as error:  # a full disk must not stall the runtime: drop its log from here on
                sink = None
                log_dropped.set()
                fail(console, f"--log-file {log_file}: {error.strerror or error}; the runtime's log is dropped from now on, supervision goes on")
        elif not log_dropped.is_set():
            console.print(f"[{runtime}] {line}", markup=False, highlight=False, style="dim")

    log_dropped = threading.Event()
    stop = StopRequest()
    previous = {signum: signal.signal(signum, stop) for signum in STOP_SIGNALS}
    reporter = RichReporter(console, check_ctx.with_spec(spec).resolution)
    options = SuperviseOptions(ready_timeout=ready_timeout, smoke=smoke, grace=stop_timeout, health_interval=health_interval,
                               wait_for_http=node_rank == 0)
    try:
        attempts = 2 if retry_with_fix else 1
        for attempt in range(attempts):
            if node_rank == 0 and not port_is_free(plan.host, plan.port):
                fail(console, f"port {plan.port} on {plan.host} is already in use; choose another with --port, or stop what holds it")
                return 2
            console.print("[bold]starting[/bold]", end=" ")
            console.print(f"{plan.runtime}: {plan.shell}", markup=False, highlight=False)
            result = supervise(
                plan.argv, {**os.environ, **plan.env}, host=plan.host, port=plan.port, api_key=plan.api_key,
                model=plan.served_model_name, options=options, stop=stop, reporter=reporter, log=log,
            )
            if result.kind in (RunKind.CRASHED, RunKind.UNHEALTHY, RunKind.TIMEOUT) or result.exit_code not in (0, 130, 143):
                console.print(f"[bold red]{result.message}[/bold red]")
            else:
                console.print(f"[bold]{result.message}[/bold]: exit code {result.exit_code}")
            if result.kind not in (RunKind.CRASHED, RunKind.EXITED, RunKind.UNHEALTHY) or (result.kind is RunKind.EXITED and result.exit_code == 0):
                return result.exit_code
            diagnoses = diagnose(result.log_tail, outcome.findings, check_ctx.version)
            print_diagnoses(console, diagnoses, result.log_tail)
            fixable = [d for d in diagnoses if d.edits]
            if result.kind is not RunKind.CRASHED or not fixable or attempt + 1 >= attempts or stop.requested:
                if fixable and result.kind is RunKind.CRASHED and not retry_with_fix:
                    console.print("rerun with --retry-with-fix to try the fix above once")
                return result.exit_code
            spec, refusal = retry_spec(spec, fixable[0].edits, check_ctx, outcome)
            if refusal:
                console.print(f"[bold red]not retrying[/bold red]: {refusal}", highlight=False)
                return result.exit_code
            plan = session.replan(spec)
            console.print(f"[bold]retrying once with the fix for {fixable[0].signature.key}[/bold]: {fixable[0].fix_title} (re-checked for SGLang {check_ctx.env.sglang_version})")
        return 1
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if sink is not None:
            try:
                sink.close()
            except OSError:
                pass


def _open_without_waiting(path: str, flags: int) -> int:
    """O_NONBLOCK: a FIFO put in the log file's place since the CLI refused non-regular files
    fails to open instead of hanging until a reader comes (a regular file is unaffected)."""
    return os.open(path, flags | os.O_NONBLOCK)


def fail(console: Any, message: str) -> None:
    console.print(f"specguard: error: {message}", markup=False, highlight=False)


def print_diagnoses(console: Any, diagnoses: list[Any], tail: list[str]) -> None:
    if not diagnoses:
        console.print("[bold]No known failure signature in the log.[/bold] Its last lines:")
        for line in tail[-15:]:
            console.print(f"  {line}", markup=False, highlight=False)
        return
    console.print("[bold]Diagnosis from the runtime's log:[/bold]")
    for d in diagnoses:
        rule = f"{d.rule}: " if d.rule else ""
        console.print(f"  - [bold]{d.signature.key}[/bold] ({rule}{d.signature.meaning})")
        console.print(f"    log: {d.line.strip()[:300]}", markup=False, highlight=False)
        console.print(f"    try: {d.fix_title or d.signature.advice}", markup=False, highlight=False)
        console.print(f"    source: {d.signature.source}", markup=False, highlight=False)
