"""``specguard check``: read the launch, run the rules, optionally fix, report."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from specguard import engine
from specguard.cli.errors import clean_errors
from specguard.cli.options import (
    DialectOpt,
    Draft,
    EnvVars,
    FixOpt,
    Format,
    Gpu,
    GpuCount,
    Offline,
    OutputFormat,
    Preset,
    SglangVersion,
    Target,
    UnsafeFixes,
)
from specguard.inputs import CheckInputs, gather
from specguard.models import Applicability, Dialect
from specguard.report import outcome_json, outcome_sarif, print_human
from specguard.rules import ALL_RULES
from specguard.rules.base import CheckContext


def build_inputs(
    ctx_args: list[str],
    *,
    preset: str | None,
    target: str | None,
    draft: str | None,
    dialect: str | None,
    sglang_version: str | None,
    gpu: str | None,
    gpu_count: int | None,
    env: list[str] | None,
    offline: bool,
) -> CheckInputs:
    """Merge a preset (if any) with what the command line says; the command line wins."""
    server_args = list(ctx_args)
    if server_args[:1] == ["--"]:
        server_args = server_args[1:]
    inputs = CheckInputs(
        server_args=server_args,
        dialect=Dialect(dialect) if dialect else None,
        target=target,
        draft=draft,
        sglang_version=sglang_version,
        gpu=gpu,
        gpu_count=gpu_count,
        env_overrides=tuple(env or ()),
        offline=offline,
    )
    if preset:
        from specguard.presets import apply_preset  # presets read YAML: only imported when asked

        inputs = apply_preset(preset, inputs)
    return inputs


def fix_level(fix: bool, unsafe_fixes: bool) -> Applicability | None:
    if unsafe_fixes:
        return Applicability.UNSAFE
    return Applicability.SAFE if fix else None


def run_check(inputs: CheckInputs, level: Applicability | None) -> tuple[CheckContext, engine.Outcome]:
    ctx = gather(inputs, os.environ)
    return ctx, engine.check(ALL_RULES, ctx, fix_level=level)


def _console_width() -> int | None:
    """Rich wraps at 80 columns when not on a terminal; findings read better wider."""
    if sys.stdout.isatty() or os.environ.get("COLUMNS"):
        return None
    return 120


def with_handled(preset: str | None, ctx: CheckContext, outcome: engine.Outcome) -> engine.Outcome:
    """Add the findings a preset's own flags handle (its ``handles:``), marked applied, so the
    report shows them (e.g. the slime guide's --sglang-dtype float16 for DM001) instead of silence."""
    if not preset:
        return outcome
    from specguard.presets import handled_findings

    present = {(f.code, f.message) for f in outcome.findings}
    extra = [f for f in handled_findings(preset, ctx) if (f.code, f.message) not in present]
    if not extra:
        return outcome
    return outcome.model_copy(update={"findings": tuple(sorted([*outcome.findings, *extra], key=engine._order))})


def _memory_extra(ctx: CheckContext, outcome: engine.Outcome, explain_memory: bool) -> dict | None:
    """--explain-memory: a ``memory`` section (specguard/memory/report.py)."""
    if not explain_memory:
        return None
    from specguard.memory.report import memory_json

    return memory_json(ctx, outcome.corrected)


def rules_meta() -> dict[str, dict]:
    return {r.code: {"name": r.name, "summary": r.summary, "sources": list(r.sources)} for r in ALL_RULES}


def check_command(
    ctx: typer.Context,
    preset: Preset = None,
    target: Target = None,
    draft: Draft = None,
    dialect: DialectOpt = None,
    sglang_version: SglangVersion = None,
    gpu: Gpu = None,
    gpu_count: GpuCount = None,
    env: EnvVars = None,
    fix: FixOpt = False,
    unsafe_fixes: UnsafeFixes = False,
    offline: Offline = False,
    output_format: Format = OutputFormat.human,
    write: Annotated[Path | None, typer.Option("--write", help="With --preset: write the corrected preset here.")] = None,
    explain_memory: Annotated[bool, typer.Option("--explain-memory", help="Show the GPU memory budget (weights, KV pool, tree, CUDA graphs, headroom).")] = False,
) -> None:
    """Check a speculative-decoding launch: SERVER_ARGS after `--`, in SGLang's, slime's or sgl-jax's spelling."""
    as_json = output_format is not OutputFormat.human
    with clean_errors(lambda: as_json):
        inputs = build_inputs(
            ctx.args, preset=preset, target=target, draft=draft, dialect=dialect.value if dialect else None,
            sglang_version=sglang_version, gpu=gpu, gpu_count=gpu_count, env=env, offline=offline,
        )
        check_ctx, outcome = run_check(inputs, fix_level(fix, unsafe_fixes))
        outcome = with_handled(preset, check_ctx, outcome)
        if write is not None:
            if not preset:
                raise typer.BadParameter("--write needs --preset", param_hint="--write")
            from specguard.presets import write_corrected_preset

            write_corrected_preset(preset, outcome.corrected, write)
    if output_format is OutputFormat.json:
        print(json.dumps(outcome_json(outcome, check_ctx, extra=_memory_extra(check_ctx, outcome, explain_memory)), indent=2))
    elif output_format is OutputFormat.sarif:
        print(json.dumps(outcome_sarif(outcome, check_ctx, rules_meta()), indent=2))
    else:
        from rich.console import Console

        print_human(outcome, check_ctx, Console(file=sys.stdout, width=_console_width()))
        if explain_memory:  # --explain-memory (specguard/memory/report.py)
            from specguard.memory.report import print_memory

            print_memory(check_ctx, Console(file=sys.stdout, width=_console_width()), outcome.corrected)
    raise typer.Exit(outcome.exit_code)
