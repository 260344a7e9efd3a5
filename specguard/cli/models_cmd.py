"""``specguard models [list] | show ORG/NAME``: the catalog, and the facts specguard uses for one model."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

from specguard.cli.errors import clean_errors
from specguard.cli.options import DATA_FORMAT, OFFLINE, VERBOSE, DataFormat
from specguard.cli.parsing import Invocation, Positional, Subcommands
from specguard.cli.terminal import columns_that_fit, output_width
from specguard.records import Record, as_dict, replace


class ListModelsOptions(Record):
    output_format: Annotated[DataFormat, DATA_FORMAT] = DataFormat.human


class ShowModelOptions(Record):
    reference: Annotated[str, Positional("ORG/NAME", "A hub repo id (org/name[@revision]) or a local model directory.")]
    offline: Annotated[bool, OFFLINE] = False
    verbose: Annotated[bool, VERBOSE] = False
    output_format: Annotated[DataFormat, DATA_FORMAT] = DataFormat.human


# `specguard models` alone lists the catalog, as `models list` does; --format may come before the subcommand too.
OPTIONS = {
    "models": Subcommands(
        {
            "list": (ListModelsOptions, "Every catalog entry: model, architecture, kind (config copy or facts), source and its date."),
            "show": (ShowModelOptions, "The facts specguard uses for one model, and where each came from (local, HF cache, hub, catalog)."),
        },
        default="list",
        shared=("output_format",),
    )
}


def run(invocation: Invocation[ListModelsOptions | ShowModelOptions]) -> int:
    o = invocation.options
    if isinstance(o, ShowModelOptions):
        return show_command(o.reference, o.offline, o.output_format, verbose=o.verbose)
    return list_command(o.output_format)


def list_command(output_format: DataFormat) -> int:
    """Every catalog entry: model, architecture, kind (config copy or facts), source and its date."""
    from specguard import catalog

    with clean_errors(lambda: output_format is not DataFormat.human):
        document = {"snapshot_date": catalog.snapshot_date(), **catalog.index()}
    if output_format is not DataFormat.human:
        print(json.dumps({"schema_version": 1, "snapshot_date": document["snapshot_date"], "models": document["models"]}, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    cells = [
        {"model": e["model"], "architecture": e["architecture"] or "-", "kind": e["kind"], "source date": e["date"] or "-"} for e in document["models"]
    ]
    width = output_width()
    # A narrow terminal loses the kind first, then the date; the model and its architecture stay.
    columns = columns_that_fit(cells, ("model", "architecture", "kind", "source date"), ("kind", "source date"), width)
    table = Table(title=f"specguard model catalog (snapshot {document['snapshot_date']}, {len(document['models'])} models)", expand=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in cells:
        table.add_row(*(row[c] for c in columns))
    Console(file=sys.stdout, soft_wrap=False, width=width).print(table)
    return 0


_WEIGHT_FIELDS = ("tensor_count", "fc_shape", "d2t_shape", "t2d_shape", "embed_shape", "lm_head_shape", "stored_dtypes", "quantized_tensors", "mtp_tensors")


def show_command(reference: str, offline: bool, output_format: DataFormat, *, verbose: bool = False) -> int:
    """The facts specguard uses for one model, and where each came from (local, HF cache, hub, catalog)."""
    as_json = output_format is not DataFormat.human
    with clean_errors(lambda: as_json):
        from specguard.facts import load_facts
        from specguard.report import model_origin

        facts = load_facts(reference, offline=offline, role="this", weights=True)
        config_from = model_origin(replace(facts, weights=None))
        rows: list[dict[str, Any]] = [
            {"fact": name, "value": value, "from": config_from}
            for name, value in as_dict(facts, json=True, exclude={"source", "origin", "origin_detail", "revision", "weights"}).items()
            if value is not None
        ]
        if facts.weights is not None:
            weights = as_dict(facts.weights, json=True)
            rows += [{"fact": f"weights.{name}", "value": weights[name], "from": facts.weights.source} for name in _WEIGHT_FIELDS if weights[name] not in (None, [])]
    if as_json:
        print(json.dumps({"schema_version": 1, "model": as_dict(facts, json=True), "facts": rows}, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console(file=sys.stdout, width=output_width())
    shown_from = model_origin(replace(facts, weights=None), verbose=verbose)
    console.print(f"[bold]{facts.source}[/bold]: {shown_from}", highlight=False)
    if facts.weights is None:
        console.print("[dim]weights: no safetensors headers at hand (local directory or HF cache; online, the hub)[/dim]")
    table = Table(expand=False)
    for column in ("fact", "value", "from"):
        table.add_column(column, overflow="fold")
    for row in rows:
        origin = "weights headers" if row["fact"].startswith("weights.") else (facts.origin or "-")
        table.add_row(row["fact"], json.dumps(row["value"]) if not isinstance(row["value"], str) else row["value"], origin)
    console.print(table)
    return 0
