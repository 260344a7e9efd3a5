"""SP rules beyond their documented examples: edges, versions, dialects, unknown facts."""

from __future__ import annotations

import pytest

from specguard import engine
from specguard.models import Applicability, Dialect, Severity
from specguard.rules import ALL_RULES
from specguard.rules.base import Example
from specguard.rules.spec_params import (
    SP001_spec_params_partially_set as SP001,
)
from specguard.rules.spec_params import (
    SP002_draft_tokens_rewritten_for_chain as SP002,
)
from specguard.rules.spec_params import (
    SP003_draft_tokens_exceed_tree as SP003,
)
from specguard.rules.spec_params import (
    SP004_spec_v2_env_with_tree as SP004,
)
from specguard.rules.spec_params import (
    SP005_spec_params_out_of_range as SP005,
)
from specguard.rules.spec_params import (
    SP006_spec_flags_without_algorithm as SP006,
)
from specguard.rules.spec_params import (
    SP007_ngram_topk_overridden as SP007,
)
from specguard.rules.spec_params import (
    SP008_adaptive_spec_unsupported as SP008,
)
from specguard.rules.spec_params import (
    SP009_rejection_sampling_unsupported as SP009,
)
from specguard.rules.spec_params import (
    SP010_block_verification_unsupported as SP010,
)
from specguard.rules.spec_params import (
    SP011_draft_window_invalid as SP011,
)
from specguard.rules.spec_params import (
    SP012_ngram_external_corpus_budget as SP012,
)
from specguard.rules.spec_params._shared import tree_capacity
from tests.conftest import HF_CONFIGS, run_cli_json

LLAMA_ARCH = {"architectures": ["LlamaForCausalLM"]}
QWEN_ARCH = {"architectures": ["Qwen3ForCausalLM"]}
BASE = ("--model-path", "m", "--speculative-draft-model-path", "d")


def findings(module, *argv: str, **kwargs):
    ctx = Example(argv=argv, **kwargs).context()
    if not module.RULE.applies_to(ctx):
        return []
    return list(module.RULE.check(ctx))


def eagle(*extra: str, algorithm: str = "EAGLE") -> tuple[str, ...]:
    return (*BASE, "--speculative-algorithm", algorithm, *extra)


def params(steps, topk, tokens) -> tuple[str, ...]:
    out: list[str] = []
    for flag, value in (("--speculative-num-steps", steps), ("--speculative-eagle-topk", topk),
                        ("--speculative-num-draft-tokens", tokens)):
        if value is not None:
            out += [flag, str(value)]
    return tuple(out)


# ----------------------------------------------------------------------------- SP001


@pytest.mark.parametrize(
    ("steps", "topk", "tokens", "severity"),
    [
        (None, 1, None, Severity.ERROR),  # P15
        (None, None, 8, Severity.ERROR),  # P15
        (None, 4, 8, Severity.ERROR),  # P15
        (3, None, None, Severity.ERROR),  # P16
        (3, None, 4, Severity.ERROR),  # P16
        (3, 4, None, Severity.WARNING),  # P18
    ],
)
def test_sp001_partial_params(steps, topk, tokens, severity) -> None:
    found = findings(SP001, *eagle(*params(steps, topk, tokens)))
    assert [f.severity for f in found] == [severity]
    assert found[0].fix is not None and found[0].fix.applicability is Applicability.UNSAFE


@pytest.mark.parametrize(("steps", "topk", "tokens"), [(None, None, None), (3, 1, 4), (3, 1, None), (5, 4, 8)])
def test_sp001_quiet_when_all_or_nothing(steps, topk, tokens) -> None:
    assert findings(SP001, *eagle(*params(steps, topk, tokens))) == []


def test_sp001_fix_for_tree_gives_a_fillable_tree() -> None:
    (finding,) = findings(SP001, *eagle(*params(None, 4, 64)))
    values = {e.name: e.value for e in finding.fix.edits}
    assert tree_capacity(values["--speculative-num-steps"], 4) >= 63


def test_sp001_ignores_ngram_dflash_and_adaptive() -> None:
    assert findings(SP001, *eagle("--speculative-num-steps", "3", algorithm="NGRAM")) == []
    assert findings(SP001, *eagle("--speculative-num-steps", "3", algorithm="DFLASH")) == []
    assert findings(SP001, *eagle("--speculative-adaptive", "--speculative-num-steps", "3")) == []


def test_sp001_slime_spelling() -> None:
    argv = ("--hf-checkpoint", "m", "--sglang-speculative-algorithm", "EAGLE", "--sglang-speculative-num-steps", "3")
    (finding,) = findings(SP001, *argv, dialect=Dialect.SLIME)
    assert "--sglang-speculative-num-steps" in finding.message and "--sglang-speculative-eagle-topk" in finding.message


# ----------------------------------------------------------------------------- SP002


def test_sp002_rewrite_and_safe_fix() -> None:
    (finding,) = findings(SP002, *eagle(*params(3, 1, 16)))
    assert finding.fix.applicability is Applicability.SAFE
    assert [(e.name, e.value) for e in finding.fix.edits] == [("--speculative-num-draft-tokens", 4)]
    assert findings(SP002, *eagle(*params(3, 1, 4))) == []
    assert findings(SP002, *eagle(*params(3, 2, 16))) == []


def test_sp002_not_for_sgl_jax() -> None:
    ctx = Example(argv=eagle(*params(3, 1, 16)), dialect=Dialect.SGL_JAX).context()
    assert not SP002.RULE.applies_to(ctx)


# ----------------------------------------------------------------------------- SP003


@pytest.mark.parametrize(("steps", "topk"), [(1, 2), (2, 4), (3, 4), (5, 8)])
def test_sp003_capacity_edges(steps, topk) -> None:
    capacity = topk + (steps - 1) * topk * topk
    assert findings(SP003, *eagle(*params(steps, topk, capacity + 1))) == []
    (finding,) = findings(SP003, *eagle(*params(steps, topk, capacity + 2)))
    assert [(e.name, e.value) for e in finding.fix.edits] == [("--speculative-num-draft-tokens", capacity + 1)]


def test_sp003_chain_only_in_sgl_jax() -> None:
    assert findings(SP003, *eagle(*params(3, 1, 16))) == []
    assert findings(SP003, *eagle(*params(3, 1, 16)), dialect=Dialect.SGL_JAX)


# ----------------------------------------------------------------------------- SP004

V2 = {"SGLANG_ENABLE_SPEC_V2": "1"}


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        ("0.5.4", Severity.INFO),  # not there yet: ignored
        ("0.5.5", Severity.ERROR),  # no check, V2 cannot run topk 4
        ("0.5.6", Severity.ERROR),
        ("0.5.7", Severity.ERROR),  # ValueError at argument time
        ("0.5.10", Severity.ERROR),
        ("0.5.11", Severity.INFO),  # explicit topk > 1 falls back to V1
        ("0.5.12", Severity.INFO),
        ("0.5.14", Severity.INFO),  # removed, warned
        ("0.5.20", Severity.INFO),
        ("0.5.21", Severity.INFO),  # gone without a trace
        ("0.5.23", Severity.INFO),
    ],
)
def test_sp004_explicit_topk_by_version(version, severity) -> None:
    found = findings(SP004, *eagle(*params(3, 4, 8)), env=V2, sglang_version=version)
    assert [f.severity for f in found] == [severity]


def test_sp004_quiet_in_0_5_13_when_trees_run_on_v2() -> None:
    assert findings(SP004, *eagle(*params(3, 4, 8)), env=V2, sglang_version="0.5.13") == []


def test_sp004_auto_topk_slips_through() -> None:
    for version in ("0.5.8", "0.5.11", "0.5.12"):
        env = V2 if version == "0.5.8" else {}
        (finding,) = findings(SP004, *eagle(), env=env, target=LLAMA_ARCH, sglang_version=version)
        assert finding.severity is Severity.ERROR and "auto-chooses 4" in finding.message
    # Qwen's automatic topk is 1; an unknown target stays quiet.
    assert findings(SP004, *eagle(), env=V2, target=QWEN_ARCH, sglang_version="0.5.8") == []
    assert findings(SP004, *eagle(), env=V2, sglang_version="0.5.8") == []
    # 0.5.11 with the env var explicitly off runs V1.
    assert findings(SP004, *eagle(), env={"SGLANG_ENABLE_SPEC_V2": "0"}, target=LLAMA_ARCH, sglang_version="0.5.11") == []


def test_sp004_algorithms_by_version() -> None:
    argv = eagle(*params(3, 4, 8), algorithm="EAGLE3")
    # EAGLE3 shares EAGLE's worker factory, so the variable puts it on V2 from 0.5.5 (issue 14077).
    assert [f.severity for f in findings(SP004, *argv, env=V2, sglang_version="0.5.4")] == [Severity.INFO]  # no V2 yet
    assert findings(SP004, *argv, env=V2, sglang_version="0.5.5")
    assert findings(SP004, *argv, env=V2, sglang_version="0.5.6")
    assert findings(SP004, *argv, env=V2, sglang_version="0.5.7")
    standalone = eagle(*params(3, 4, 8), algorithm="STANDALONE")
    # STANDALONE joins the spec-v2 branch in 0.5.8 (0.5.8 server_args.py:2141; 0.5.7 :2001 names EAGLE and
    # EAGLE3 only). This test said 0.5.9 before the wheels were read for sglang_facts.changes.SPEC_V2_STANDALONE.
    assert findings(SP004, *standalone, env=V2, sglang_version="0.5.7") == []
    assert findings(SP004, *standalone, env=V2, sglang_version="0.5.8")
    assert findings(SP004, *standalone, env=V2, sglang_version="0.5.9")


def test_sp004_fix_makes_a_chain_and_ignored_var_is_dropped_safely() -> None:
    ctx = Example(argv=eagle(*params(3, 4, 8)), env=V2, sglang_version="0.5.8").context()
    outcome = engine.check(ALL_RULES, ctx, fix_level=Applicability.UNSAFE)
    corrected = outcome.corrected
    assert corrected.get("speculative_eagle_topk") == 1 and corrected.get("speculative_num_draft_tokens") == 4
    (info,) = findings(SP004, *eagle(*params(3, 1, 4)), env=V2)
    assert info.fix.applicability is Applicability.SAFE and info.fix.edits[0].target == "env"


# ----------------------------------------------------------------------------- SP005


def test_sp005_ranges() -> None:
    assert findings(SP005, *eagle(*params(1, 1, 2))) == []
    (finding,) = findings(SP005, *eagle(*params(3, -2, 8)))
    assert "--speculative-eagle-topk -2" in finding.message
    values = {e.name: e.value for e in finding.fix.edits}
    assert values == {"--speculative-num-steps": 3, "--speculative-eagle-topk": 1, "--speculative-num-draft-tokens": 4}


def test_sp005_chain_draft_tokens_are_rewritten_not_broken() -> None:
    # sglang#28312: steps 1, topk 1, draft tokens 1. SGLang rewrites the draft tokens to steps + 1
    # (SP002 warns); SP005 has no error to add.
    assert findings(SP005, *eagle(*params(1, 1, 1))) == []
    assert findings(SP002, *eagle(*params(1, 1, 1)))
    # A tree still needs two draft tokens, and zero steps is still out of range.
    assert findings(SP005, *eagle(*params(2, 2, 1)))
    assert findings(SP005, *eagle(*params(0, 1, 1)))


# ----------------------------------------------------------------------------- SP006 / SP007


def test_sp006_ignored_flags_safe_removal() -> None:
    (finding,) = findings(SP006, "--model-path", "m", "--speculative-num-steps", "3")
    assert finding.fix.applicability is Applicability.SAFE
    assert findings(SP006, "--model-path", "m") == []


def test_sp007_topk_matching_breadth_is_quiet() -> None:
    assert findings(SP007, *eagle("--speculative-eagle-topk", "10", algorithm="NGRAM")) == []
    assert findings(SP007, *eagle("--speculative-eagle-topk", "3", algorithm="NGRAM"))


# ----------------------------------------------------------------------------- SP008-SP012


def test_sp008_disabled_cases_and_candidates_by_version() -> None:
    (off,) = findings(SP008, *eagle("--speculative-adaptive", *params(3, 4, 8)))
    assert off.severity is Severity.WARNING and off.fix.applicability is Applicability.SAFE
    assert findings(SP008, *eagle("--speculative-adaptive", *params(5, 1, 6)), sglang_version="0.5.20") == []
    assert findings(SP008, *eagle("--speculative-adaptive", *params(5, 1, 6)), sglang_version="0.5.19")
    assert findings(SP008, *eagle("--speculative-adaptive", *params(4, 1, 5), "--speculative-adaptive-config", "c.json")) == []


def test_sp009_auto_topk_and_thresholds() -> None:
    rs = ("--speculative-use-rejection-sampling",)
    (topk,) = findings(SP009, *eagle(*rs), target=LLAMA_ARCH)
    assert "automatic choice" in topk.message
    assert findings(SP009, *eagle(*rs)) == []  # unknown target: unknown topk
    (threshold,) = findings(SP009, *eagle(*rs, *params(3, 1, 4), "--speculative-accept-threshold-single", "0.5"))
    assert threshold.flags == ("--speculative-accept-threshold-single",)
    assert findings(SP009, *eagle(*rs, algorithm="STANDALONE"))
    assert findings(SP009, *eagle(*rs, algorithm="STANDALONE"), sglang_version="0.5.21") == []


def test_sp010_device_and_no_algorithm() -> None:
    block = "--speculative-use-block-verification"
    assert findings(SP010, "--model-path", "m", block)
    assert findings(SP010, *eagle(block, "--device", "xpu"))
    assert findings(SP010, *eagle(block)) == []  # device unknown
    assert findings(SP010, *eagle(block), gpu="H100") == []


def test_sp011_window_and_sink() -> None:
    assert findings(SP011, *eagle("--speculative-draft-sink-size", "4"))
    assert findings(SP011, *eagle("--speculative-draft-sink-size", "4"), sglang_version="0.5.20") == []
    (ignored,) = findings(SP011, *eagle("--speculative-draft-window-size", "512", algorithm="STANDALONE"))
    assert ignored.severity is Severity.WARNING


def test_sp012_budget_edges() -> None:
    corpus = ("--speculative-ngram-external-corpus-path", "c")
    ngram = lambda *x: eagle(*corpus, *x, algorithm="NGRAM")
    assert findings(SP012, *ngram("--speculative-ngram-external-sam-budget", "11")) == []
    assert findings(SP012, *ngram("--speculative-ngram-external-sam-budget", "12"))
    assert findings(SP012, *ngram("--speculative-num-draft-tokens", "5", "--speculative-ngram-external-sam-budget", "4")) == []
    assert findings(SP012, *ngram("--speculative-ngram-external-sam-budget", "4"), sglang_version="0.5.10") == []


# ----------------------------------------------------------------------------- end to end


def test_cli_reports_and_fixes_partial_params() -> None:
    llama = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
    args = ("--", "--model-path", llama, "--speculative-algorithm", "NGRAM", "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "3")
    code, doc = run_cli_json("check", "--fix", "--offline", *args)
    sp007 = [f for f in doc["findings"] if f["code"] == "SP007"]
    assert sp007 and sp007[0]["applied"]
    assert "--speculative-eagle-topk" not in doc["argv"]
    args = ("--", "--model-path", llama, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3")
    code, doc = run_cli_json("check", "--offline", *args)
    assert code == 1 and any(f["code"] == "SP001" and f["severity"] == "error" for f in doc["findings"])


# SP060: NGRAM trie capacity against its depth (issue 36495).
from specguard.rules.spec_params import (
    SP060_ngram_capacity_not_above_trie_depth as SP060,
)

NGRAM = ("--model-path", "m", "--speculative-algorithm", "NGRAM")


@pytest.mark.parametrize(("capacity", "depth", "expected"), [("4", "4", True), ("3", "4", True), ("5", "4", False), ("18", None, True), ("19", None, False), (None, "4", False)])
def test_sp060_capacity_must_exceed_depth(capacity, depth, expected):
    argv = [*NGRAM]
    if capacity is not None:
        argv += ["--speculative-ngram-capacity", capacity]
    if depth is not None:
        argv += ["--speculative-ngram-max-trie-depth", depth]
    assert bool(findings(SP060, *argv, sglang_version="0.5.18")) is expected


def test_sp060_scope():
    argv = (*NGRAM, "--speculative-ngram-capacity", "4", "--speculative-ngram-max-trie-depth", "4")
    assert findings(SP060, *argv, sglang_version="0.5.9") == []  # branch-length era, not verified
    assert findings(SP060, *argv, sglang_version="0.5.23")
    eagle_argv = (*eagle(*params(3, 1, 4)), "--speculative-ngram-capacity", "4")
    assert findings(SP060, *eagle_argv, sglang_version="0.5.23") == []


def test_sp008_0_5_11_turns_adaptive_off_under_the_default_spec_v2() -> None:
    argv = (*eagle(*params(3, 1, 4)), "--speculative-adaptive")
    [finding] = findings(SP008, *argv, sglang_version="0.5.11")
    assert finding.severity is Severity.WARNING and "V1 worker" in finding.message
    assert findings(SP008, *argv, env={"SGLANG_ENABLE_SPEC_V2": "0"}, sglang_version="0.5.11") == []
    assert findings(SP008, *argv, "--disable-overlap-schedule", sglang_version="0.5.11") == []
    assert findings(SP008, *argv, sglang_version="0.5.12") == []
    assert findings(SP008, *argv, sglang_version="0.5.10") == []  # no such flag yet (VB rules' matter)


def test_sp008_candidate_steps_only_from_0_5_18() -> None:
    argv = (*eagle(*params(4, 1, 5)), "--speculative-adaptive")
    assert findings(SP008, *argv, sglang_version="0.5.17") == []
    assert findings(SP008, *argv, sglang_version="0.5.18")
