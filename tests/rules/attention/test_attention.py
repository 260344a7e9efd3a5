"""AB rules where data cannot say it: a fix every rule accepts, the predicted default backend, the
CLI. The GPU gates and version boundaries are cases in tests/rules/cases/AB*.yaml."""

from __future__ import annotations

import pytest

from specguard import engine
from specguard.models import Applicability, Severity
from specguard.rules import ALL_RULES
from specguard.rules.attention.backends import default_backend
from specguard.rules.base import Example
from tests.conftest import HF_CONFIGS, run_cli_json

LLAMA = {"architectures": ["LlamaForCausalLM"]}
EAGLE3 = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
          "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B")
TREE = ("--speculative-num-steps", "5", "--speculative-eagle-topk", "8", "--speculative-num-draft-tokens", "32")
CHAIN = ("--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")


def test_ab002_fix_is_accepted_by_every_rule():
    ctx = Example(argv=(*EAGLE3, *TREE, "--page-size", "16", "--attention-backend", "fa4"), gpu="B200").context()
    outcome = engine.check(ALL_RULES, ctx, fix_level=Applicability.UNSAFE)
    after = ctx.with_spec(outcome.corrected)
    assert after.spec.get("attention_backend") == "flashinfer"
    assert not [f for f in engine.run_rules(ALL_RULES, after) if f.code.startswith("AB") and f.severity is Severity.ERROR]


@pytest.mark.parametrize(
    ("gpu", "version", "argv", "expected"),
    [
        ("H100", "0.5.23", (), "fa3"),
        ("H100", "0.5.23", TREE, "flashinfer"),
        ("H100", "0.5.4", (), "flashinfer"),  # decided after the automatic topk 4 before 0.5.5
        ("B200", "0.5.23", CHAIN, "trtllm_mha"),
        ("B200", "0.5.6", CHAIN, "flashinfer"),
        ("B200", "0.5.23", (), "flashinfer"),
        ("MI300X", "0.5.23", (), "aiter"),
        ("A100", "0.5.23", (), "flashinfer"),
        (None, "0.5.23", (), None),
    ],
)
def test_default_backend_prediction(gpu, version, argv, expected):
    ctx = Example(argv=(*EAGLE3, *argv), gpu=gpu, sglang_version=version, target=LLAMA).context()
    assert default_backend(ctx) == expected


DFLASH = ("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "DFLASH",
          "--speculative-draft-model-path", "z-lab/Qwen3-8B-DFlash-b16")


@pytest.mark.parametrize(
    ("version", "expected"),
    # DFLASH declares its topk 1 after the default backend is picked, so SM100 fell through to
    # flashinfer until 0.5.23 counted it as topk 1 (model_override_base.py:268-274, :312-325).
    [("0.5.22", "flashinfer"), ("0.5.23", "trtllm_mha")],
)
def test_dflash_default_backend_on_sm100(version, expected):
    ctx = Example(argv=DFLASH, gpu="B200", sglang_version=version, target=LLAMA).context()
    assert default_backend(ctx) == expected


def test_cli_end_to_end_fa3_on_blackwell():
    llama = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
    code, doc = run_cli_json("check", "--offline", "--gpu", "B200", "--sglang-version", "0.5.23", "--",
                             "--model-path", llama, "--speculative-algorithm", "NGRAM", "--attention-backend", "fa3")
    assert code == 1
    assert [f["code"] for f in doc["findings"] if f["severity"] == "error"] == ["AB001"]
    code, doc = run_cli_json("check", "--offline", "--unsafe-fixes", "--gpu", "B200", "--sglang-version", "0.5.23", "--",
                             "--model-path", llama, "--speculative-algorithm", "NGRAM", "--attention-backend", "fa3")
    assert code == 0
    assert doc["argv"][doc["argv"].index("--attention-backend") + 1] == "flashinfer"
