"""``specguard render --preset NAME --to DIALECT``: the corrected launch, ready to paste."""

from __future__ import annotations

import json
import os
import sys
from enum import StrEnum
from typing import Annotated

import typer

from specguard.cli.errors import clean_errors
from specguard.cli.options import (
    DialectChoice,
    Draft,
    EnvVars,
    Gpu,
    Offline,
    SglangVersion,
    Target,
    UnsafeFixes,
)
from specguard.models import Dialect


class RenderTarget(StrEnum):
    sglang = "sglang"
    slime = "slime"
    sgl_jax = "sgl-jax"
    yaml = "yaml"
    json = "json"


def render_command(
    ctx: typer.Context,
    preset: Annotated[str, typer.Option("--preset", help="A shipped preset name or a preset YAML file.")],
    to: Annotated[RenderTarget, typer.Option("--to", help="sglang|slime|sgl-jax: a command; yaml: a preset; json: argv and env.", case_sensitive=False)],
    target: Target = None,
    draft: Draft = None,
    sglang_version: SglangVersion = None,
    gpu: Gpu = None,
    env: EnvVars = None,
    unsafe_fixes: UnsafeFixes = False,
    no_fix: Annotated[bool, typer.Option("--no-fix", help="Render the preset as written, without the safe fixes.")] = False,
    offline: Offline = True,
) -> None:
    """Render a preset's corrected launch: safe fixes applied (unsafe ones with --unsafe-fixes)."""
    from specguard.cli.check import build_inputs, fix_level, run_check

    with clean_errors(lambda: to is RenderTarget.json):
        from specguard.dialects import render
        from specguard.dialects import render_command as command_line
        from specguard.presets import load
        from specguard.presets.commands import dump_yaml, preset_document

        loaded = load(preset)
        inputs = build_inputs(
            list(ctx.args), preset=preset, target=target, draft=draft, dialect=None, sglang_version=sglang_version,
            gpu=gpu, gpu_count=None, env=env, offline=offline,
        )
        _, outcome = run_check(inputs, None if no_fix else fix_level(True, unsafe_fixes))
        corrected = outcome.corrected
        if to is RenderTarget.yaml:
            text = dump_yaml(preset_document(loaded.preset, corrected, base_env=dict(os.environ))).rstrip()
        elif to is RenderTarget.json:
            dialect = loaded.preset.flag_dialect
            text = json.dumps(
                {
                    "schema_version": 1,
                    "preset": loaded.preset.name,
                    "dialect": dialect.value,
                    "argv": render(corrected, dialect),
                    "argv_by_dialect": {d.value: render(corrected, d) for d in loaded.preset.render_dialects},
                    "env": dict(corrected.env),
                    "changes": [{"flag": c.name, "old": c.old, "new": c.new, "rule": c.rule} for c in outcome.changes],
                    "exit_code": outcome.exit_code,
                },
                indent=2,
                default=list,
            )
        else:
            text = _commands(corrected, Dialect(DialectChoice(to.value).value), command_line)
    print(text)
    if outcome.errors:
        print(f"specguard: {len(outcome.errors)} error finding(s) remain: run `specguard check --preset {preset}`", file=sys.stderr)
    raise typer.Exit(outcome.exit_code)


def _commands(spec, dialect: Dialect, command_line) -> str:
    """One command, or for a multi-node launch one per node (``--node-rank`` 0..nnodes-1)."""
    from specguard.models import Edit

    nnodes = spec.get("nnodes") or 1
    if nnodes <= 1 or dialect is Dialect.SLIME:
        return command_line(spec, dialect)
    blocks = []
    for rank in range(nnodes):
        node = spec.apply(Edit(name="--node-rank", value=rank))
        blocks.append(f"# node {rank} of {nnodes}\n{command_line(node, dialect)}")
    return "\n\n".join(blocks)
