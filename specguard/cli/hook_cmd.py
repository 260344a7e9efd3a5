"""``specguard hook scripts|presets FILE...``: ``specguard check`` on each file a pre-commit hook
passes (``.pre-commit-hooks.yaml``). ``check`` reads one --script or --preset per run; pre-commit
passes every changed file at once. A shell script that holds no launch is not a launch script,
and is passed over rather than failed."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

from specguard.cli.options import (
    EXTEND_SELECT,
    GPU,
    GPU_COUNT,
    IGNORE,
    OFFLINE,
    SELECT,
    SGLANG_VERSION,
)
from specguard.cli.parsing import Invocation, Parser, Positional, choice
from specguard.records import Record, field

DETAILS = {
    "hook": "Exit codes: the worst file's, as `specguard check` gives them (0 no error finding; 1 error findings remain; 2 a file could not be read).",
}


class Kind(StrEnum):
    scripts = "scripts"
    presets = "presets"


OPTION = {Kind.scripts: "--script", Kind.presets: "--preset"}


class HookOptions(Record):
    kind: Annotated[Kind, Positional("[scripts|presets]", "What the files are: launch scripts or preset YAML files.", convert=choice(Kind))]
    files: Annotated[list[str], Positional("FILE", "The files to check (pre-commit passes the changed ones).", nargs="*")] = field(default_factory=list)
    sglang_version: Annotated[str | None, SGLANG_VERSION] = None
    gpu: Annotated[str | None, GPU] = None
    gpu_count: Annotated[int | None, GPU_COUNT] = None
    offline: Annotated[bool, OFFLINE] = False
    select: Annotated[list[list[str]] | None, SELECT] = None
    extend_select: Annotated[list[list[str]] | None, EXTEND_SELECT] = None
    ignore: Annotated[list[list[str]] | None, IGNORE] = None


OPTIONS = {"hook": HookOptions}


def configure(parser: Parser, name: str) -> None:
    parser.intermixed = True  # pre-commit passes the hook's args, then the files


def run(invocation: Invocation[HookOptions]) -> int:
    from specguard.cli.main import main

    o = invocation.options
    shared = [*_given("--sglang-version", o.sglang_version), *_given("--gpu", o.gpu), *_given("--gpu-count", o.gpu_count)]
    shared += ["--offline"] if o.offline else []
    for flag, given in (("--select", o.select), ("--extend-select", o.extend_select), ("--ignore", o.ignore)):
        shared += [token for codes in given or () for token in (flag, ",".join(codes))]
    worst = 0
    for file in o.files:
        if o.kind is Kind.scripts and not _holds_a_launch(file):
            continue
        print(f"specguard check {OPTION[o.kind]} {file}", flush=True)
        worst = max(worst, main(["check", OPTION[o.kind], file, *shared]))
        sys.stdout.flush()
    return worst


def _given(flag: str, value: object) -> list[str]:
    return [] if value is None else [flag, str(value)]


def _holds_a_launch(file: str) -> bool:
    """False for a script with no launch in it; a file that cannot be read is left to ``check``
    to report."""
    from specguard.errors import InputError
    from specguard.launch_text import read_launches

    try:
        return bool(read_launches(Path(file)))
    except InputError:
        return True
