"""The severity policy (specguard/severity.py): quiet categories, request features, selection."""

from __future__ import annotations

from specguard import engine
from specguard.models import DEFAULT_CATEGORIES, Category, Severity
from specguard.rules import ALL_RULES, RULES_BY_CODE
from specguard.rules.base import Example
from specguard.severity import (
    LOUD_CATEGORIES,
    apply_policy,
    default_severity,
    in_default_set,
)

EAGLE = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE",
         "--speculative-draft-model-path", "yuhuili/EAGLE-LLaMA3.1-Instruct-8B",
         "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")


def _findings(code: str, *argv: str, version: str, selected: bool = False, gpu: str | None = None):
    ctx = Example(argv=argv, sglang_version=version, gpu=gpu).context()
    outcome = engine.check([RULES_BY_CODE[code]], ctx, selected=(lambda rule: True) if selected else None)
    return [f for f in outcome.findings if f.code == code]


def test_the_default_set_is_every_category_but_perf_and_hygiene():
    assert DEFAULT_CATEGORIES == frozenset(Category) - {Category.PERF, Category.HYGIENE}
    assert LOUD_CATEGORIES <= DEFAULT_CATEGORIES


def test_a_perf_warning_is_info_unless_selected_explicitly():
    rule = RULES_BY_CODE["MM003"]
    ctx = rule.bad.context()
    [quiet] = engine.check([rule], ctx).findings
    [loud] = engine.check([rule], ctx, selected=lambda r: r.code == "MM003").findings
    assert (quiet.severity, loud.severity) == (Severity.INFO, Severity.WARNING)
    assert default_severity(RULES_BY_CODE["MM003"]) is Severity.INFO
    assert default_severity(RULES_BY_CODE["MM003"], explicitly_selected=True) is Severity.WARNING


def test_an_error_of_a_quiet_rule_stays_an_error():
    # AB007 is perf (CUDA graphs off) but NGRAM with torch_native crashes in the startup warmup.
    [finding] = _findings("AB007", "--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "NGRAM",
                          "--attention-backend", "torch_native", version="0.5.23", gpu="A10G")
    assert finding.severity is Severity.ERROR


def test_a_request_feature_bug_warns_only_where_the_launch_enables_the_feature():
    [quiet] = _findings("FX086", *EAGLE, version="0.5.11")
    assert quiet.severity is Severity.INFO and "only requests with structured output" in quiet.message
    [loud] = _findings("FX086", *EAGLE, "--grammar-backend", "xgrammar", version="0.5.11")
    assert loud.severity is Severity.WARNING and "only requests with" not in loud.message
    # Selecting the rule does not show the feature: still info.
    assert _findings("FX086", *EAGLE, version="0.5.11", selected=True)[0].severity is Severity.INFO


def test_the_policy_never_raises_a_severity():
    ctx = Example(argv=EAGLE).context()
    for rule in ALL_RULES:
        finding = rule.finding("x", severity=Severity.INFO)
        assert apply_policy(rule, finding, ctx, explicitly_selected=True).severity is Severity.INFO


def test_every_rule_is_in_or_out_of_the_default_set_by_its_category():
    for rule in ALL_RULES:
        assert in_default_set(rule) == (rule.category in DEFAULT_CATEGORIES)
