"""VB rules where data cannot say it: several findings of one launch, two rules sharing a name,
the CLI's fix. Both sides of every version boundary are cases in tests/rules/cases/VB*.yaml."""

from __future__ import annotations

from specguard.models import Dialect, Severity
from specguard.rules.base import Example
from specguard.rules.version_bugs import (
    VB004_unknown_or_abbreviated_flag as VB004,
)
from specguard.rules.version_bugs import (
    VB011_env_var_of_other_releases as VB011,
)
from specguard.rules.version_bugs import VB060_ngram_flag_renamed_for_version as VB060
from tests.conftest import HF_CONFIGS, run_cli_json

EAGLE3 = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
          "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B")
NGRAM = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "NGRAM")


def fired(rule, *argv, gpu=None, version=None, target=None, dialect=Dialect.SGLANG):
    ctx = Example(argv=argv, gpu=gpu, sglang_version=version, target=target, dialect=dialect).context()
    return list(rule.check(ctx)) if rule.applies_to(ctx) else []


def test_vb004_unknown_ambiguous_abbreviated():
    [algo] = fired(VB004.RULE, *EAGLE3[:2], "--speculative-algo", "EAGLE3", version="0.5.23")
    # The parser already reads the abbreviation as the modeled flag (an Edit cannot respell it in
    # place), so the finding says what to write instead of fixing it.
    # Info: argparse runs the launch as written; only a future flag with the prefix would break it.
    assert algo.severity is Severity.INFO and algo.fix is None and "Write --speculative-algorithm" in algo.message
    [draft] = fired(VB004.RULE, *EAGLE3[:4], "--speculative-draft", "x", version="0.5.23")
    assert draft.severity is Severity.ERROR and "ambiguous option" in draft.message
    step, typo = fired(VB004.RULE, *EAGLE3, "--speculative-num-step", "3", "--enable-torch-compiled", version="0.5.23")
    assert step.severity is Severity.INFO and step.fix is None and "Write --speculative-num-steps" in step.message
    assert typo.fix is None and "did you mean --enable-torch-compile" in typo.message
    [pp] = fired(VB004.RULE, *EAGLE3, "--pp", "2", version="0.5.23")
    assert "--pp-size" in pp.message and pp.severity is Severity.ERROR
    # Every release has its own table (the history); renamed cuda-graph flags are VB003's.
    [older] = fired(VB004.RULE, *EAGLE3[:4], "--speculative-draft", "x", version="0.5.5")
    assert "SGLang 0.5.5 exits with 'ambiguous option" in older.message
    [abbreviated] = fired(VB004.RULE, *EAGLE3[:2], "--speculative-algo", "EAGLE3", version="0.4.6")
    assert abbreviated.severity is Severity.INFO
    assert fired(VB004.RULE, *EAGLE3, "--cuda-graph-max-bs", "8", version="0.5.23") == []
    assert fired(VB004.RULE, "--hf-checkpoint", "x", "--rollout-batch-size", "8", version="0.5.23",
                 dialect=Dialect.SLIME) == []


def test_cli_end_to_end_renamed_cuda_graph_flag_is_fixed_safely():
    llama = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
    argv = ("--model-path", llama, "--speculative-algorithm", "NGRAM", "--cuda-graph-max-bs", "8")
    code, doc = run_cli_json("check", "--offline", "--gpu", "H100", "--sglang-version", "0.5.23", "--", *argv)
    assert code == 1 and "VB003" in [f["code"] for f in doc["findings"] if f["severity"] == "error"]
    code, doc = run_cli_json("check", "--offline", "--fix", "--gpu", "H100", "--sglang-version", "0.5.23", "--", *argv)
    assert "--cuda-graph-max-bs" not in doc["argv"]
    assert doc["argv"][doc["argv"].index("--cuda-graph-max-bs-decode") + 1] == "8"
    assert not [f for f in doc["findings"] if f["code"] == "VB003" and not f["resolved"]]


def test_vb060_owns_the_old_ngram_spellings_at_0_5_23():
    # VB004 (the 0.5.23 parser table) defers to VB060 for these names, so each is reported once.
    argv = (*NGRAM, "--speculative-ngram-branch-length", "12")
    assert fired(VB004.RULE, *argv, version="0.5.23") == []
    assert fired(VB060.RULE, *argv, version="0.5.23")


def test_vb011_fix_removes_the_env_var():
    ctx = Example(argv=EAGLE3, env={"SGLANG_ENABLE_SPEC_V2": "1"}, sglang_version="0.5.23").context()
    [finding] = VB011.RULE.check(ctx)
    assert finding.fix is not None
    assert [(e.target, e.name, e.value) for e in finding.fix.edits] == [("env", "SGLANG_ENABLE_SPEC_V2", None)]
