"""PL rules where data cannot say it: a whole launch through the CLI. Version boundaries, devices and
layouts are cases in tests/rules/cases/PL*.yaml."""

from __future__ import annotations

from tests.conftest import HF_CONFIGS, run_cli_json


def test_cli_dp_attention_with_standalone() -> None:
    llama = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
    args = ("--", "--model-path", llama, "--tp-size", "2", "--attn-dp-size", "2", "--speculative-algorithm",
            "STANDALONE", "--speculative-draft-model-path", llama, "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")
    code, doc = run_cli_json("check", "--offline", "--gpu", "H100", *args)
    assert code == 1
    (pl001,) = [f for f in doc["findings"] if f["code"] == "PL001"]
    assert pl001["severity"] == "error" and "--attn-dp-size" in pl001["message"]
    code, doc = run_cli_json("check", "--offline", "--gpu", "H100", "--unsafe-fixes", *args)
    assert "--attn-dp-size" not in doc["argv"]
    assert not any(f["code"] == "PL001" and not f["resolved"] for f in doc["findings"])
