"""Write an outcome for people (rich), for programs (JSON, schema_version 1) and for CI (SARIF)."""

from __future__ import annotations

import json
from typing import Any

from specguard import __version__
from specguard.dialects import render, render_command
from specguard.engine import Outcome
from specguard.models import Finding, ModelFacts, Severity
from specguard.rules.base import CheckContext

SCHEMA_VERSION = 1
_SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def facts_json(facts: ModelFacts | None) -> dict[str, Any] | None:
    return None if facts is None else facts.model_dump(mode="json")


_ORIGIN_WORDS = {
    "local": "local directory",
    "hf-cache": "Hugging Face cache",
    "hub": "Hugging Face hub",
    "catalog": "specguard catalog",
    "preset": "preset",
    "example": "example",
}


def model_origin(facts: ModelFacts) -> str:
    """Where a model's facts came from, in the resolution order's words (header line)."""
    words = _ORIGIN_WORDS.get(facts.origin or "", "unknown")
    if facts.origin_detail:
        words += f" ({facts.origin_detail})"
    if facts.weights is not None:
        words += f"; weights: {facts.weights.tensor_count} tensors from {facts.weights.source}"
    return words


def finding_json(finding: Finding) -> dict[str, Any]:
    fix = None
    if finding.fix is not None:
        fix = {
            "title": finding.fix.title,
            "applicability": finding.fix.applicability.value,
            "edits": [
                {"flag": e.name, "value": list(e.value) if isinstance(e.value, tuple) else e.value, **({"target": "env"} if e.target == "env" else {})}
                for e in finding.fix.edits
            ],
        }
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "message": finding.message,
        "flags": list(finding.flags),
        "fix": fix,
        "applied": finding.applied,
        "sources": list(finding.sources),
    }


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def outcome_json(outcome: Outcome, ctx: CheckContext, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    corrected = outcome.corrected
    resolved_ctx = ctx.with_spec(corrected)  # type: ignore[arg-type]
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "ok": outcome.exit_code == 0,
        "exit_code": outcome.exit_code,
        "target": facts_json(ctx.target),
        "draft": facts_json(ctx.draft),
        "environment": ctx.env.model_dump(mode="json"),
        "findings": [finding_json(f) for f in outcome.findings],
        "changes": [
            {"flag": c.name, "old": _plain(c.old), "new": _plain(c.new), "rule": c.rule, **({"target": "env"} if c.target == "env" else {})}
            for c in outcome.changes
        ],
        "conflicts": [
            {"flag": c.name, "proposals": [{"rule": code, "value": _plain(value)} for code, value in c.proposals]}
            for c in outcome.conflicts
        ],
        "argv": render(corrected),  # type: ignore[arg-type]
        "env": dict(corrected.env),  # type: ignore[attr-defined]
        "resolved": resolved_ctx.resolution.model_dump(mode="json"),
    }
    if extra:
        document.update(extra)
    return document


def error_json(message: str) -> str:
    return json.dumps({"schema_version": SCHEMA_VERSION, "error": message, "exit_code": 2})


def outcome_sarif(outcome: Outcome, ctx: CheckContext, rules_meta: dict[str, Any]) -> dict[str, Any]:
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
    used = sorted({f.code for f in outcome.findings})
    location = ctx.target.source if ctx.target else "launch"
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "specguard",
                        "version": __version__,
                        "informationUri": "https://github.com/sgl-project/sglang",
                        "rules": [
                            {
                                "id": code,
                                "name": rules_meta[code]["name"],
                                "shortDescription": {"text": rules_meta[code]["summary"]},
                                "helpUri": rules_meta[code]["sources"][0] if rules_meta[code]["sources"] else None,
                            }
                            for code in used
                            if code in rules_meta
                        ],
                    }
                },
                "results": [
                    {
                        "ruleId": f.code,
                        "level": level[f.severity],
                        "message": {"text": f.message + (" (fixed)" if f.applied else "")},
                        "locations": [{"physicalLocation": {"artifactLocation": {"uri": location}}}],
                        "properties": {"flags": list(f.flags), "applied": f.applied},
                    }
                    for f in outcome.findings
                ],
            }
        ],
    }


def print_human(outcome: Outcome, ctx: CheckContext, console: Any, *, fix_hint: str | None = "rerun with --fix (safe) or --unsafe-fixes") -> None:
    from rich.table import Table

    target = ctx.target.source if ctx.target else "unknown target"
    draft = ctx.draft.source if ctx.draft else "no draft"
    gpu = ctx.env.gpu.name if ctx.env.gpu else "GPU unknown"
    console.print(
        f"[bold]specguard[/bold] {target} + {draft} · SGLang {ctx.env.sglang_version} "
        f"({ctx.env.sglang_version_origin}) · {gpu} · {ctx.spec.dialect.value} flags"
    )
    for role, facts in (("target", ctx.target), ("draft", ctx.draft)):
        if facts is not None and facts.origin is not None:
            console.print(f"[dim]{role} facts: {model_origin(facts)}[/dim]", highlight=False)
    if outcome.findings:
        table = Table(show_lines=True, expand=True)
        table.add_column("rule", no_wrap=True)
        table.add_column("severity", no_wrap=True)
        table.add_column("finding and fix", ratio=1)
        for f in outcome.findings:
            text = f.message
            if f.fix is not None:
                status = "applied" if f.applied else ("--fix" if f.fix.applicability.value == "safe" else "--unsafe-fixes")
                text += f"\n[dim]fix ({f.fix.applicability.value}, {status}):[/dim] {f.fix.title}"
            elif f.applied:
                text += "\n[dim]resolved by the fixes applied[/dim]"
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
        changes.add_column("flag")
        changes.add_column("original")
        changes.add_column("corrected")
        changes.add_column("rule")
        for c in outcome.changes:
            name = c.name if c.target == "flag" else f"env {c.name}"
            changes.add_row(name, _show(c.old), _show(c.new), c.rule)
        console.print(changes)
        console.print("[bold]corrected launch:[/bold]")
        console.print(render_command(outcome.corrected), markup=False, highlight=False)  # type: ignore[arg-type]
    for conflict in outcome.conflicts:
        proposals = ", ".join(f"{code} wants {_show(v)}" for code, v in conflict.proposals)
        console.print(f"[yellow]conflict on {conflict.name}: {proposals}; neither was applied[/yellow]")
    errors = len(outcome.errors)
    fixable = sum(1 for f in outcome.findings if f.fix and not f.applied)
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
