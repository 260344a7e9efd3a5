"""``specguard render --preset NAME --to DIALECT``: the corrected launch, ready to paste.

What render prints is shown, so a secret in it (``--api-key``, ``HF_TOKEN``; specguard/redact.py)
is printed as ``***``, like everywhere else specguard prints a launch. A file that keeps the real
value is what ``specguard check --preset NAME --write FILE`` writes.
"""

from __future__ import annotations

import json
import os
import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

from specguard.cli.errors import clean_errors
from specguard.cli.options import (
    DRAFT,
    ENV,
    EXTEND_SELECT,
    GPU,
    IGNORE,
    SELECT,
    SGLANG_VERSION,
    TARGET,
    UNSAFE_FIXES,
    DialectChoice,
)
from specguard.cli.parsing import Invocation, Option, Parser, choice
from specguard.models import Dialect, Finding
from specguard.records import Record, replace

if TYPE_CHECKING:
    from specguard.spec import LaunchSpec

DETAILS = {
    "render": "Secrets (--api-key, --admin-api-key, HF_TOKEN, ...) are printed as ***: "
    "`specguard check --preset NAME --write FILE` writes a preset that keeps them.",
}


class RenderTarget(StrEnum):
    sglang = "sglang"
    slime = "slime"
    sgl_jax = "sgl-jax"
    yaml = "yaml"
    json = "json"


PRESET = Option("--preset", "A shipped preset name or a preset YAML file.", required=True)
TO = Option(
    "--to", "sglang|slime|sgl-jax: a command; yaml: a preset; json: argv and env.",
    convert=choice(RenderTarget), required=True,
)
NO_FIX = Option("--no-fix", "Render the preset as written, without the safe fixes.", switch=True)
# Taken so that it is refused with one line instead of passing into the launch as a server flag.
NO_OFFLINE = Option("--offline", "Refused: render never goes online.", switch=True)


class RenderOptions(Record):
    preset: Annotated[str, PRESET]
    to: Annotated[RenderTarget, TO]
    target: Annotated[str | None, TARGET] = None
    draft: Annotated[str | None, DRAFT] = None
    sglang_version: Annotated[str | None, SGLANG_VERSION] = None
    gpu: Annotated[str | None, GPU] = None
    env: Annotated[list[str] | None, ENV] = None
    unsafe_fixes: Annotated[bool, UNSAFE_FIXES] = False
    no_fix: Annotated[bool, NO_FIX] = False
    offline: Annotated[bool, NO_OFFLINE] = False
    select: Annotated[list[list[str]] | None, SELECT] = None
    extend_select: Annotated[list[list[str]] | None, EXTEND_SELECT] = None
    ignore: Annotated[list[list[str]] | None, IGNORE] = None


OPTIONS = {"render": RenderOptions}


def configure(parser: Parser, name: str) -> None:
    parser.usage = "specguard render --preset NAME --to TARGET [OPTIONS] [-- SERVER_ARGS...]"


def run(invocation: Invocation[RenderOptions]) -> int:
    """Render a preset's corrected launch: safe fixes applied (unsafe ones with --unsafe-fixes)."""
    from specguard.cli.check import build_inputs, fix_level, run_check

    o = invocation.options
    preset, to = o.preset, o.to
    _refuse_ignored(o)
    with clean_errors(lambda: to is RenderTarget.json):
        from specguard import engine
        from specguard.dialects import render
        from specguard.dialects import render_command as command_line
        from specguard.presets import load
        from specguard.presets.commands import dump_yaml, preset_document
        from specguard.project_config import selection_for_command
        from specguard.redact import (
            redact_env,
            redact_flag_mapping,
            redact_spec,
            redact_text,
            redact_value,
        )
        from specguard.rules import ALL_RULES
        from specguard.suppressions import suppressions_for

        loaded = load(preset)
        inputs = build_inputs(
            list(invocation.server_args), preset=preset, target=o.target, draft=o.draft, dialect=None, sglang_version=o.sglang_version,
            gpu=o.gpu, gpu_count=None, env=o.env, offline=True,  # render never goes online: --offline is its only mode
        )
        selection = selection_for_command(None, preset, o.select, o.ignore, o.extend_select)
        suppressed = suppressions_for(None, preset)
        ctx, outcome = run_check(inputs, None if o.no_fix else fix_level(True, o.unsafe_fixes), selection=selection, suppressed=suppressed)
        corrected = outcome.corrected
        dropped: list[str] = []
        destination_errors: tuple[Finding, ...] = ()
        shown = redact_spec(corrected)
        if to is RenderTarget.yaml:
            document = preset_document(loaded.preset, corrected, base_env=dict(os.environ))
            document["flags"] = redact_flag_mapping(document["flags"])
            if "env" in document:
                document["env"] = redact_env(document["env"])
            text = dump_yaml(document).rstrip()
        elif to is RenderTarget.json:
            dialect = loaded.preset.flag_dialect
            text = json.dumps(
                {
                    "schema_version": 1,
                    "preset": loaded.preset.name,
                    "dialect": dialect.value,
                    "argv": render(shown, dialect),
                    "argv_by_dialect": {d.value: render(shown, d) for d in loaded.preset.render_dialects},
                    "env": dict(shown.env),
                    "changes": [
                        {"flag": c.name, "old": redact_value(c.name, c.old), "new": redact_value(c.name, c.new), "rule": c.rule}
                        for c in outcome.changes
                    ],
                    "exit_code": outcome.exit_code,
                },
                indent=2,
                default=list,
            )
        else:
            destination = Dialect(DialectChoice(to.value).value)
            corrected, dropped = _for_destination(corrected, destination)
            text = _commands(redact_spec(corrected), destination, command_line)
            if destination is not loaded.preset.flag_dialect:
                # The check above judged the preset in its own dialect; what is printed runs on
                # the destination's runtime, so it is judged there too.
                rules = [rule for rule in ALL_RULES if selection is None or selection.includes(rule)]
                destination_errors = engine.check(rules, ctx.with_spec(corrected), suppressed=suppressed).errors
    print(text)
    for flag in dropped:
        print(f"specguard: {flag} left out: sgl-jax has no such flag (sgl_jax/srt/server_args.py)", file=sys.stderr)
    if outcome.errors:
        print(f"specguard: {len(outcome.errors)} error finding(s) remain: run `specguard check --preset {preset}`", file=sys.stderr)
    for finding in destination_errors:
        print(f"specguard: as {to.value}: {finding.code} {redact_text(finding.message)}", file=sys.stderr)
    return 1 if outcome.errors or destination_errors else 0


def _refuse_ignored(o: RenderOptions) -> None:
    """An option render would accept and then not act on is refused, so no one believes it did."""
    from specguard.cli.parsing import UsageError

    if o.offline:
        raise UsageError("--offline changes nothing here: render never goes online (it reads the preset and the files it names)", "specguard render")
    if o.no_fix and o.unsafe_fixes:
        raise UsageError("--unsafe-fixes changes nothing with --no-fix, which renders the preset without any fix: give one of them", "specguard render")


def _for_destination(spec: LaunchSpec, destination: Dialect) -> tuple[LaunchSpec, list[str]]:
    """``spec`` as the destination's launcher reads it (its flags re-read in its dialect), and
    the flags left out because that launcher has none of them (sgl-jax has no CUDA graphs...)."""
    from specguard.dialects import parse, render

    argv = render(spec, destination)
    dropped: list[str] = []
    if destination is Dialect.SGL_JAX:
        from specguard.sglang_facts.sgl_jax import server_flags

        known = server_flags()
        items = parse(argv, destination).items
        dropped = [item.flag for item in items if item.flag != "" and item.flag not in known]
        kept = tuple(item for item in items if item.flag == "" or item.flag in known)
        argv = render(replace(spec, items=kept, dialect=destination), destination)
    return parse(argv, destination, env=spec.env), dropped


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
