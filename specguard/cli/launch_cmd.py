"""``specguard launch``: check, correct, then start the runtime and supervise it.

Exit codes (also in the command's help and docs/launch.md):

* 0: ``--dry-run`` with nothing blocking; or the runtime exited 0 on its own.
* 1: error findings remain and ``--force`` was not given (nothing was started).
* 2: usage or input error: bad flags, preset, model, port already in use, runtime not
  installed or refusing the configuration (nothing was started, or nothing is left running).
* 3: the runtime did not become ready within ``--ready-timeout`` (it was stopped).
* 4: the runtime started but does not serve: the smoke request failed, or ``/health``
  failed three times in a row (it was stopped).
* otherwise the runtime's own exit code: a crash during start-up gives its code (1 when it
  exited 0 without ever serving); a runtime killed by signal N gives 128 + N.
* Ctrl-C / SIGTERM / SIGHUP / SIGQUIT: the signal is passed to the runtime's process group; when
  the runtime then shuts down cleanly the launcher exits 128 + N (130 SIGINT, 143 SIGTERM, 129
  SIGHUP, 131 SIGQUIT), the shell's convention for "stopped by that signal"; 137 if it had to be
  killed after ``--stop-timeout``. If the launcher itself is killed (SIGKILL, alone or with its
  whole process group), the runtime gets SIGTERM from the kernel (``specguard/launch/parent_death.py``)
  and a watchdog in its own session (``specguard/launch/watchdog.py``) stops the runtime's group.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, cast

from specguard.cli.check import build_inputs
from specguard.cli.errors import clean_errors
from specguard.cli.launch_forms import reject_misspelled_options, requests_from
from specguard.cli.options import (
    DATA_FORMAT,
    DIALECT,
    DRAFT,
    ENV,
    EXTEND_SELECT,
    GPU,
    GPU_COUNT,
    IGNORE,
    OFFLINE,
    PRESET,
    SELECT,
    SGLANG_VERSION,
    TARGET,
    UNSAFE_FIXES,
    DataFormat,
    DialectChoice,
)
from specguard.cli.parsing import (
    Invocation,
    Option,
    Parser,
    UsageError,
    at_least,
    choice,
)
from specguard.errors import InputError
from specguard.launch.exit_codes import help_text
from specguard.records import Record, replace
from specguard.text_input import refuse_unless_regular

if TYPE_CHECKING:
    from rich.console import Console

    from specguard.launch.session import LaunchSession


class RuntimeChoice(StrEnum):
    auto = "auto"
    sglang = "sglang"
    reference = "reference"


DETAILS = {"launch": "SERVER_ARGS go after `--`.\n\n" + help_text()}

RUNTIME = Option(
    "--runtime", "sglang, the bundled reference runtime, or auto (sglang with a GPU, else reference).",
    convert=choice(RuntimeChoice),
)
DRY_RUN = Option("--dry-run", "Print the exact command and env, start nothing.", switch=True)
NO_FIX = Option("--no-fix", "Launch the flags as given: apply no fix.", switch=True)
FORCE = Option("--force", "Start even though error findings remain.", switch=True)
HOST = Option("--host", "Address the server binds (default: --host in SERVER_ARGS, else 127.0.0.1).")
PORT = Option("--port", "Port the server listens on (default: --port in SERVER_ARGS, else 30000).", convert=at_least(int, 1, 65535))
READY_TIMEOUT = Option("--ready-timeout", "Seconds to wait for /health_generate to answer 200.", convert=at_least(float, 1))
NO_SMOKE = Option("--no-smoke", "Skip the smoke request and the statistics.", switch=True)
LOG_FILE = Option("--log-file", "Write the runtime's log here instead of streaming it.", convert=Path)
RETRY_WITH_FIX = Option("--retry-with-fix", "After a diagnosed start-up crash, retry once with its fix.", switch=True)
STOP_TIMEOUT = Option("--stop-timeout", "Seconds between the stop signal and SIGKILL.", convert=at_least(float, 0))
HEALTH_INTERVAL = Option("--health-interval", "Seconds between /health checks while serving (0: none).", convert=at_least(float, 0))
FORMAT = replace(DATA_FORMAT, help="human, or json (with --dry-run).")


class LaunchOptions(Record):
    preset: Annotated[str | None, PRESET] = None
    target: Annotated[str | None, TARGET] = None
    draft: Annotated[str | None, DRAFT] = None
    dialect: Annotated[DialectChoice | None, DIALECT] = None
    sglang_version: Annotated[str | None, SGLANG_VERSION] = None
    gpu: Annotated[str | None, GPU] = None
    gpu_count: Annotated[int | None, GPU_COUNT] = None
    env: Annotated[list[str] | None, ENV] = None
    offline: Annotated[bool, OFFLINE] = False
    runtime: Annotated[RuntimeChoice, RUNTIME] = RuntimeChoice.auto
    dry_run: Annotated[bool, DRY_RUN] = False
    no_fix: Annotated[bool, NO_FIX] = False
    unsafe_fixes: Annotated[bool, UNSAFE_FIXES] = False
    force: Annotated[bool, FORCE] = False
    host: Annotated[str | None, HOST] = None
    port: Annotated[int | None, PORT] = None
    ready_timeout: Annotated[float, READY_TIMEOUT] = 900.0
    no_smoke: Annotated[bool, NO_SMOKE] = False
    log_file: Annotated[Path | None, LOG_FILE] = None
    retry_with_fix: Annotated[bool, RETRY_WITH_FIX] = False
    stop_timeout: Annotated[float, STOP_TIMEOUT] = 30.0
    health_interval: Annotated[float, HEALTH_INTERVAL] = 30.0
    output_format: Annotated[DataFormat, FORMAT] = DataFormat.human
    select: Annotated[list[list[str]] | None, SELECT] = None
    extend_select: Annotated[list[list[str]] | None, EXTEND_SELECT] = None
    ignore: Annotated[list[list[str]] | None, IGNORE] = None


OPTIONS = {"launch": LaunchOptions}


def configure(parser: Parser, name: str) -> None:
    parser.usage = "specguard launch [OPTIONS] [-- SERVER_ARGS... | 'COMMAND']"


def run(invocation: Invocation[LaunchOptions]) -> int:
    """Check and correct a launch, start the runtime, wait until it serves, verify it, and supervise it."""
    o = invocation.options
    as_json = o.output_format is not DataFormat.human
    with clean_errors(lambda: as_json):
        if as_json and not o.dry_run:
            raise UsageError("--format json is for --dry-run; a live launch reports on stderr", "specguard launch")
        from rich.console import Console

        from specguard.launch.console import ResilientStream
        from specguard.launch.session import LaunchRequest, prepare
        from specguard.project_config import selection_for_command
        from specguard.suppressions import suppressions_for

        if o.log_file is not None:
            _refuse_unusable_log_file(o.log_file)
        reject_misspelled_options(invocation.server_args, invocation.own_options)
        requests = requests_from(invocation.server_args, None, preset=o.preset)
        if len(requests) > 1:
            lines = ", ".join(f"line {r.found.line}" for r in requests if r.found)
            raise InputError(f"the text holds {len(requests)} launches ({lines}); launch starts one", hint="pass one command, or check them all with specguard check")
        console = Console(file=cast(IO[str], ResilientStream(sys.stderr)), soft_wrap=True)  # duck-typed: write/flush/isatty
        inputs = build_inputs(
            list(requests[0].server_args), preset=o.preset, target=o.target, draft=o.draft, dialect=o.dialect.value if o.dialect else None,
            sglang_version=o.sglang_version, gpu=o.gpu, gpu_count=o.gpu_count, env=o.env, offline=o.offline, found=requests[0].found,
        )
        request = LaunchRequest(dry_run=o.dry_run, as_json=as_json, no_fix=o.no_fix, unsafe_fixes=o.unsafe_fixes, force=o.force,
                                host=o.host, port=o.port, runtime=o.runtime.value, preset=o.preset,
                                selection=selection_for_command(None, o.preset, o.select, o.ignore, o.extend_select),
                                suppressed=suppressions_for(requests[0].found, o.preset))
        session = prepare(inputs, request, console, confirm=_confirm)
        if session.plan is not None and session.plan.startable:
            # A dry run too: it shows what would start here. (A command printed to run elsewhere
            # may name an address of that machine.)
            _refuse_unbindable_host(session.plan.host)
        if o.dry_run or session.blocked:
            _print_dry_run(session, as_json, console)
            return 1 if session.blocked else 0
        plan = session.plan
        assert plan is not None  # only a blocked session has none
        if not plan.startable:
            print(plan.shell)
            if plan.runtime == "slime":
                console.print(f"[bold]{plan.reason}[/bold]")
                return 0
            raise InputError(plan.reason)
    from specguard.launch.run import run as run_session

    return run_session(session, console, ready_timeout=o.ready_timeout, smoke=not o.no_smoke, log_file=o.log_file,
                       retry_with_fix=o.retry_with_fix, stop_timeout=o.stop_timeout, health_interval=o.health_interval)


def _refuse_unusable_log_file(path: Path) -> None:
    """Only a regular file (or a path to create one) is a log file: opening a FIFO blocks until a
    reader comes, and a reader that stops reading would stall the runtime's log, then the runtime.
    /dev/null is the one device taken: writing there discards the log and never waits."""
    with contextlib.suppress(OSError):
        if os.path.samefile(path, os.devnull):
            return  # the usual way to discard a log; it never blocks
    refuse_unless_regular(path, f"--log-file {path}", hint="give the path of a regular file (created if missing)")


def _refuse_unbindable_host(host: str) -> None:
    from specguard.launch.probe import bind_problem

    problem = bind_problem(host)
    if problem is not None:
        raise InputError(f"--host {host} {problem}", hint="bind 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)")


def _confirm(question: str) -> bool:
    """A yes/no question on stderr; no answer (or no terminal) is no."""
    print(f"{question} [y/N]: ", end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline() if sys.stdin is not None else ""
    except (OSError, UnicodeDecodeError):
        return False
    return answer.strip().lower() in ("y", "yes")


def _print_dry_run(session: LaunchSession, as_json: bool, console: Console) -> None:
    from specguard.launch.session import dry_run_launch

    plan = session.plan
    if plan is None:
        return
    from specguard.redact import redact_env, redact_text

    if as_json:
        from specguard.report import outcome_json

        # outcome_json masks the launch's argv and env; the plan's env and text are masked here.
        launch = dry_run_launch(session, plan)
        launch["env"] = redact_env(launch["env"])
        launch["reason"] = redact_text(launch["reason"])
        document = outcome_json(session.outcome, session.ctx, extra={"launch": launch})
        document["exit_code"] = 1 if session.blocked else 0
        print(json.dumps(document, indent=2))
        return
    console.print(f"[bold]runtime:[/bold] {plan.runtime} ({redact_text(plan.reason)})", highlight=False)
    if session.blocked:
        return
    for key, value in redact_env(plan.env).items():
        console.print(f"env {key}={value}", markup=False)
    if session.nodes:
        for rank, command in enumerate(session.nodes):
            print(f"# node {rank} of {len(session.nodes)}")
            print(command)
    else:
        print(plan.shell)
