"""A launch between the check and the runtime: what was checked and corrected, what would start,
and whether it may. ``prepare`` builds it (the check, the user's say on unsafe fixes, the report);
``dry_run_launch`` says what would start; ``specguard.launch.run`` starts and supervises it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from specguard.checking import run_check
from specguard.engine import Outcome
from specguard.errors import InputError
from specguard.inputs import CheckInputs
from specguard.launch.runtimes import LaunchPlan
from specguard.models import Applicability, Finding
from specguard.rules.base import CheckContext
from specguard.spec import LaunchSpec

if TYPE_CHECKING:
    from specguard.selection import Selection


@dataclass(frozen=True)
class LaunchRequest:
    """What the user asked of ``launch`` beyond the check's inputs."""

    dry_run: bool
    as_json: bool
    no_fix: bool
    unsafe_fixes: bool
    force: bool
    host: str | None
    port: int | None
    runtime: str  # auto | sglang | reference
    preset: str | None
    selection: Selection | None = None  # --select/--ignore/--extend-select and the settings file
    suppressed: Callable[[Finding], bool] | None = None  # a preset's `# specguard: ignore` comments


@dataclass(frozen=True)
class LaunchSession:
    ctx: CheckContext
    outcome: Outcome
    spec: LaunchSpec  # the corrected launch, with the endpoint the launcher serves on
    plan: LaunchPlan | None  # None only when errors block and no runtime could be planned
    blocked: bool  # error findings remain and --force was not given
    nodes: tuple[str, ...]  # one command per node of a multi-node launch
    runtime_choice: str
    preset_runtime: str | None

    def replan(self, spec: LaunchSpec) -> LaunchPlan:
        """The plan for a corrected launch (a retry), with the same runtime choice."""
        from specguard.launch.runtimes import plan_launch

        return plan_launch(spec, requested=self.runtime_choice, preset_runtime=self.preset_runtime, gpu_platform=self.ctx.env.platform)


def prepare(inputs: CheckInputs, request: LaunchRequest, console: Any, confirm: Callable[[str], bool]) -> LaunchSession:
    """Check and correct the launch, report it, and plan the runtime. ``confirm`` asks the user
    (on a terminal) whether to apply the unsafe fixes too."""
    from specguard.launch.runtimes import (
        endpoint_edits,
        per_node_commands,
        plan_launch,
        resolve_tiny,
        uses_tiny,
    )
    from specguard.report import print_human

    if uses_tiny(inputs):
        if not request.dry_run:
            console.print("[dim]resolving tiny:target / tiny:draft / tiny:eagle3 (built once, then cached)...[/dim]")
        inputs, tiny_note = resolve_tiny(inputs, build=not request.dry_run)
        if tiny_note:
            console.print(f"note: {tiny_note}", markup=False, highlight=False)
    level = None if request.no_fix else (Applicability.UNSAFE if request.unsafe_fixes else Applicability.SAFE)
    notes: list[str] = []  # facts left unknown (a dry run's tiny models not built yet)
    endpoint = endpoint_edits(request.host, request.port)
    check_ctx, outcome = run_check(inputs, level, notes, endpoint, selection=request.selection, suppressed=request.suppressed)
    for note in dict.fromkeys(notes):
        console.print(f"note: {note}", markup=False, highlight=False)
    pending_unsafe = [f for f in outcome.findings if f.fix and not f.resolved and f.fix.applicability is Applicability.UNSAFE]
    interactive = not request.dry_run and not request.as_json and sys.stdin.isatty() and sys.stderr.isatty()
    if level is Applicability.SAFE and pending_unsafe and interactive:
        console.print("[bold]Fixes that change what runs (unsafe):[/bold]")
        for finding in pending_unsafe:
            assert finding.fix is not None  # selected above
            console.print(f"  {finding.code} {finding.fix.title}: {finding.message}", markup=False)
        if confirm("Apply them before starting?"):
            check_ctx, outcome = run_check(inputs, Applicability.UNSAFE, [], endpoint, selection=request.selection, suppressed=request.suppressed)
    if not request.as_json:
        print_human(outcome, check_ctx, console, fix_hint="launch applies the safe ones; add --unsafe-fixes for the rest")
        if pending_unsafe and level is Applicability.SAFE:
            console.print(f"[yellow]{len(pending_unsafe)} unsafe fix(es) not applied: pass --unsafe-fixes to apply them.[/yellow]")
    blocked = bool(outcome.errors) and not request.force
    if blocked and not request.as_json:
        console.print(f"[bold red]{len(outcome.errors)} error(s) remain: not starting the runtime[/bold red] (--force starts it anyway).")
    spec = outcome.corrected
    preset_runtime = None
    if request.preset:
        from specguard.presets import load

        preset_runtime = load(request.preset).preset.runtime.value
    plan: LaunchPlan | None
    try:
        plan = plan_launch(spec, requested=request.runtime, preset_runtime=preset_runtime, gpu_platform=check_ctx.env.platform,
                           strict=not request.dry_run)
    except InputError:
        if not blocked:
            raise
        plan = None  # the errors above come first: nothing would start anyway
    return LaunchSession(
        ctx=check_ctx, outcome=outcome, spec=spec, plan=plan, blocked=blocked,
        nodes=tuple(per_node_commands(plan, spec)) if plan else (), runtime_choice=request.runtime, preset_runtime=preset_runtime,
    )


def dry_run_launch(session: LaunchSession, plan: LaunchPlan) -> dict[str, Any]:
    """What would start: the ``launch`` object of ``--dry-run --format json``."""
    return {
        "runtime": plan.runtime,
        "reason": plan.reason,
        "startable": plan.startable,
        "would_start": plan.startable and not session.blocked,
        "command": plan.shown_argv if plan.printed_command is None else None,
        "shell": plan.shell,
        "env": plan.env,
        "host": plan.host,
        "port": plan.port,
        "nodes": [{"node_rank": rank, "shell": command} for rank, command in enumerate(session.nodes)],
    }
