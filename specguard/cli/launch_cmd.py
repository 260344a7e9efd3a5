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
  killed after ``--stop-timeout``. If the launcher itself is killed (SIGKILL), a watchdog
  (``specguard/launch/watchdog.py``) stops the runtime's group.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, cast

import typer

from specguard.cli.check import build_inputs, own_options
from specguard.cli.errors import clean_errors
from specguard.cli.launch_forms import (
    reject_misspelled_options,
    requests_from,
    wants_help,
)
from specguard.cli.options import (
    DialectOpt,
    Draft,
    EnvVars,
    Gpu,
    GpuCount,
    Offline,
    OutputFormat,
    Preset,
    SglangVersion,
    Target,
    UnsafeFixes,
)
from specguard.errors import InputError
from specguard.launch.exit_codes import help_text

if TYPE_CHECKING:
    from rich.console import Console

    from specguard.launch.session import LaunchSession


class RuntimeChoice(StrEnum):
    auto = "auto"
    sglang = "sglang"
    reference = "reference"


EXIT_CODES_HELP = help_text()


def launch_command(
    ctx: typer.Context,
    preset: Preset = None,
    target: Target = None,
    draft: Draft = None,
    dialect: DialectOpt = None,
    sglang_version: SglangVersion = None,
    gpu: Gpu = None,
    gpu_count: GpuCount = None,
    env: EnvVars = None,
    offline: Offline = False,
    runtime: Annotated[
        RuntimeChoice, typer.Option("--runtime", help="sglang, the bundled reference runtime, or auto (sglang with a GPU, else reference).", case_sensitive=False)
    ] = RuntimeChoice.auto,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the exact command and env, start nothing.")] = False,
    no_fix: Annotated[bool, typer.Option("--no-fix", help="Launch the flags as given: apply no fix.")] = False,
    unsafe_fixes: UnsafeFixes = False,
    force: Annotated[bool, typer.Option("--force", help="Start even though error findings remain.")] = False,
    host: Annotated[str | None, typer.Option("--host", help="Address the server binds (default: --host in SERVER_ARGS, else 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port the server listens on (default: --port in SERVER_ARGS, else 30000).", min=1, max=65535)] = None,
    ready_timeout: Annotated[float, typer.Option("--ready-timeout", help="Seconds to wait for /health_generate to answer 200.", min=1)] = 900.0,
    no_smoke: Annotated[bool, typer.Option("--no-smoke", help="Skip the smoke request and the statistics.")] = False,
    log_file: Annotated[Path | None, typer.Option("--log-file", help="Write the runtime's log here instead of streaming it.")] = None,
    retry_with_fix: Annotated[bool, typer.Option("--retry-with-fix", help="After a diagnosed start-up crash, retry once with its fix.")] = False,
    stop_timeout: Annotated[float, typer.Option("--stop-timeout", help="Seconds between the stop signal and SIGKILL.", min=0)] = 30.0,
    health_interval: Annotated[float, typer.Option("--health-interval", help="Seconds between /health checks while serving (0: none).", min=0)] = 30.0,
    output_format: Annotated[OutputFormat, typer.Option("--format", help="human, or json (with --dry-run).", case_sensitive=False)] = OutputFormat.human,
) -> None:
    """Check and correct a launch, start the runtime, wait until it serves, verify it, and supervise it.

    SERVER_ARGS go after `--`. See the exit codes below.
    """
    if wants_help(ctx.args):  # before anything starts: `launch -h` must never start a runtime
        print(ctx.get_help())
        raise typer.Exit(0)
    as_json = output_format is not OutputFormat.human
    with clean_errors(lambda: as_json):
        if output_format is OutputFormat.sarif or (as_json and not dry_run):
            raise typer.BadParameter("--format json is for --dry-run; a live launch reports on stderr", param_hint="--format")
        from rich.console import Console

        from specguard.launch.console import ResilientStream
        from specguard.launch.session import LaunchRequest, prepare

        reject_misspelled_options(ctx.args, own_options(ctx))
        requests = requests_from(ctx.args, None, preset=preset)
        if len(requests) > 1:
            lines = ", ".join(f"line {r.found.line}" for r in requests if r.found)
            raise InputError(f"the text holds {len(requests)} launches ({lines}); launch starts one", hint="pass one command, or check them all with specguard check")
        console = Console(file=cast(IO[str], ResilientStream(sys.stderr)), soft_wrap=True)  # duck-typed: write/flush/isatty
        inputs = build_inputs(
            list(requests[0].server_args), preset=preset, target=target, draft=draft, dialect=dialect.value if dialect else None,
            sglang_version=sglang_version, gpu=gpu, gpu_count=gpu_count, env=env, offline=offline, found=requests[0].found,
        )
        request = LaunchRequest(dry_run=dry_run, as_json=as_json, no_fix=no_fix, unsafe_fixes=unsafe_fixes, force=force,
                                host=host, port=port, runtime=runtime.value, preset=preset)
        session = prepare(inputs, request, console, confirm=lambda question: typer.confirm(question, default=False, err=True))
        if dry_run or session.blocked:
            _print_dry_run(session, as_json, console)
            raise typer.Exit(1 if session.blocked else 0)
        plan = session.plan
        assert plan is not None  # only a blocked session has none
        if not plan.startable:
            print(plan.shell)
            if plan.runtime == "slime":
                console.print(f"[bold]{plan.reason}[/bold]")
                raise typer.Exit(0)
            raise InputError(plan.reason)
    from specguard.launch.run import run

    code = run(session, console, ready_timeout=ready_timeout, smoke=not no_smoke, log_file=log_file, retry_with_fix=retry_with_fix,
               stop_timeout=stop_timeout, health_interval=health_interval)
    raise typer.Exit(code)


launch_command.__doc__ = (launch_command.__doc__ or "") + "\n\n" + EXIT_CODES_HELP


def _print_dry_run(session: LaunchSession, as_json: bool, console: Console) -> None:
    from specguard.launch.session import dry_run_launch

    plan = session.plan
    if plan is None:
        return
    if as_json:
        from specguard.redact import redact_argv
        from specguard.report import outcome_json

        document = outcome_json(session.outcome, session.ctx, extra={"launch": dry_run_launch(session, plan)})
        document["argv"] = redact_argv(document["argv"])
        document["exit_code"] = 1 if session.blocked else 0
        print(json.dumps(document, indent=2))
        return
    console.print(f"[bold]runtime:[/bold] {plan.runtime} ({plan.reason})")
    if session.blocked:
        return
    for key, value in plan.env.items():
        console.print(f"env {key}={value}", markup=False)
    if session.nodes:
        for rank, command in enumerate(session.nodes):
            print(f"# node {rank} of {len(session.nodes)}")
            print(command)
    else:
        print(plan.shell)
