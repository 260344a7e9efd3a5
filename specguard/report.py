"""Write an outcome for people (rich), for programs (JSON, schema_version 1) and for CI (SARIF).

Every form shows secrets masked (specguard/redact.py): the launch's argv and env, a change or a
fix's edit of a secret flag or env var, and any ``--api-key VALUE`` a message quotes."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from specguard import __version__
from specguard.dialects import render, render_command
from specguard.engine import Outcome
from specguard.models import Dialect, Finding, ModelFacts, Severity
from specguard.records import as_dict
from specguard.redact import (
    mask_values,
    redact_spec,
    redact_text,
    redact_value,
    spec_secrets,
)
from specguard.rules.base import CheckContext

SCHEMA_VERSION = 1
_SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def facts_json(facts: ModelFacts | None) -> dict[str, Any] | None:
    return None if facts is None else as_dict(facts, json=True)


_ORIGIN_WORDS = {
    "local": "local directory",
    "hf-cache": "Hugging Face cache",
    "hub": "Hugging Face hub",
    "catalog": "specguard catalog",
    "preset": "preset",
    "example": "example",
}


def model_origin(facts: ModelFacts, *, verbose: bool = True) -> str:
    """Where a model's facts came from, in the resolution order's words (header line).

    Not ``verbose``: a catalog entry is named by its snapshot only. Its detail (the repository
    and file it was copied from, why the catalog was used) took 14-18 lines at 80 columns and
    cites files a user does not have; ``-v`` shows it."""
    words = _ORIGIN_WORDS.get(facts.origin or "", "unknown")
    if facts.origin_detail and (verbose or facts.origin != "catalog"):
        words += f" ({facts.origin_detail})"
    elif facts.origin_detail:
        from specguard import catalog  # already read: these facts came from it

        words += f" snapshot {catalog.snapshot_date()} (-v: its source)"
    if facts.weights is not None:
        words += f"; weights: {facts.weights.tensor_count} tensors from {facts.weights.source}"
    return words


def launch_secrets(outcome: Outcome, ctx: CheckContext) -> list[str]:
    """The secret values of the launch as given and as corrected, to mask in what specguard
    writes about it (by value: a message's prose about a flag is not a value)."""
    return [*spec_secrets(ctx.spec), *spec_secrets(outcome.original), *spec_secrets(outcome.corrected)]  # type: ignore[arg-type]


def finding_json(finding: Finding, secrets: Iterable[str]) -> dict[str, Any]:
    fix = None
    if finding.fix is not None:
        fix = {
            "title": mask_values(finding.fix.title, secrets),
            "applicability": finding.fix.applicability.value,
            "edits": [
                {"flag": e.name, "value": _plain(redact_value(e.name, e.value)), **({"target": "env"} if e.target == "env" else {})}
                for e in finding.fix.edits
            ],
        }
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "message": mask_values(finding.message, secrets),
        "flags": list(finding.flags),
        "fix": fix,
        "applied": finding.applied,
        "resolved": finding.resolved,
        "sources": list(finding.sources),
    }


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def outcome_json(outcome: Outcome, ctx: CheckContext, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    corrected = outcome.corrected
    resolved_ctx = ctx.with_spec(corrected)  # type: ignore[arg-type]
    shown = redact_spec(corrected)  # type: ignore[arg-type]
    secrets = launch_secrets(outcome, ctx)
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "ok": outcome.exit_code == 0,
        "exit_code": outcome.exit_code,
        "target": facts_json(ctx.target),
        "draft": facts_json(ctx.draft),
        "environment": as_dict(ctx.env, json=True),
        "findings": [finding_json(f, secrets) for f in outcome.findings],
        "changes": [
            {"flag": c.name, "old": _plain(redact_value(c.name, c.old)), "new": _plain(redact_value(c.name, c.new)), "rule": c.rule, **({"target": "env"} if c.target == "env" else {})}
            for c in outcome.changes
        ],
        "conflicts": [
            {"flag": c.name, "proposals": [{"rule": code, "value": _plain(redact_value(c.name, value))} for code, value in c.proposals]}
            for c in outcome.conflicts
        ],
        "argv": render(shown),
        "env": dict(shown.env),
        "resolved": as_dict(resolved_ctx.resolution, json=True),
    }
    if extra:
        document.update(extra)
    return document


def json_text(document: Any) -> str:
    """``document`` as strict JSON: a non-finite float (which no input should carry this far) is
    written as null rather than as Python's bare NaN, which JSON parsers reject."""
    import math

    def strict(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {k: strict(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [strict(v) for v in value]
        return value

    try:
        return json.dumps(document, indent=2, allow_nan=False)
    except ValueError:
        return json.dumps(strict(document), indent=2, allow_nan=False)


def error_json(message: str) -> str:
    return json.dumps({"schema_version": SCHEMA_VERSION, "error": message, "exit_code": 2})


def outcome_sarif(checked: list[tuple[Outcome, CheckContext, Any]], rules_meta: dict[str, Any], preset_file: str | None = None) -> dict[str, Any]:
    """One SARIF 2.1.0 run over every launch checked. ``checked`` holds (outcome, context, the
    ``FoundLaunch`` read from text or None); a finding read from text points at the line that
    holds its flag (or the launch's first line), else at the target's config.json."""
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
    used = sorted({f.code for outcome, _, _ in checked for f in (*outcome.findings, *outcome.suppressed)})
    results = []
    for outcome, ctx, found in checked:
        secrets = launch_secrets(outcome, ctx)
        # A finding silenced by a ``# specguard: ignore`` comment is still a result, marked as
        # suppressed in source (SARIF 2.1.0, 3.27.23): code scanning shows it as dismissed, and
        # removing the comment does not make it look new.
        for f, suppressions in [(f, None) for f in outcome.findings] + [(f, [{"kind": "inSource"}]) for f in outcome.suppressed]:
            uri, line = _finding_location(f, ctx, found, preset_file)
            physical: dict[str, Any] = {"artifactLocation": {"uri": uri}}
            if line is not None:
                physical["region"] = {"startLine": line}
            result: dict[str, Any] = {
                "ruleId": f.code,
                "level": level[f.severity],
                "message": {"text": mask_values(f.message, secrets) + (" (fixed)" if f.resolved else "")},
                "locations": [{"physicalLocation": physical}],
                "properties": {"flags": list(f.flags), "applied": f.applied, "resolved": f.resolved},
            }
            if suppressions is not None:
                result["suppressions"] = suppressions
            results.append(result)
    rules = []
    for code in used:
        if code not in rules_meta:
            continue
        rule: dict[str, Any] = {"id": code, "name": rules_meta[code]["name"], "shortDescription": {"text": rules_meta[code]["summary"]}}
        if rules_meta[code].get("help"):
            rule["help"] = {"text": rules_meta[code]["help"], "markdown": rules_meta[code]["help"]}
        if rules_meta[code]["sources"] and rules_meta[code]["sources"][0].startswith("http"):
            rule["helpUri"] = rules_meta[code]["sources"][0]
        rules.append(rule)
    return _sarif_log(rules, results)


def _sarif_log(rules: list[dict[str, Any]], results: list[dict[str, Any]], notifications: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "specguard", "version": __version__, "informationUri": "https://github.com/sgl-project/sglang", "rules": rules}},
        "results": results,
    }
    if notifications is not None:
        run["invocations"] = [{"executionSuccessful": False, "toolExecutionNotifications": notifications}]
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}


def error_sarif(message: str) -> str:
    """An input error as a SARIF notification, so code scanning shows it instead of nothing."""
    notification = {"level": "error", "message": {"text": message}, "descriptor": {"id": "input-error"}}
    return json.dumps(_sarif_log([], [], [notification]), indent=2)


def _finding_location(finding: Finding, ctx: CheckContext, found: Any, preset_file: str | None = None) -> tuple[str, int | None]:
    if found is None and preset_file is not None:
        return _artifact_uri(preset_file), _preset_line(preset_file, finding.flags)
    if found is None:
        return (ctx.target.source if ctx.target else "launch"), None
    from specguard.dialects import canonical_flag

    wanted = set(finding.flags)
    for index, token in enumerate(found.argv):
        if token.startswith("-") and canonical_flag(token.split("=", 1)[0], found.dialect) in wanted:
            file, line = found.location_of(index)
            return _artifact_uri(file), line
    return _artifact_uri(found.source), found.line


def _preset_line(preset_file: str, flags: tuple[str, ...]) -> int | None:
    """The line of a preset's ``flags:`` entry for one of ``flags`` (written without the dashes,
    in SGLang's or slime's spelling)."""
    from pathlib import Path

    from specguard.suppressions import preset_flag_entries

    names = {flag.removeprefix("--") for flag in flags} | {"sglang-" + flag.removeprefix("--") for flag in flags}
    try:
        lines = Path(preset_file).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    return next((number for number, key, _ in preset_flag_entries(lines) if key in names), None)


def _artifact_uri(file: str) -> str:
    """A path relative to the working directory where it lies below it (what code scanning
    matches against the repository), else a file: URI; <command>/<stdin> stay as they are."""
    from pathlib import Path

    if file.startswith("<"):
        return file
    path = Path(file).resolve()
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_uri()


def runtime_version(ctx: CheckContext) -> str:
    """What the header says the rules speak of: the SGLang release, or for sgl-jax the build."""
    env = ctx.env
    if ctx.spec.dialect is Dialect.SGL_JAX:
        return f"sgl-jax build {env.sgl_jax_build or 'unknown'} ({env.sgl_jax_build_source})"
    return f"SGLang {env.sglang_version} ({env.sglang_version_origin})"


def _missing_draft(ctx: CheckContext) -> str:
    """A launch that names a draft whose facts could not be read is not a launch without one."""
    path = ctx.spec.get("speculative_draft_model_path")
    return f"draft not found here ({redact_text(str(path))})" if path else "no draft given"


def print_human(
    outcome: Outcome, ctx: CheckContext, console: Any, *, fix_hint: str | None = "rerun with --fix (safe) or --unsafe-fixes", verbose: bool = False
) -> None:
    from rich.table import Table

    target = ctx.target.source if ctx.target else "unknown target"
    draft = ctx.draft.source if ctx.draft else _missing_draft(ctx)
    gpu = ctx.env.gpu.name if ctx.env.gpu else "GPU unknown"
    console.print(f"[bold]specguard[/bold] {target} + {draft} · {runtime_version(ctx)} · {gpu} · {ctx.spec.dialect.value} flags")
    if ctx.env.sglang_version_note:
        console.print(f"[yellow]SGLang version:[/yellow] {ctx.env.sglang_version_note}", highlight=False)
    for role, facts in (("target", ctx.target), ("draft", ctx.draft)):
        if facts is not None and facts.origin is not None:
            console.print(f"[dim]{role} facts: {model_origin(facts, verbose=verbose)}[/dim]", highlight=False)
    if outcome.findings:
        table = Table(show_lines=True, expand=True)
        # Narrow terminals wrap (fold) every column; nothing a user needs is cut to "…".
        table.add_column("rule", overflow="fold")
        table.add_column("severity", overflow="fold")
        table.add_column("finding and fix", ratio=1, overflow="fold")
        secrets = launch_secrets(outcome, ctx)
        for f in outcome.findings:
            text = mask_values(f.message, secrets)
            if f.resolved and not f.applied:
                unused = f"; its own fix was not made: {mask_values(f.fix.title, secrets)}" if f.fix else ""
                text += f"\n[dim]resolved by the fixes applied{unused}[/dim]"
            elif f.fix is not None:
                status = "applied" if f.applied else ("--fix" if f.fix.applicability.value == "safe" else "--unsafe-fixes")
                text += f"\n[dim]fix ({f.fix.applicability.value}, {status}):[/dim] {mask_values(f.fix.title, secrets)}"
            table.add_row(
                f"{f.code}\n[dim]{f.name}[/dim]",
                f"[{_SEVERITY_STYLE[f.severity]}]{f.severity.value}[/]",
                text,
            )
        console.print(table)
    else:
        console.print("[green]No findings.[/green]")
    if outcome.changes:
        changes = Table(title="flags: original -> corrected", expand=False)
        for column in ("flag", "original", "corrected", "rule"):
            changes.add_column(column, overflow="fold")
        for c in outcome.changes:
            name = c.name if c.target == "flag" else f"env {c.name}"
            changes.add_row(name, _show(redact_value(c.name, c.old)), _show(redact_value(c.name, c.new)), c.rule)
        console.print(changes)
        console.print("[bold]corrected launch:[/bold]")
        console.print(render_command(redact_spec(outcome.corrected)), markup=False, highlight=False)  # type: ignore[arg-type]
    for conflict in outcome.conflicts:
        proposals = ", ".join(f"{code} wants {_show(redact_value(conflict.name, v))}" for code, v in conflict.proposals)
        console.print(f"[yellow]conflict on {conflict.name}: {proposals}; neither was applied[/yellow]")
    errors = len(outcome.errors)
    fixable = sum(1 for f in outcome.findings if f.fix and not f.resolved)
    summary = f"{errors} error(s) remain" if errors else "no errors remain"
    if fixable and fix_hint:
        summary += f"; {fixable} finding(s) have fixes: {fix_hint}"
    console.print(summary)


def _show(value: Any) -> str:
    if value is None or value is False:
        return "(unset)"
    if value is True:
        return "(set)"
    if isinstance(value, tuple):
        return " ".join(str(v) for v in value)
    return str(value)
