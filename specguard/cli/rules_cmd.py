"""``specguard rules`` (every rule, a table) and ``specguard rule CODE`` (its whole docs)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

from specguard.cli.errors import clean_errors
from specguard.cli.options import DATA_FORMAT, DataFormat
from specguard.cli.parsing import Invocation, Positional
from specguard.errors import InputError
from specguard.models import Severity
from specguard.records import Record
from specguard.rules import ALL_RULES, RULES_BY_CODE
from specguard.rules.base import Rule
from specguard.rules.docs import rule_markdown
from specguard.severity import default_severity, in_default_set


class RulesOptions(Record):
    output_format: Annotated[DataFormat, DATA_FORMAT] = DataFormat.human


class RuleOptions(Record):
    code: Annotated[str, Positional("CODE", "A rule code such as DM001, or its name.")]


OPTIONS: dict[str, type[Record]] = {"rules": RulesOptions, "rule": RuleOptions}


def run(invocation: Invocation[RulesOptions | RuleOptions]) -> int:
    o = invocation.options
    if isinstance(o, RuleOptions):
        return rule_command(o.code)
    return rules_command(o.output_format)


def rules_command(output_format: DataFormat) -> int:
    """List every rule."""
    if output_format is not DataFormat.human:
        rows = [
            {"code": r.code, "name": r.name, "severity": r.severity.value, "category": r.category.value,
             "default_severity": default_severity(r).value, "default_set": in_default_set(r), "needs": r.needs.value if r.needs else None,
             "summary": r.summary, "fix_availability": r.fix_availability.value,
             "sglang_versions": r.sglang_versions, "dialects": [d.value for d in r.dialects] if r.dialects else None,
             "severities": [s.value for s in finding_severities(r)], "sources": list(r.sources)}
            for r in ALL_RULES
        ]
        print(json.dumps(rows, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(ALL_RULES)} rules")
    for column in ("code", "name", "category", "default", "severity", "applies to", "summary"):
        table.add_column(column, overflow="fold")
    for r in ALL_RULES:
        versions = f"SGLang {r.sglang_versions}" if r.sglang_versions else ""
        dialects = "/".join(d.value for d in r.dialects) if r.dialects else ""
        scope = " ".join(part for part in (versions, dialects) if part)
        # default: whether the default set holds it, and the severity it speaks at unselected.
        default = f"{'yes' if in_default_set(r) else 'no'}, {default_severity(r).value}"
        table.add_row(r.code, r.name, r.category.value, default, "/".join(s.value for s in finding_severities(r)), scope or "all", r.summary)
    Console(file=sys.stdout).print(table)
    return 0


def finding_severities(rule: Rule) -> tuple[Severity, ...]:
    """Every severity the rule's findings can carry, worst first: its declared one, and each
    ``Severity.X`` its module names (the ``severity=`` a finding overrides it with, directly or
    through a variable). 22 rules downgrade or raise some findings (DM002 warns where it would
    otherwise refuse); a table showing only the declared one misstated them. A test holds this
    against the severities every rule case produces."""
    import ast
    import inspect

    named = {rule.severity}
    for node in ast.walk(ast.parse(inspect.getsource(inspect.getmodule(rule.check)))):  # type: ignore[arg-type]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Severity":
            named.add(Severity[node.attr])
    return tuple(s for s in (Severity.ERROR, Severity.WARNING, Severity.INFO) if s in named)


def rule_command(code: str) -> int:
    """Print one rule's documentation."""
    with clean_errors():
        rule = RULES_BY_CODE.get(code.upper()) or next((r for r in ALL_RULES if r.name == code.lower()), None)
        if rule is None:
            raise InputError(f"no rule {code!r}", hint="`specguard rules` lists them")
    print(rule_markdown(rule))
    return 0
