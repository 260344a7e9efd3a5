"""JX rules: sgl-jax only, its defaults (steps 4, topk 5, draft tokens 4) filled in."""

from __future__ import annotations

import pytest

from specguard import engine
from specguard.models import Applicability, Dialect, Severity
from specguard.rules import ALL_RULES
from specguard.rules.base import Example
from specguard.rules.sgl_jax import (
    JX001_paged_kv_needs_fa as JX001,
)
from specguard.rules.sgl_jax import (
    JX002_overlap_scheduler_speculative as JX002,
)
from specguard.rules.sgl_jax import (
    JX003_sglang_only_attention_backend as JX003,
)
from specguard.rules.sgl_jax import (
    JX004_chain_draft_tokens_not_rewritten as JX004,
)
from specguard.rules.sgl_jax import (
    JX005_sgl_jax_dflash_constraints as JX005,
)
from specguard.rules.sgl_jax import (
    JX006_tree_draft_unusable_on_tpu as JX006,
)
from specguard.rules.sgl_jax import (
    JX007_algorithm_not_in_sgl_jax as JX007,
)
from specguard.rules.sgl_jax import (
    JX080_dflash_grammar_backend_default as JX080,
)
from tests.conftest import HF_CONFIGS, run_cli_json

BASE = ("--model-path", "Qwen/Qwen3-32B", "--speculative-draft-model-path", "AngelSlim/Qwen3-32B_eagle3")
CHAIN = ("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4")
VALIDATED = (*BASE, "--speculative-algorithm", "EAGLE3", *CHAIN, "--attention-backend", "fa", "--page-size", "64",
             "--disable-overlap-schedule", "--tp-size", "4", "--dtype", "bfloat16")


def fired(rule, *argv, dialect=Dialect.SGL_JAX):
    ctx = Example(argv=argv, dialect=dialect, gpu="TPU-v6e").context()
    return list(rule.check(ctx)) if rule.applies_to(ctx) else []


def test_the_validated_tpu_command_is_clean_for_every_jx_rule():
    ctx = Example(argv=VALIDATED, dialect=Dialect.SGL_JAX, gpu="TPU-v6e").context()
    assert [f for f in engine.run_rules(ALL_RULES, ctx) if f.code.startswith("JX")] == []


@pytest.mark.parametrize("rule", [JX001, JX002, JX003, JX004, JX005, JX006, JX007, JX080])
def test_jx_rules_never_fire_for_sglang_dialect(rule):
    assert fired(rule.RULE, *rule.RULE.bad.argv, dialect=Dialect.SGLANG) == []


@pytest.mark.parametrize(("backend", "expected"), [("native", True), ("fa_mha", True), ("fa", False), ("fa3", False)])
def test_jx001_paged(backend, expected):
    argv = (*BASE, "--speculative-algorithm", "EAGLE3", *CHAIN, "--page-size", "64", "--attention-backend", backend)
    assert bool(fired(JX001.RULE, *argv)) is expected
    assert fired(JX001.RULE, *BASE, "--speculative-algorithm", "EAGLE3", "--attention-backend", backend) == []


@pytest.mark.parametrize(
    ("algorithm", "extra", "severity"),
    [
        ("EAGLE3", CHAIN, Severity.INFO),  # allowed at HEAD, still recommended
        ("EAGLE3", (*CHAIN, "--attention-backend", "fa_mha"), Severity.ERROR),
        ("EAGLE3", (), Severity.ERROR),  # defaults: topk 5
        ("NEXTN", CHAIN, None),
        ("NEXTN", ("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "8"),
         Severity.ERROR),
        ("EAGLE", CHAIN, Severity.ERROR),
        ("STANDALONE", CHAIN, Severity.ERROR),
        ("DFLASH", (), None),
    ],
)
def test_jx002_overlap_rule_at_head(algorithm, extra, severity):
    findings = fired(JX002.RULE, *BASE, "--speculative-algorithm", algorithm, *extra)
    assert [f.severity for f in findings] == ([severity] if severity else [])
    assert fired(JX002.RULE, *BASE, "--speculative-algorithm", algorithm, *extra, "--disable-overlap-schedule") == []


def test_jx002_fix_is_safe():
    [finding] = fired(JX002.RULE, *BASE, "--speculative-algorithm", "EAGLE")
    assert finding.fix.applicability is Applicability.SAFE


@pytest.mark.parametrize("backend", ["fa3", "flashinfer", "triton", "trtllm_mha"])
def test_jx003_sglang_backends(backend):
    [finding] = fired(JX003.RULE, *BASE, "--attention-backend", backend)
    assert finding.fix.edits[0].value == "fa"


def test_jx004_uses_sgl_jax_defaults():
    # topk 1, steps default 4, draft tokens default 4: mismatch (SGLang would make it 5).
    [finding] = fired(JX004.RULE, *BASE, "--speculative-algorithm", "EAGLE3", "--speculative-eagle-topk", "1")
    assert finding.fix.edits[0].value == 5
    assert fired(JX004.RULE, *BASE, "--speculative-algorithm", "EAGLE3", *CHAIN) == []
    assert fired(JX004.RULE, *BASE, "--speculative-algorithm", "EAGLE3") == []  # topk 5: a tree, JX006's


def test_jx005_dflash():
    dflash = ("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "DFLASH")
    [missing] = fired(JX005.RULE, *dflash)
    assert missing.fix is None
    assert fired(JX005.RULE, *dflash, "--speculative-draft-model-path", "d") == []
    [steps] = fired(JX005.RULE, *dflash, "--speculative-draft-model-path", "d", "--speculative-eagle-topk", "4")
    assert "topk is 4" in steps.message


def test_jx006_default_topk_is_a_tree():
    [finding] = fired(JX006.RULE, *BASE, "--speculative-algorithm", "EAGLE3")
    assert "sgl-jax's default" in finding.message and finding.severity is Severity.ERROR
    assert finding.fix.edits and {e.value for e in finding.fix.edits} == {1, 5}  # topk 1, steps 4 + 1
    assert fired(JX006.RULE, *BASE, "--speculative-algorithm", "EAGLE3", *CHAIN) == []


def test_jx006_a_typed_tree_fails_with_overlap_off_too():
    tree = ("--speculative-eagle-topk", "2", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4")
    [finding] = fired(JX006.RULE, *BASE, "--speculative-algorithm", "EAGLE3", *tree, "--disable-overlap-schedule")
    assert "topk 2" in finding.message and "(sgl-jax's default)" not in finding.message
    assert fired(JX006.RULE, *BASE, "--speculative-algorithm", "DFLASH", *tree) == []  # JX005 judges DFLASH


@pytest.mark.parametrize(("algorithm", "expected"), [("NGRAM", True), ("UNO", True), ("STANDALONE", False), ("nextn", False)])
def test_jx007_algorithms(algorithm, expected):
    assert bool(fired(JX007.RULE, *BASE, "--speculative-algorithm", algorithm)) is expected


def test_cli_end_to_end_sgl_jax_dialect():
    qwen = str(HF_CONFIGS / "Qwen" / "Qwen3-32B")
    argv = ("--model-path", qwen, "--speculative-algorithm", "EAGLE3", *CHAIN, "--attention-backend", "fa3",
            "--page-size", "64")
    code, doc = run_cli_json("check", "--offline", "--dialect", "sgl-jax", "--gpu", "TPU-v6e", "--", *argv)
    errors = {f["code"] for f in doc["findings"] if f["severity"] == "error"}
    assert code == 1 and "JX003" in errors and not any(c.startswith(("AB", "VB")) for c in errors)
    code, doc = run_cli_json("check", "--offline", "--unsafe-fixes", "--dialect", "sgl-jax", "--gpu", "TPU-v6e", "--", *argv)
    assert doc["argv"][doc["argv"].index("--attention-backend") + 1] == "fa"
    assert not [f for f in doc["findings"] if f["code"].startswith("JX") and f["severity"] == "error" and not f["applied"]]


DFLASH = ("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path",
          "z-lab/Qwen3-8B-DFlash-b16", "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
          "--disable-overlap-schedule")


@pytest.mark.parametrize(("extra", "expected"), [
    ((), True),  # unset: sgl-jax's __post_init__ makes it llguidance
    (("--grammar-backend", "xgrammar"), True),
    (("--grammar-backend", "llguidance"), True),
    (("--grammar-backend", "none"), False),
])
def test_jx080_dflash_needs_grammar_backend_none(extra, expected):
    findings = fired(JX080.RULE, *DFLASH, *extra)
    assert bool(findings) is expected
    if expected:
        assert findings[0].severity is Severity.ERROR and findings[0].flags == ("--grammar-backend",)
        assert findings[0].fix.applicability is Applicability.UNSAFE


def test_jx080_only_dflash():
    assert fired(JX080.RULE, *VALIDATED) == []


def test_sp001_is_sglang_auto_choice_not_sgl_jax():
    """sgl-jax fills unset steps/topk/draft tokens with fixed defaults; SGLang's partial-set crash does not apply."""
    from specguard.rules.spec_params import SP001_spec_params_partially_set as SP001

    argv = (*BASE, "--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3")
    assert fired(SP001.RULE, *argv) == []
    assert fired(SP001.RULE, *argv, dialect=Dialect.SGLANG) != []
