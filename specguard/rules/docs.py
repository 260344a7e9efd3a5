"""A rule's documentation as Markdown: what `specguard rule CODE` prints and what
`scripts/gen_rule_docs.py` writes to docs/rules.md (one renderer, outside the CLI)."""

from __future__ import annotations

import json

from specguard.rules.base import Example, FixAvailability, Rule

FIX_AVAILABILITY = {
    FixAvailability.NEVER: "The rule offers no automatic fix.",
    FixAvailability.SOMETIMES: "A fix is available in some cases.",
    FixAvailability.ALWAYS: "A fix is always available.",
}


def rule_markdown(rule: Rule) -> str:
    """The rule's whole documentation; `docs/rules.md` is generated from the same text."""
    versions = f"SGLang {rule.sglang_versions}" if rule.sglang_versions else "all SGLang versions"
    dialects = ", ".join(d.value for d in rule.dialects) if rule.dialects else "all dialects"
    sources = "\n".join(f"- {s}" for s in rule.sources)
    return (
        f"# {rule.code} {rule.name}\n\n{rule.summary}. Severity: {rule.severity.value}. "
        f"Applies to {versions}, {dialects}.\n\n{_policy_line(rule)}\n\n"
        f"## What it does\n{rule.docs.what}\n\n## Why is this bad\n{rule.docs.why}\n\n"
        f"## Fix\n{rule.docs.fix}\n\n## Fix safety\n{rule.docs.fix_safety} {FIX_AVAILABILITY[rule.fix_availability]}\n\n"
        f"## Example\nBad:\n\n    {rule.bad.command()}\n"
        f"{_facts_line(rule.bad)}\nGood:\n\n    {rule.good.command()}\n{_facts_line(rule.good)}\n"
        f"## Sources\n{sources}\n"
    )


def _policy_line(rule: Rule) -> str:
    """Its category, and how loud it is by default (specguard.severity decides; this only says)."""
    from specguard.severity import (
        CATEGORY_MEANING,
        FEATURE_FLAGS,
        default_severity,
        in_default_set,
    )

    line = (
        f"Category: {rule.category.value} ({CATEGORY_MEANING[rule.category]}); "
        f"{'in' if in_default_set(rule) else 'not in'} the default set; "
        f"default severity: {default_severity(rule).value}"
    )
    if default_severity(rule, explicitly_selected=True) is not default_severity(rule):
        line += f" ({default_severity(rule, explicitly_selected=True).value} when selected explicitly)"
    if rule.needs is not None:
        flags = FEATURE_FLAGS[rule.needs]
        how = f"info unless the launch enables them ({', '.join(flags)})" if flags else "info, since any client may send them"
        line += f". Only requests with {rule.needs.value} hit it: {how}"
    return line + "."


def _facts_line(example: Example) -> str:
    # The model facts as JSON, the way config.json writes them, not as Python reprs.
    parts = []
    if example.target:
        parts.append(f"target facts {json.dumps(example.target)}")
    if example.draft:
        parts.append(f"draft facts {json.dumps(example.draft)}")
    if example.gpu:
        parts.append(f"GPU {example.gpu}")
    if example.sglang_version:
        parts.append(f"SGLang {example.sglang_version}")
    return f"\n({'; '.join(parts)})\n" if parts else ""
