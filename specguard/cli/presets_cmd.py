"""``specguard presets list | show NAME | schema``: the shipped presets, what ``check`` says of
one, and the JSON Schema a preset file follows."""

from __future__ import annotations

import json
import sys
from typing import Annotated

from specguard.cli.errors import clean_errors
from specguard.cli.options import DATA_FORMAT, OFFLINE, DataFormat
from specguard.cli.parsing import Invocation, Positional, Subcommands
from specguard.cli.terminal import columns_that_fit, output_width
from specguard.records import Record


class ListPresetsOptions(Record):
    output_format: Annotated[DataFormat, DATA_FORMAT] = DataFormat.human


class ShowPresetOptions(Record):
    name: Annotated[str, Positional("NAME", "A shipped preset name or a preset YAML file.")]
    # show checks offline whatever is given: --offline is accepted, and is the only mode.
    offline: Annotated[bool, OFFLINE] = False
    output_format: Annotated[DataFormat, DATA_FORMAT] = DataFormat.human


class SchemaOptions(Record):
    pass


OPTIONS = {
    "presets": Subcommands({
        "list": (ListPresetsOptions, "The shipped presets: name, runtime, algorithm, target and draft."),
        "show": (ShowPresetOptions, "The preset's YAML, then what `specguard check --preset NAME` says of it."),
        "schema": (SchemaOptions, "The JSON Schema of a preset file (what an editor completes and checks a preset with)."),
    })
}


def run(invocation: Invocation[ListPresetsOptions | ShowPresetOptions | SchemaOptions]) -> int:
    o = invocation.options
    if isinstance(o, ListPresetsOptions):
        return list_command(o.output_format)
    if isinstance(o, ShowPresetOptions):
        return show_command(o.name, o.output_format)
    return schema_command()


def schema_command() -> int:
    """The JSON Schema generated from the preset models; presets/preset.schema.json is a copy."""
    from specguard.presets.model import schema_text

    sys.stdout.write(schema_text())
    return 0


def list_command(output_format: DataFormat) -> int:
    """The shipped presets: name, runtime, algorithm, target and draft."""
    with clean_errors(lambda: output_format is not DataFormat.human):
        from specguard.presets import load, shipped_names

        rows = []
        for name in shipped_names():
            preset = load(name).preset
            algorithm = _algorithm(preset.flags)
            rows.append(
                {
                    "name": preset.name,
                    "runtime": preset.runtime.value,
                    "dialect": preset.flag_dialect.value,
                    "algorithm": algorithm,
                    "target": preset.target.model,
                    "draft": preset.draft.model if preset.draft else None,
                    "description": preset.description,
                }
            )
    if output_format is not DataFormat.human:
        print(json.dumps({"schema_version": 1, "presets": rows}, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    cells = [
        {"name": r["name"], "runtime": r["runtime"], "flags": r["dialect"], "algorithm": r["algorithm"] or "-", "target": r["target"], "draft": r["draft"] or "(none)"}
        for r in rows
    ]
    width = output_width(150)
    # A narrow terminal loses the runtime and flag spelling first (the name mostly says them).
    columns = columns_that_fit(cells, ("name", "runtime", "flags", "algorithm", "target", "draft"), ("runtime", "flags", "algorithm"), width)
    table = Table(title="specguard presets", expand=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in cells:
        table.add_row(*(row[c] for c in columns))
    Console(file=sys.stdout, soft_wrap=False, width=width).print(table)
    return 0


def _algorithm(flags: dict) -> str | None:
    for key in ("speculative-algorithm", "sglang-speculative-algorithm"):
        if key in flags:
            return str(flags[key])
    return None


def show_command(name: str, output_format: DataFormat) -> int:
    """The preset's YAML, then what `specguard check --preset NAME --offline` says of it (offline is its only mode)."""
    from specguard.cli.check import build_inputs, run_check, with_handled

    as_json = output_format is not DataFormat.human
    with clean_errors(lambda: as_json):
        from specguard.presets import load

        loaded = load(name)
        text = loaded.path.read_text(encoding="utf-8")
        inputs = build_inputs(
            [], preset=name, target=None, draft=None, dialect=None, sglang_version=None, gpu=None,
            gpu_count=None, env=None, offline=True,
        )
        check_ctx, outcome = run_check(inputs, None)
        outcome = with_handled(name, check_ctx, outcome)
    from specguard.presets.yaml_edit import repoint_modeline
    from specguard.redact import (
        redact_env,
        redact_flag_mapping,
        redact_yaml_text,
        secret_values,
    )

    if as_json:
        from specguard.report import outcome_json

        preset = loaded.preset.model_dump(mode="json", exclude_none=True)
        preset["flags"], preset["env"] = redact_flag_mapping(preset["flags"]), redact_env(preset["env"])
        print(json.dumps(outcome_json(outcome, check_ctx, {"preset": preset}), indent=2))
        return outcome.exit_code
    import io

    from rich.console import Console

    from specguard.report import print_human

    # stdout stays a valid YAML document (`presets show NAME > mine.yaml` is a preset): the file
    # verbatim but for a secret's value (masked), and what check says of it as YAML comments
    # after it, never wrapped into the YAML.
    report = io.StringIO()
    print_human(outcome, check_ctx, Console(file=report, width=110, no_color=True, highlight=False))
    print(f"# {loaded.path}")
    # Saved elsewhere, the preset's modeline still names its schema: by absolute path.
    shown = repoint_modeline(text, str(loaded.path.resolve().parent), None)
    print(redact_yaml_text(shown, secret_values(loaded.preset.flags, loaded.preset.env)).rstrip("\n"))
    print(f"\n# specguard check --preset {name} --offline")
    for line in report.getvalue().rstrip("\n").splitlines():
        print(f"# {line}".rstrip())
    return outcome.exit_code


