"""``specguard check``: read the launch, run the rules, optionally fix, report."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from specguard import engine
from specguard.checking import run_check
from specguard.cli.errors import clean_errors
from specguard.cli.launch_forms import (
    LaunchRequest,
    reject_misspelled_options,
    requests_from,
)
from specguard.cli.options import (
    DIALECT,
    DRAFT,
    ENV,
    EXTEND_SELECT,
    FIX,
    FORMAT,
    GPU,
    GPU_COUNT,
    IGNORE,
    OFFLINE,
    PRESET,
    REQUIREMENTS,
    SELECT,
    SGL_JAX_VERSION,
    SGLANG_VERSION,
    SHOW_SUPPRESSED,
    SLIME_VERSION,
    TARGET,
    UNSAFE_FIXES,
    VERBOSE,
    DialectChoice,
    OutputFormat,
)
from specguard.cli.parsing import Invocation, Option, Parser, UsageError
from specguard.errors import InputError
from specguard.inputs import CheckInputs
from specguard.models import Applicability, Dialect
from specguard.project_config import selection_for_command
from specguard.records import Record, replace
from specguard.redact import mask_values, redact_text
from specguard.refs import is_commit_prefix
from specguard.report import (
    SCHEMA_VERSION,
    finding_json,
    json_text,
    launch_secrets,
    outcome_json,
    outcome_sarif,
    print_human,
)
from specguard.rules import ALL_RULES
from specguard.rules.base import CheckContext
from specguard.suppressions import suppressions_for
from specguard.versions import (
    slime_history_source,
    slime_pin,
    slime_releases,
    version_from_image,
    version_from_requirements,
)

if TYPE_CHECKING:
    from specguard.launch_text import FoundLaunch


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
    found: FoundLaunch | None = None,
    requirements: str | None = None,
    slime_version: str | None = None,
    sgl_jax_version: str | None = None,
) -> CheckInputs:
    """Merge a preset (if any) with what the command line says; the command line wins.

    ``found``: the launch was read from text (one string, stdin, a script); its dialect comes
    from its entry point, its env vars count as --env, and an ``lmsysorg/sglang:vX.Y.Z`` image
    names the SGLang version unless --sglang-version does."""
    server_args = list(ctx_args)
    if server_args[:1] == ["--"]:
        server_args = server_args[1:]
    pinned = pinned_version(requirements) if requirements and not sglang_version else None
    origin = f"requirements file {requirements}" if pinned else None
    if slime_version and not sglang_version and not pinned:
        pin = slime_pin(slime_version)
        if pin is None:
            known = ", ".join(f"v{v}" for v in slime_releases())
            raise InputError(
                f"--slime-version {slime_version}: no SGLang pin known for it",
                hint=f"give a slime release ({known}) or a commit of {slime_history_source()}; or give --sglang-version",
            )
        named = slime_version if is_commit_prefix(slime_version) else f"v{slime_version.removeprefix('v')}"
        pinned, origin = pin.sglang, f"slime {named} ({pin.image}: {pin.why})"
    image_version = version_from_image(found.image) if found and not sglang_version and not pinned else None
    inputs = CheckInputs(
        server_args=server_args,
        dialect=Dialect(dialect) if dialect else (found.dialect if found else None),
        target=target,
        draft=draft,
        sglang_version=sglang_version or pinned or image_version,
        sglang_version_origin=origin if pinned else ("docker image tag" if image_version else None),
        sgl_jax_version=sgl_jax_version,
        slime_version=slime_version,
        gpu=gpu,
        gpu_count=gpu_count,
        env_overrides=(*(f"{k}={v}" for k, v in found.env), *(env or ())) if found else tuple(env or ()),
        offline=offline,
        models_may_be_absent=found is not None,
        explicit_models=frozenset(role for role, given in (("target", target), ("draft", draft)) if given),
    )
    if preset:
        from specguard.presets import (
            apply_preset,  # presets read YAML: only imported when asked
        )

        inputs = apply_preset(preset, inputs)
    return inputs


def pinned_version(path: str) -> str:
    """The sglang release a requirements / pip freeze file pins (--requirements)."""
    from specguard.text_input import read_text_bounded

    text = read_text_bounded(Path(path), f"--requirements {path}", hint="give a requirements.txt or pip freeze output")
    # Only the lines that name sglang: the pin's pattern starts with ^\s*, which rescans a run of
    # blank lines from each of them (a megabyte of newlines took minutes).
    version = version_from_requirements("\n".join(line for line in text.splitlines() if "sglang" in line.lower()))
    if version is None:
        raise InputError(f"--requirements {path} pins no sglang release", hint="it needs a line sglang==X.Y.Z, or give --sglang-version")
    return version


def fix_level(fix: bool, unsafe_fixes: bool) -> Applicability | None:
    if unsafe_fixes:
        return Applicability.UNSAFE
    return Applicability.SAFE if fix else None


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
    return replace(outcome, findings=tuple(sorted([*outcome.findings, *extra], key=engine._order)))


def _memory_extra(ctx: CheckContext, outcome: engine.Outcome, explain_memory: bool) -> dict | None:
    """--explain-memory: a ``memory`` section (specguard/memory/report.py)."""
    if not explain_memory:
        return None
    from specguard.memory.report import memory_json

    return memory_json(ctx, outcome.corrected)


def rules_meta() -> dict[str, dict]:
    return {
        r.code: {
            "name": r.name,
            "summary": r.summary,
            "sources": list(r.sources),
            # The rule's own documentation, the text `specguard rule CODE` prints (SARIF `help`).
            "help": f"## What it does\n{r.docs.what}\n\n## Why is this bad\n{r.docs.why}\n\n## Fix\n{r.docs.fix}\n\n## Fix safety\n{r.docs.fix_safety}",
        }
        for r in ALL_RULES
    }


class CheckedLaunch(Record, kw_only=False):
    request: LaunchRequest
    ctx: CheckContext
    outcome: engine.Outcome
    notes: tuple[str, ...]


DETAILS = {
    "check": "SERVER_ARGS after `--` (SGLang's, slime's or sgl-jax's spelling), a whole command as one string (env prefixes, "
    "`docker run ... IMAGE ...` included), `-` to read it from stdin, or --script FILE.\n\n"
    "Which rules run: --select, --extend-select and --ignore (as in ruff), after the settings in the closest specguard.toml "
    "or pyproject.toml [tool.specguard] above the checked file (select, ignore, extend-select, per-file-ignores). "
    "A `# specguard: ignore[MM003]` comment (bare: every rule) on a script's or a preset's line suppresses the findings "
    "about the flags written there; they do not count for the exit code.\n\n"
    "Exit codes: 0 no error finding; 1 error findings remain; 2 usage or input error; 130 interrupted (Ctrl-C).",
}

SCRIPT = Option("--script", "A slime or SGLang launch script (- for stdin): every launch in it is checked, by line.", metavar="FILE|-")
WRITE = Option("--write", "With --preset: write the corrected preset here (a new file).", convert=Path, metavar="FILE")
FORCE = Option("--force", "With --write: replace an existing file.", switch=True)
IN_PLACE = Option("--in-place", "With --write: rewrite the preset being checked (its comments and order kept).", switch=True)
EXPLAIN_MEMORY = Option("--explain-memory", "Show the GPU memory budget (weights, KV pool, tree, CUDA graphs, headroom).", switch=True)


class CheckOptions(Record):
    preset: Annotated[str | None, PRESET] = None
    target: Annotated[str | None, TARGET] = None
    draft: Annotated[str | None, DRAFT] = None
    dialect: Annotated[DialectChoice | None, DIALECT] = None
    sglang_version: Annotated[str | None, SGLANG_VERSION] = None
    requirements: Annotated[str | None, REQUIREMENTS] = None
    slime_version: Annotated[str | None, SLIME_VERSION] = None
    sgl_jax_version: Annotated[str | None, SGL_JAX_VERSION] = None
    gpu: Annotated[str | None, GPU] = None
    gpu_count: Annotated[int | None, GPU_COUNT] = None
    env: Annotated[list[str] | None, ENV] = None
    fix: Annotated[bool, FIX] = False
    unsafe_fixes: Annotated[bool, UNSAFE_FIXES] = False
    offline: Annotated[bool, OFFLINE] = False
    output_format: Annotated[OutputFormat, FORMAT] = OutputFormat.human
    script: Annotated[str | None, SCRIPT] = None
    write: Annotated[Path | None, WRITE] = None
    force: Annotated[bool, FORCE] = False
    in_place: Annotated[bool, IN_PLACE] = False
    explain_memory: Annotated[bool, EXPLAIN_MEMORY] = False
    verbose: Annotated[bool, VERBOSE] = False
    select: Annotated[list[list[str]] | None, SELECT] = None
    extend_select: Annotated[list[list[str]] | None, EXTEND_SELECT] = None
    ignore: Annotated[list[list[str]] | None, IGNORE] = None
    show_suppressed: Annotated[bool, SHOW_SUPPRESSED] = False


OPTIONS = {"check": CheckOptions}


def configure(parser: Parser, name: str) -> None:
    parser.usage = "specguard check [OPTIONS] [-- SERVER_ARGS... | 'COMMAND' | -]"


def run(invocation: Invocation[CheckOptions]) -> int:
    """Check every launch the command line gives; the exit code is the worst launch's."""
    o = invocation.options
    preset, output_format, script, write = o.preset, o.output_format, o.script, o.write
    formats: dict[OutputFormat, bool | str] = {OutputFormat.json: True, OutputFormat.sarif: "sarif"}
    machine_format = formats.get(output_format, False)
    with clean_errors(lambda: machine_format):
        reject_misspelled_options(invocation.server_args, invocation.own_options)
        requests = requests_from(invocation.server_args, script, preset=preset)
        if write is not None and len(requests) > 1:
            raise UsageError("--write writes one corrected preset; the input holds several launches", "specguard check")
        selection = selection_for_command(script, preset, o.select, o.ignore, o.extend_select)
        checked: list[CheckedLaunch] = []
        for request in requests:
            inputs = build_inputs(
                list(request.server_args), preset=preset, target=o.target, draft=o.draft, dialect=o.dialect.value if o.dialect else None,
                sglang_version=o.sglang_version, gpu=o.gpu, gpu_count=o.gpu_count, env=o.env, offline=o.offline, found=request.found,
                requirements=o.requirements, slime_version=o.slime_version, sgl_jax_version=o.sgl_jax_version,
            )
            notes: list[str] = list(request.found.notes) if request.found else []
            check_ctx, outcome = run_check(
                inputs, fix_level(o.fix, o.unsafe_fixes), notes, selection=selection, suppressed=suppressions_for(request.found, preset)
            )
            checked.append(CheckedLaunch(request, check_ctx, with_handled(preset, check_ctx, outcome), tuple(notes)))
        if write is not None:
            if not preset:
                raise UsageError("--write needs --preset", "specguard check")
            from specguard.presets import write_corrected_preset

            write_corrected_preset(preset, checked[0].outcome.corrected, write, force=o.force, in_place=o.in_place)
    exit_code = max(c.outcome.exit_code for c in checked)
    if output_format is OutputFormat.json:
        documents = [_launch_json(c, o.explain_memory, o.show_suppressed) for c in checked]
        single = len(checked) == 1 and script is None
        document = documents[0] if single else {"schema_version": SCHEMA_VERSION, "ok": exit_code == 0, "exit_code": exit_code, "launches": documents}
        print(json_text(document))
    elif output_format is OutputFormat.sarif:
        preset_file = None
        if preset:
            from specguard.presets import load

            preset_file = str(load(preset).path)
        print(json_text(outcome_sarif([(c.outcome, c.ctx, c.request.found) for c in checked], rules_meta(), preset_file)))
    else:
        from rich.console import Console

        console = Console(file=sys.stdout, width=_console_width())
        for number, c in enumerate(checked, 1):
            if c.request.found is not None:
                found = c.request.found
                image = f" in {found.image}" if found.image else ""
                console.print(f"[bold]{found.source}:{found.line}[/bold]: launch {number} of {len(checked)}{image}", markup=True, highlight=False)
            for note in c.notes:
                console.print(f"[yellow]note:[/yellow] {redact_text(note)}", highlight=False)
            print_human(c.outcome, c.ctx, console, verbose=o.verbose)
            _print_suppressed(c.outcome, c.ctx, console, o.show_suppressed)
            if o.explain_memory:  # --explain-memory (specguard/memory/report.py)
                from specguard.memory.report import print_memory

                print_memory(c.ctx, console, c.outcome.corrected)
        if len(checked) > 1:
            failing = sum(1 for c in checked if c.outcome.exit_code)
            console.print(f"[bold]{len(checked)} launches checked; {failing} with errors remaining[/bold]")
    return exit_code


def _launch_json(checked: CheckedLaunch, explain_memory: bool, show_suppressed: bool) -> dict:
    document = outcome_json(checked.outcome, checked.ctx, extra=_memory_extra(checked.ctx, checked.outcome, explain_memory))
    if show_suppressed:
        secrets = launch_secrets(checked.outcome, checked.ctx)
        document["suppressed"] = [finding_json(f, secrets) for f in checked.outcome.suppressed]
    found = checked.request.found
    if found is not None:
        document["location"] = {"file": found.source, "line": found.line, "image": found.image, "dialect": found.dialect.value}
    if checked.notes:
        document["notes"] = [redact_text(note) for note in checked.notes]
    return document


def _print_suppressed(outcome: engine.Outcome, ctx: CheckContext, console: Any, show: bool) -> None:
    if not outcome.suppressed:
        return
    if not show:
        console.print(f"[dim]{len(outcome.suppressed)} finding(s) suppressed by # specguard: ignore (--show-suppressed lists them)[/dim]", highlight=False)
        return
    console.print("[bold]suppressed:[/bold]", highlight=False)
    secrets = launch_secrets(outcome, ctx)
    for f in outcome.suppressed:
        console.print(f"  {f.code} {f.name} ({f.severity.value}): {mask_values(f.message, secrets)}", markup=False, highlight=False)
