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
import signal
import sys
import threading
from enum import StrEnum
from pathlib import Path
from typing import IO, Annotated, Any, cast

import typer

from specguard.cli.check import build_inputs, own_options, run_check
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
from specguard.models import Applicability

# The signals that stop a launch: Ctrl-C, kill, the terminal closing (SIGHUP) and Ctrl-\\ (SIGQUIT).
# Each is passed to the runtime's process group and the launcher exits 128 + N.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class ResilientStream:
    """A stream that goes quiet instead of raising once its reader is gone (``launch ... | head``,
    a closed terminal): the launcher keeps supervising, and stopping, the runtime either way."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.broken = False

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                return self._stream.write(text)
            except (BrokenPipeError, OSError):
                self.broken = True
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._stream.flush()
            except (BrokenPipeError, OSError):
                self.broken = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


from specguard.launch.exit_codes import RunKind, help_text


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

        reject_misspelled_options(ctx.args, own_options(ctx))
        requests = requests_from(ctx.args, None, preset=preset)
        if len(requests) > 1:
            lines = ", ".join(f"line {r.found.line}" for r in requests if r.found)
            raise InputError(f"the text holds {len(requests)} launches ({lines}); launch starts one", hint="pass one command, or check them all with specguard check")
        console = Console(file=cast(IO[str], ResilientStream(sys.stderr)), soft_wrap=True)  # duck-typed: write/flush/isatty
        session = _prepare(
            list(requests[0].server_args), console, found=requests[0].found, as_json=as_json, dry_run=dry_run, preset=preset, target=target, draft=draft, dialect=dialect,
            sglang_version=sglang_version, gpu=gpu, gpu_count=gpu_count, env=env, offline=offline, no_fix=no_fix,
            unsafe_fixes=unsafe_fixes, force=force, host=host, port=port, runtime=runtime,
        )
        if dry_run or session["blocked"]:
            _print_dry_run(session, as_json, console)
            raise typer.Exit(1 if session["blocked"] else 0)
        plan = session["plan"]
        if not plan.startable:
            print(plan.shell)
            if plan.runtime == "slime":
                console.print(f"[bold]{plan.reason}[/bold]")
                raise typer.Exit(0)
            raise InputError(plan.reason)
    code = _run(session, console, ready_timeout=ready_timeout, smoke=not no_smoke, log_file=log_file, retry_with_fix=retry_with_fix,
                stop_timeout=stop_timeout, health_interval=health_interval)
    raise typer.Exit(code)


launch_command.__doc__ = (launch_command.__doc__ or "") + "\n\n" + EXIT_CODES_HELP


# ------------------------------------------------------------------------------------ prepare


def _prepare(args: list[str], console: Any, *, as_json: bool, dry_run: bool, preset: str | None, no_fix: bool,
             unsafe_fixes: bool, force: bool, host: str | None, port: int | None, runtime: RuntimeChoice,
             dialect: Any, **inputs_kwargs: Any) -> dict[str, Any]:
    from specguard.launch.runtimes import (
        per_node_commands,
        plan_launch,
        resolve_tiny,
        uses_tiny,
        with_endpoint,
    )
    from specguard.report import print_human

    inputs = build_inputs(args, preset=preset, dialect=dialect.value if dialect else None, **inputs_kwargs)
    if uses_tiny(inputs):
        if not dry_run:
            console.print("[dim]resolving tiny:target / tiny:draft / tiny:eagle3 (built once, then cached)...[/dim]")
        inputs, tiny_note = resolve_tiny(inputs, build=not dry_run)
        if tiny_note:
            console.print(f"note: {tiny_note}", markup=False, highlight=False)
    level = None if no_fix else (Applicability.UNSAFE if unsafe_fixes else Applicability.SAFE)
    notes: list[str] = []  # facts left unknown (a dry run's tiny models not built yet)
    check_ctx, outcome = run_check(inputs, level, notes)
    for note in dict.fromkeys(notes):
        console.print(f"note: {note}", markup=False, highlight=False)
    pending_unsafe = [f for f in outcome.findings if f.fix and not f.applied and f.fix.applicability is Applicability.UNSAFE]
    if level is Applicability.SAFE and pending_unsafe and not dry_run and not as_json and sys.stdin.isatty() and sys.stderr.isatty():
        console.print("[bold]Fixes that change what runs (unsafe):[/bold]")
        for finding in pending_unsafe:
            console.print(f"  {finding.code} {finding.fix.title}: {finding.message}", markup=False)  # type: ignore[union-attr]
        if typer.confirm("Apply them before starting?", default=False, err=True):
            check_ctx, outcome = run_check(inputs, Applicability.UNSAFE, [])
    if not as_json:
        print_human(outcome, check_ctx, console, fix_hint="launch applies the safe ones; add --unsafe-fixes for the rest")
        if pending_unsafe and level is Applicability.SAFE:
            console.print(f"[yellow]{len(pending_unsafe)} unsafe fix(es) not applied: pass --unsafe-fixes to apply them.[/yellow]")
    blocked = bool(outcome.errors) and not force
    if blocked and not as_json:
        console.print(f"[bold red]{len(outcome.errors)} error(s) remain: not starting the runtime[/bold red] (--force starts it anyway).")
    spec = with_endpoint(outcome.corrected, host, port)  # type: ignore[arg-type]
    preset_runtime = None
    if preset:
        from specguard.presets import load

        preset_runtime = load(preset).preset.runtime.value
    try:
        plan = plan_launch(spec, requested=runtime.value, preset_runtime=preset_runtime, gpu_platform=check_ctx.env.platform,
                           strict=not dry_run)
    except InputError:
        if not blocked:
            raise
        plan = None  # the errors above come first: nothing would start anyway
    return {
        "ctx": check_ctx, "outcome": outcome, "spec": spec, "plan": plan, "blocked": blocked,
        "nodes": per_node_commands(plan, spec) if plan else [], "preset_runtime": preset_runtime, "runtime_choice": runtime,
    }


def _print_dry_run(session: dict[str, Any], as_json: bool, console: Any) -> None:
    plan = session["plan"]
    if plan is None:
        return
    launch = {
        "runtime": plan.runtime,
        "reason": plan.reason,
        "startable": plan.startable,
        "would_start": plan.startable and not session["blocked"],
        "command": plan.shown_argv if plan.printed_command is None else None,
        "shell": plan.shell,
        "env": plan.env,
        "host": plan.host,
        "port": plan.port,
        "nodes": [{"node_rank": rank, "shell": command} for rank, command in enumerate(session["nodes"])],
    }
    if as_json:
        from specguard.redact import redact_argv
        from specguard.report import outcome_json

        document = outcome_json(session["outcome"], session["ctx"], extra={"launch": launch})
        document["argv"] = redact_argv(document["argv"])
        document["exit_code"] = 1 if session["blocked"] else 0
        print(json.dumps(document, indent=2))
        return
    console.print(f"[bold]runtime:[/bold] {plan.runtime} ({plan.reason})")
    if session["blocked"]:
        return
    for key, value in plan.env.items():
        console.print(f"env {key}={value}", markup=False)
    if session["nodes"]:
        for rank, command in enumerate(session["nodes"]):
            print(f"# node {rank} of {len(session['nodes'])}")
            print(command)
    else:
        print(plan.shell)


# ------------------------------------------------------------------------------------ run


def _run(session: dict[str, Any], console: Any, *, ready_timeout: float, smoke: bool, log_file: Path | None,
         retry_with_fix: bool, stop_timeout: float, health_interval: float) -> int:
    import os

    from specguard.launch.probe import port_is_free
    from specguard.launch.runtimes import plan_launch
    from specguard.launch.signatures import diagnose
    from specguard.launch.supervisor import StopRequest, SuperviseOptions, supervise

    plan, spec = session["plan"], session["spec"]
    outcome, check_ctx = session["outcome"], session["ctx"]
    node_rank = spec.get("node_rank") or 0
    sink: IO[str] | None = None
    if log_file is not None:
        try:
            sink = open(log_file, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - lives as long as the run
        except OSError as error:
            _fail(console, f"--log-file {log_file}: {error.strerror or error}")
            return 2

    def log(line: str) -> None:
        nonlocal sink
        if sink is not None:
            try:
                sink.write(line + "\n")
            except OSError as error:  # a full disk must not stall the runtime: drop its log from here on
                sink = None
                log_dropped.set()
                _fail(console, f"--log-file {log_file}: {error.strerror or error}; the runtime's log is dropped from now on, supervision goes on")
        elif not log_dropped.is_set():
            console.print(f"[{plan.runtime}] {line}", markup=False, highlight=False, style="dim")

    log_dropped = threading.Event()
    stop = StopRequest()
    previous = {signum: signal.signal(signum, stop) for signum in STOP_SIGNALS}
    reporter = _RichReporter(console, check_ctx.with_spec(spec).resolution)
    options = SuperviseOptions(ready_timeout=ready_timeout, smoke=smoke, grace=stop_timeout, health_interval=health_interval,
                               wait_for_http=node_rank == 0)
    try:
        attempts = 2 if retry_with_fix else 1
        for attempt in range(attempts):
            if node_rank == 0 and not port_is_free(plan.host, plan.port):
                _fail(console, f"port {plan.port} on {plan.host} is already in use; choose another with --port, or stop what holds it")
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
            diagnoses = diagnose(result.log_tail, outcome.findings)
            _print_diagnoses(console, diagnoses, result.log_tail)
            fixable = [d for d in diagnoses if d.edits]
            if result.kind is not RunKind.CRASHED or not fixable or attempt + 1 >= attempts or stop.requested:
                if fixable and result.kind is RunKind.CRASHED and not retry_with_fix:
                    console.print("rerun with --retry-with-fix to try the fix above once")
                return result.exit_code
            spec, refusal = _recheck_retry(spec, fixable[0].edits, check_ctx, outcome)
            if refusal:
                console.print(f"[bold red]not retrying[/bold red]: {refusal}", highlight=False)
                return result.exit_code
            plan = plan_launch(spec, requested=session["runtime_choice"].value, preset_runtime=session["preset_runtime"],
                               gpu_platform=check_ctx.env.platform)
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


def _recheck_retry(spec: Any, edits: Any, check_ctx: Any, outcome: Any) -> tuple[Any, str | None]:
    """The retried launch is checked like the first one: the crash fix is applied, then the safe
    fixes (so a fallback written as --cuda-graph-max-bs becomes the name this SGLang release
    accepts, VB003), and a retry that would bring a new error is refused instead of started."""
    from specguard import engine
    from specguard.rules import ALL_RULES

    for edit in edits:
        spec = spec.apply(edit)
    retried = engine.check(ALL_RULES, check_ctx.with_spec(spec), fix_level=Applicability.SAFE)
    before = {f.code for f in outcome.errors}
    new_errors = [f for f in retried.errors if f.code not in before]
    if new_errors:
        return spec, "; ".join(f"{f.code}: {f.message}" for f in new_errors)
    return retried.corrected, None


def _fail(console: Any, message: str) -> None:
    console.print(f"specguard: error: {message}", markup=False, highlight=False)


def _print_diagnoses(console: Any, diagnoses: list[Any], tail: list[str]) -> None:
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


class _RichReporter:
    """Progress (a spinner on a terminal, plain lines elsewhere) and the verification report, on stderr."""

    def __init__(self, console: Any, predicted: Any) -> None:
        self.console = console
        self.predicted = predicted
        self.status: Any = None
        self.label = ""

    def phase(self, text: str) -> None:
        self.close_progress()
        self.label = text
        if self.console.is_terminal:
            self.status = self.console.status(text)
            self.status.start()
        else:
            self.console.print(f"{text} ...", markup=False, highlight=False)

    def waiting(self, seconds: float, timeout: float) -> None:
        if self.status is not None:
            self.status.update(f"{self.label} ({seconds:.0f} s of {timeout:g} s)")

    def close_progress(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def ready(self, seconds: float) -> None:
        self.console.print(f"[green]ready[/green]: /health_generate answered 200 after {seconds:.1f} s")

    def server_info(self, route: str, info: dict[str, Any]) -> None:
        from rich.table import Table

        from specguard.launch.verify import compare, speculation_on

        rows = compare(self.predicted, info)
        table = Table(title=f"resolved by the runtime ({route}) vs predicted by specguard", expand=False)
        for column in ("field", "specguard", "runtime", ""):
            table.add_column(column)
        for row in rows:
            table.add_row(row.field, str(row.predicted), str(row.resolved), "ok" if row.matches else "[yellow]differs[/yellow]")
        self.console.print(table)
        for row in rows:
            if not row.matches:
                self.console.print(f"[yellow]difference:[/yellow] the runtime resolved {row.field}={row.resolved!r}, specguard predicted {row.predicted!r}")
        if self.predicted.algorithm and not speculation_on(info):
            self.console.print("[bold yellow]speculation is OFF in the runtime[/bold yellow] although the launch asks for it")
        if info.get("reference_runtime"):
            self.console.print(f"[dim]reference runtime: draft mode {info.get('draft_mode')}, ignored flags {info.get('ignored_flags') or []}[/dim]")

    def smoke(self, result: Any) -> None:
        if result.ok:
            text = result.text.strip().replace("\n", " ")
            self.console.print(
                f"[green]smoke request[/green] {result.route}: {result.completion_tokens} tokens in {result.seconds:.1f} s: {text[:160]!r}",
            )
        else:
            self.console.print(f"[red]smoke request failed[/red] ({result.route}): {result.error}")

    def statistics(self, info: dict[str, Any] | None, smoke: Any, log_accept_len: float | None) -> None:
        from specguard.launch.verify import (
            accept_length_meaning,
            avg_spec_accept_length,
            speculation_on,
        )

        if info is not None and not speculation_on(info):
            self.console.print("speculative statistics: none (speculation is off)")
            return
        server_avg = avg_spec_accept_length(info)
        per_request = (smoke.spec or {}) if smoke is not None else {}
        if per_request.get("spec_accept_length") is not None:
            self.console.print(
                f"speculative statistics (smoke request): accept length {per_request['spec_accept_length']:.2f}, "
                f"accept rate {per_request.get('spec_accept_rate', 0):.2f}, {per_request.get('spec_verify_ct')} verify passes"
            )
        value = server_avg if server_avg is not None else per_request.get("spec_accept_length") or log_accept_len
        if server_avg is not None:
            self.console.print(f"avg_spec_accept_length (server, /server_info): {server_avg:.2f}")
        else:
            self.console.print(
                "avg_spec_accept_length: not reported yet (the server rolls it up every --decode-log-interval decode steps, 40 by default)"
            )
        if value is not None:
            self.console.print(f"  meaning: {accept_length_meaning(float(value), info)}", markup=False, highlight=False)

    def serving(self, where: str) -> None:
        self.console.print(f"[bold green]serving[/bold green] at {where}; Ctrl-C stops the runtime")

    def problem(self, text: str) -> None:
        self.console.print(f"[yellow]{text}[/yellow]")

