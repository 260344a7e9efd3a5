"""The severity policy (#25): how loud a rule's finding is, decided here once.

A warning must mean "this launch fails or degrades for you". A rule says what its findings mean
(``Rule.category``) and, for a bug only some requests hit, which kind of request (``Rule.needs``);
its check picks a severity from what it sees. The engine then passes every finding through
:func:`apply_policy`, which may lower that severity, never raise it:

- a rule of a quiet category (slower, exposed, untidy) speaks as info unless it was selected
  explicitly. Its errors stay: a rule raises one only where the launch fails to start.
- a rule whose bug needs a kind of request speaks as info, naming that kind, unless the launch
  enables it (``FEATURE_FLAGS``); a client may still send one, so the finding stays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from specguard.models import (
    DEFAULT_CATEGORIES,
    Category,
    Finding,
    RequestFeature,
    Severity,
)
from specguard.records import replace

if TYPE_CHECKING:
    from specguard.rules.base import CheckContext, Rule

# Warnings of these categories stay warnings by default: the launch fails, hangs or answers
# wrongly. PERF and HYGIENE cost speed or tidiness only. EXPOSED is shown by default (it is in
# DEFAULT_CATEGORIES) but as info: whether the port is reachable by others depends on the network
# (a container, a firewall) that no launch shows, and the documented launches bind 0.0.0.0 inside
# containers.
LOUD_CATEGORIES = frozenset({Category.START, Category.CRASH, Category.WRONG_OUTPUT})

# The flags with which a launch enables a kind of request; () where none does (any client may ask).
# --grammar-backend none turns structured output off, so only another value counts.
FEATURE_FLAGS: dict[RequestFeature, tuple[str, ...]] = {
    RequestFeature.STRUCTURED_OUTPUT: ("--grammar-backend",),
    RequestFeature.LOGPROBS: (),
    RequestFeature.CUSTOM_LOGIT_PROCESSOR: ("--enable-custom-logit-processor",),
    RequestFeature.HIDDEN_STATES: ("--enable-return-hidden-states",),
    RequestFeature.LONG_PROMPTS: (),
}


# What each category says of a launch, for `specguard rules` and docs/rules.md.
CATEGORY_MEANING: dict[Category, str] = {
    Category.START: "it fails to start",
    Category.CRASH: "it crashes or hangs while serving",
    Category.WRONG_OUTPUT: "it returns wrong output",
    Category.PERF: "it runs slower than it should",
    Category.EXPOSED: "it is exposed (security)",
    Category.HYGIENE: "a deprecated spelling, a redundant flag",
}


def in_default_set(rule: Rule) -> bool:
    return rule.category in DEFAULT_CATEGORIES


def launch_enables(feature: RequestFeature, ctx: CheckContext) -> bool:
    """Whether the launch turns the feature on with one of its flags."""
    for flag in FEATURE_FLAGS[feature]:
        item = ctx.spec.item(flag)
        if item is not None and tuple(v.lower() for v in item.values) != ("none",):
            return True
    return False


def default_severity(rule: Rule, *, explicitly_selected: bool = False) -> Severity:
    """The severity of the rule's declared findings on a launch that enables what it needs (info
    where no flag can enable it)."""
    if rule.needs is not None and not FEATURE_FLAGS[rule.needs]:
        return Severity.INFO
    if rule.severity is Severity.WARNING and rule.category not in LOUD_CATEGORIES and not explicitly_selected:
        return Severity.INFO
    return rule.severity


def apply_policy(rule: Rule, finding: Finding, ctx: CheckContext, *, explicitly_selected: bool = False) -> Finding:
    """The finding at the severity the policy allows (never above the rule's own choice)."""
    if finding.severity is Severity.INFO:
        return finding
    if rule.needs is not None and not launch_enables(rule.needs, ctx):
        flags = FEATURE_FLAGS[rule.needs]
        how = f"the launch does not enable them ({', '.join(flags)})" if flags else "any client may send them"
        return replace(finding, severity=Severity.INFO, message=f"{finding.message} (only requests with {rule.needs.value} hit this; {how})")
    if finding.severity is Severity.WARNING and rule.category not in LOUD_CATEGORIES and not explicitly_selected:
        return replace(finding, severity=Severity.INFO)
    return finding
