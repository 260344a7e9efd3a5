"""VB rules: both sides of every version boundary."""

from __future__ import annotations

import pytest

from specguard.models import Dialect, Severity
from specguard.rules.base import Example
from specguard.rules.version_bugs import (
    VB001_flashinfer_draft_graph_padding_crash as VB001,
)
from specguard.rules.version_bugs import (
    VB002_graph_padding_flag_ignored_for_spec as VB002,
)
from specguard.rules.version_bugs import (
    VB003_cuda_graph_flag_renamed as VB003,
)
from specguard.rules.version_bugs import (
    VB004_unknown_or_abbreviated_flag as VB004,
)
from specguard.rules.version_bugs import (
    VB005_flag_renamed_for_version as VB005,
)
from specguard.rules.version_bugs import (
    VB006_graph_padding_off_with_torch_compile as VB006,
)
from specguard.rules.version_bugs import (
    VB010_flag_of_other_releases as VB010,
)
from specguard.rules.version_bugs import (
    VB011_env_var_of_other_releases as VB011,
)
from specguard.rules.version_bugs import (
    VB012_architecture_not_in_release as VB012,
)
from tests.conftest import HF_CONFIGS, run_cli_json

LLAMA = {"architectures": ["LlamaForCausalLM"]}
EAGLE3 = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
          "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B")
CHAIN = ("--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")


def fired(rule, *argv, gpu=None, version=None, target=None, dialect=Dialect.SGLANG):
    ctx = Example(argv=argv, gpu=gpu, sglang_version=version, target=target, dialect=dialect).context()
    return list(rule.check(ctx)) if rule.applies_to(ctx) else []


@pytest.mark.parametrize(("version", "expected"), [("0.4.9.post2", True), ("0.5.2", True), ("0.5.3", False), ("0.5.23", False)])
def test_vb001_fixed_in_0_5_3(version, expected):
    argv = (*EAGLE3, *CHAIN, "--attention-backend", "flashinfer")
    assert bool(fired(VB001.RULE, *argv, gpu="H100", version=version)) is expected


def test_vb001_default_backend_and_fixes():
    # Llama on Hopper before 0.5.5: the automatic topk 4 makes FlashInfer the default.
    [hopper] = fired(VB001.RULE, *EAGLE3, gpu="H100", version="0.5.1", target=LLAMA)
    assert hopper.fix.edits[0].value == "fa3"
    # topk 1, page 1 on Hopper: fa3 is the default, nothing to say.
    assert fired(VB001.RULE, *EAGLE3, *CHAIN, gpu="H100", version="0.5.1", target=LLAMA) == []
    [ampere] = fired(VB001.RULE, *EAGLE3, *CHAIN, gpu="A100", version="0.5.1")
    assert ampere.fix.edits[0].value == "triton"
    # 0.5.2 with topk > 1 and pages: only flashinfer is accepted, so widen the capture list instead.
    tree = ("--speculative-num-steps", "5", "--speculative-eagle-topk", "8", "--speculative-num-draft-tokens", "32")
    [paged] = fired(VB001.RULE, *EAGLE3, *tree, "--page-size", "16", "--attention-backend", "flashinfer",
                    gpu="A100", version="0.5.2")
    assert paged.fix.edits[0].name == "--cuda-graph-bs" and paged.fix.edits[0].value[-1] == "160"
    [unknown] = fired(VB001.RULE, *EAGLE3, *CHAIN, version="0.5.1")
    assert unknown.severity is Severity.INFO
    assert fired(VB001.RULE, *EAGLE3, *CHAIN, "--disable-cuda-graph", gpu="A100", version="0.5.1") == []


@pytest.mark.parametrize(("version", "expected"), [("0.5.2", True), ("0.5.3", False)])
def test_vb002_boundary(version, expected):
    argv = (*EAGLE3, *CHAIN, "--disable-cuda-graph-padding")
    assert bool(fired(VB002.RULE, *argv, version=version)) is expected
    assert fired(VB002.RULE, *argv, "--cuda-graph-bs", "1", "2", "4", version=version) == []


@pytest.mark.parametrize(
    ("flag", "value", "version", "severity", "rename"),
    [
        ("--cuda-graph-max-bs", ("8",), "0.5.13", None, None),
        ("--cuda-graph-max-bs", ("8",), "0.5.14", Severity.INFO, "--cuda-graph-max-bs-decode"),
        ("--cuda-graph-max-bs", ("8",), "0.5.19", Severity.INFO, "--cuda-graph-max-bs-decode"),
        ("--cuda-graph-max-bs", ("8",), "0.5.20", Severity.ERROR, "--cuda-graph-max-bs-decode"),
        ("--cuda-graph-bs", ("1", "2", "4"), "0.5.23", Severity.ERROR, "--cuda-graph-bs-decode"),
        ("--cuda-graph-max-bs-decode", ("8",), "0.5.13", Severity.ERROR, "--cuda-graph-max-bs"),
        ("--cuda-graph-max-bs-decode", ("8",), "0.5.14", None, None),
        ("--cuda-graph-bs-decode", ("1", "2"), "0.5.4", Severity.ERROR, "--cuda-graph-bs"),
    ],
)
def test_vb003_boundaries(flag, value, version, severity, rename):
    findings = fired(VB003.RULE, *EAGLE3, *CHAIN, flag, *value, version=version)
    if severity is None:
        assert findings == []
        return
    [finding] = findings
    assert finding.severity is severity
    edits = {e.name: e.value for e in finding.fix.edits}
    assert edits == {flag: None, rename: value[0] if len(value) == 1 else value}


def test_vb003_slime_spelling():
    [finding] = fired(VB003.RULE, "--hf-checkpoint", "x", "--sglang-cuda-graph-max-bs", "8", version="0.5.23",
                      dialect=Dialect.SLIME)
    assert "--sglang-cuda-graph-max-bs-decode" in finding.message


def test_vb004_unknown_ambiguous_abbreviated():
    [algo] = fired(VB004.RULE, *EAGLE3[:2], "--speculative-algo", "EAGLE3", version="0.5.23")
    # The parser already reads the abbreviation as the modeled flag (an Edit cannot respell it in
    # place), so the finding says what to write instead of fixing it.
    assert algo.severity is Severity.WARNING and algo.fix is None and "Write --speculative-algorithm" in algo.message
    [draft] = fired(VB004.RULE, *EAGLE3[:4], "--speculative-draft", "x", version="0.5.23")
    assert draft.severity is Severity.ERROR and "ambiguous option" in draft.message
    step, typo = fired(VB004.RULE, *EAGLE3, "--speculative-num-step", "3", "--enable-torch-compiled", version="0.5.23")
    assert step.severity is Severity.WARNING and step.fix is None and "Write --speculative-num-steps" in step.message
    assert typo.fix is None and "did you mean --enable-torch-compile" in typo.message
    [pp] = fired(VB004.RULE, *EAGLE3, "--pp", "2", version="0.5.23")
    assert "--pp-size" in pp.message and pp.severity is Severity.ERROR
    # Every release has its own table (the history); renamed cuda-graph flags are VB003's.
    [older] = fired(VB004.RULE, *EAGLE3[:4], "--speculative-draft", "x", version="0.5.5")
    assert "SGLang 0.5.5 exits with 'ambiguous option" in older.message
    [abbreviated] = fired(VB004.RULE, *EAGLE3[:2], "--speculative-algo", "EAGLE3", version="0.4.6")
    assert abbreviated.severity is Severity.WARNING
    assert fired(VB004.RULE, *EAGLE3, "--cuda-graph-max-bs", "8", version="0.5.23") == []
    assert fired(VB004.RULE, "--hf-checkpoint", "x", "--rollout-batch-size", "8", version="0.5.23",
                 dialect=Dialect.SLIME) == []


@pytest.mark.parametrize(
    ("flag", "version", "severity"),
    [
        ("--speculative-dflash-draft-window-size", "0.5.10", Severity.ERROR),
        ("--speculative-dflash-draft-window-size", "0.5.11", None),
        ("--speculative-dflash-draft-window-size", "0.5.13", None),
        ("--speculative-dflash-draft-window-size", "0.5.14", Severity.INFO),
        ("--speculative-dflash-draft-window-size", "0.5.20", Severity.ERROR),
        ("--speculative-draft-window-size", "0.5.11", Severity.ERROR),
        ("--speculative-draft-window-size", "0.5.12", None),
    ],
)
def test_vb005_draft_window(flag, version, severity):
    findings = fired(VB005.RULE, "--model-path", "m", "--speculative-algorithm", "DFLASH",
                     "--speculative-draft-model-path", "d", flag, "2048", version=version)
    assert [f.severity for f in findings] == ([severity] if severity else [])


def test_vb005_attn_dp_size():
    [old] = fired(VB005.RULE, *EAGLE3, "--tp-size", "4", "--attn-dp-size", "4", version="0.5.21")
    assert {e.name: e.value for e in old.fix.edits} == {"--attn-dp-size": None, "--dp-size": 4, "--enable-dp-attention": True}
    assert fired(VB005.RULE, *EAGLE3, "--tp-size", "4", "--attn-dp-size", "4", version="0.5.22") == []
    [new] = fired(VB005.RULE, *EAGLE3, "--tp-size", "4", "--dp-size", "4", "--enable-dp-attention", version="0.5.22")
    assert new.severity is Severity.INFO
    assert fired(VB005.RULE, *EAGLE3, "--tp-size", "4", "--dp-size", "4", "--enable-dp-attention", version="0.5.21") == []


@pytest.mark.parametrize(("version", "severity"), [("0.5.11", Severity.WARNING), ("0.5.12", Severity.ERROR)])
def test_vb006_boundary(version, severity):
    [finding] = fired(VB006.RULE, *EAGLE3, "--disable-cuda-graph-padding", "--enable-torch-compile", version=version)
    assert finding.severity is severity


def test_cli_end_to_end_renamed_cuda_graph_flag_is_fixed_safely():
    llama = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
    argv = ("--model-path", llama, "--speculative-algorithm", "NGRAM", "--cuda-graph-max-bs", "8")
    code, doc = run_cli_json("check", "--offline", "--gpu", "H100", "--sglang-version", "0.5.23", "--", *argv)
    assert code == 1 and "VB003" in [f["code"] for f in doc["findings"] if f["severity"] == "error"]
    code, doc = run_cli_json("check", "--offline", "--fix", "--gpu", "H100", "--sglang-version", "0.5.23", "--", *argv)
    assert "--cuda-graph-max-bs" not in doc["argv"]
    assert doc["argv"][doc["argv"].index("--cuda-graph-max-bs-decode") + 1] == "8"
    assert not [f for f in doc["findings"] if f["code"] == "VB003" and not f["applied"]]


# VB060: NGRAM's trie flags on both sides of 0.5.10.
from specguard.rules.version_bugs import VB060_ngram_flag_renamed_for_version as VB060

NGRAM = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "NGRAM")


@pytest.mark.parametrize(("version", "expected"), [("0.5.3", False), ("0.5.9", False), ("0.5.10", True), ("0.5.23", True)])
def test_vb060_branch_length_and_windows_gone_in_0_5_10(version, expected):
    for flag in ("--speculative-ngram-branch-length", "--speculative-ngram-min-match-window-size", "--speculative-ngram-max-match-window-size"):
        assert bool(fired(VB060.RULE, *NGRAM, flag, "12", version=version)) is expected, flag


@pytest.mark.parametrize(("version", "expected"), [("0.5.3", True), ("0.5.9", True), ("0.5.10", False), ("0.5.23", False)])
def test_vb060_max_trie_depth_new_in_0_5_10(version, expected):
    assert bool(fired(VB060.RULE, *NGRAM, "--speculative-ngram-max-trie-depth", "12", version=version)) is expected


def test_vb060_respells_the_depth_and_quiet_before_ngram_existed():
    [finding] = fired(VB060.RULE, *NGRAM, "--speculative-ngram-branch-length", "12", version="0.5.12")
    assert [(e.name, e.value) for e in finding.fix.edits] == [("--speculative-ngram-branch-length", None), ("--speculative-ngram-max-trie-depth", "12")]
    assert fired(VB060.RULE, *NGRAM, "--speculative-ngram-max-trie-depth", "12", version="0.5.2") == []


def test_vb060_owns_the_old_ngram_spellings_at_0_5_23():
    # VB004 (the 0.5.23 parser table) defers to VB060 for these names, so each is reported once.
    argv = (*NGRAM, "--speculative-ngram-branch-length", "12")
    assert fired(VB004.RULE, *argv, version="0.5.23") == []
    assert fired(VB060.RULE, *argv, version="0.5.23")


def test_vb010_names_the_releases_that_have_a_flag():
    [gone] = fired(VB010.RULE, *EAGLE3[:2], "--enable-flashinfer-mla", version="0.5.23")
    assert "exists in 0.4.3 to 0.4.7; 0.4.7.post1 removed it" in gone.message and gone.fix is None
    [renamed] = fired(VB010.RULE, *EAGLE3[:2], "--nsa-prefill-backend", "fa3", version="0.5.20")
    assert "0.5.20 renamed it --dsa-prefill-backend" in renamed.message
    assert renamed.fix.edits[1].name == "--dsa-prefill-backend" and renamed.fix.edits[1].value == "fa3"
    # The other direction: a new name on an older release gets the older name.
    [newer] = fired(VB010.RULE, *EAGLE3[:2], "--dsa-prefill-backend", "fa3", version="0.5.10")
    assert "it is the later name of --nsa-prefill-backend" in newer.message
    assert newer.fix.edits[1].name == "--nsa-prefill-backend"
    [early] = fired(VB010.RULE, *EAGLE3[:2], "--attn-dp-size", "2", version="0.5.5")
    assert "exists from 0.5.22. argparse exits" in early.message
    # Accepted where the flag exists, and flags no release knows are VB004's.
    assert fired(VB010.RULE, *EAGLE3[:2], "--enable-flashinfer-mla", version="0.4.5") == []
    assert fired(VB010.RULE, *EAGLE3[:2], "--no-such-flag", version="0.5.23") == []
    # slime spelling: --sglang-X is SGLang's --X.
    [slime] = fired(VB010.RULE, "--hf-checkpoint", "x", "--sglang-enable-flashinfer-mla", version="0.5.23", dialect=Dialect.SLIME)
    assert slime.message.startswith("--sglang-enable-flashinfer-mla is not a flag of SGLang 0.5.23")


def test_vb011_env_var_a_release_does_not_read():
    ctx = Example(argv=EAGLE3, env={"SGLANG_ENABLE_SPEC_V2": "1"}, sglang_version="0.5.23").context()
    [finding] = VB011.RULE.check(ctx)
    assert "does not read SGLANG_ENABLE_SPEC_V2: releases 0.5.4.post1 to 0.5.20 do" in finding.message
    assert finding.fix.edits[0].target == "env"
    for version in ("0.5.11", "0.5.20"):
        assert list(VB011.RULE.check(Example(argv=EAGLE3, env={"SGLANG_ENABLE_SPEC_V2": "1"}, sglang_version=version).context())) == []
    # A name no release reads is not judged.
    assert list(VB011.RULE.check(Example(argv=EAGLE3, env={"SGLANG_NOT_A_VAR": "1"}, sglang_version="0.5.23").context())) == []


def _arch_findings(version, target=None, draft=None):
    ctx = Example(argv=EAGLE3, target=target, draft=draft, sglang_version=version).context()
    return list(VB012.RULE.check(ctx))


def test_vb012_draft_class_by_name_and_first_release():
    [early] = _arch_findings("0.4.4", draft={"architectures": ["LlamaForCausalLMEagle3"]})
    assert "has no LlamaForCausalLMEagle3" in early.message and "it arrives in 0.4.4.post2" in early.message
    assert _arch_findings("0.4.4.post2", draft={"architectures": ["LlamaForCausalLMEagle3"]}) == []
    # A draft class by its name that no release registers.
    [never] = _arch_findings("0.5.23", draft={"architectures": ["Qwen3ForCausalLMEagle3"]})
    assert "no release up to 0.5.23 has it" in never.message
    # A target class used as a draft is SGLang's to rewrite (MTP/NextN): not judged.
    assert _arch_findings("0.4.0", draft={"architectures": ["DeepseekV3ForCausalLM"]}) == []


def test_vb012_target_only_before_the_transformers_fallback():
    [old] = _arch_findings("0.4.0", target={"architectures": ["Qwen3ForCausalLM"]})
    assert "target" in old.message and "it arrives in" in old.message
    # From the release that registers TransformersForCausalLM an unknown target may still load.
    assert _arch_findings("0.5.23", target={"architectures": ["NoSuchModelForCausalLM"]}) == []
    assert _arch_findings("0.4.0", target={"architectures": ["LlamaForCausalLM"]}) == []
