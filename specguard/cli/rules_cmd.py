"""``specguard rules`` (every rule, a table) and ``specguard rule CODE`` (its whole docs)."""

from __future__ import annotations

import json
import sys

from specguard.cli.errors import clean_errors
from specguard.cli.options import FORMAT, OutputFormat
from specguard.cli.parsing import Invocation, Parser, add_options
from specguard.errors import InputError
from specguard.rules import ALL_RULES, RULES_BY_CODE
from specguard.rules.docs import rule_markdown


def add_arguments(parser: Parser, name: str) -> None:
    if name == "rule":
        parser.add_argument("code", metavar="CODE", help="A rule code such as DM001, or its name.")
    else:
        add_options(parser, FORMAT)


def run(invocation: Invocation) -> int:
    if invocation.name == "rule":
        return rule_command(invocation.options.code)
    return rules_command(invocation.options.output_format)


def rules_command(output_format: OutputFormat) -> int:
    """List every rule."""
    if output_format is not OutputFormat.human:
        rows = [
            {"code": r.code, "name": r.name, "severity": r.severity.value, "summary": r.summary, "fix_availability": r.fix_availability.value,
             "sglang_versions": r.sglang_versions, "dialects": [d.value for d in r.dialects] if r.dialects else None,
             "sources": list(r.sources)}
            for r in ALL_RULES
        ]
        print(json.dumps(rows, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(ALL_RULES)} rules")
    for column in ("code", "name", "severity", "applies to", "summary"):
        table.add_column(column, overflow="fold")
    for r in ALL_RULES:
        versions = f"SGLang {r.sglang_versions}" if r.sglang_versions else ""
        dialects = "/".join(d.value for d in r.dialects) if r.dialects else ""
        scope = " ".join(part for part in (versions, dialects) if part)
        table.add_row(r.code, r.name, r.severity.value, scope or "all", r.summary)
    Console(file=sys.stdout).print(table)
    return 0


def rule_command(code: str) -> int:
    """Print one rule's documentation."""
    with clean_errors():
        rule = RULES_BY_CODE.get(code.upper()) or next((r for r in ALL_RULES if r.name == code.lower()), None)
        if rule is None:
            raise InputError(f"no rule {code!r}", hint="`specguard rules` lists them")
    print(rule_markdown(rule))
    return 0
