"""Whether SGLang runs --speculative-adaptive is decided once (resolution) and every report agrees:
SP008 (switched off), SP001/SP002 (adaptive fills the parameters in) and RS001 (what SGLang sets)."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli_json

# Catalog facts, offline.
EAGLE3 = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
          "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B", "--speculative-adaptive")


# Typed, so releases that chose the automatic parameters first (0.5.11-0.5.13) do not give Llama its tree.
CHAIN = ("--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")


def _report(*extra: str, version: str = "0.5.23") -> tuple[dict, dict]:
    _, report = run_cli_json("check", "--offline", "--sglang-version", version, "--", *EAGLE3, *extra)
    by_code = {f["code"]: f for f in report["findings"]}
    return by_code, report


@pytest.mark.parametrize(
    ("extra", "version", "reason"),
    [
        (("--enable-multi-layer-eagle",), "0.5.23", "--enable-multi-layer-eagle"),  # the review's contradiction
        (("--speculative-eagle-topk", "4", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "8"), "0.5.23", "topk 1"),
        (("--enable-dp-attention", "--dp-size", "2", "--tp-size", "2"), "0.5.23", "attention DP"),
        (CHAIN, "0.5.11", "overlap scheduler"),
        # 0.5.13 chose Llama's automatic tree (topk 4) before judging adaptive (0.5.13 speculative_hook.py:111-131).
        ((), "0.5.13", "topk 1, not 4"),
    ],
    ids=["multi-layer-eagle", "tree", "attention-dp", "overlap-0.5.11", "auto-tree-0.5.13"],
)
def test_switched_off_everywhere(extra: tuple[str, ...], version: str, reason: str) -> None:
    findings, _ = _report(*extra, version=version)
    assert "SP008" in findings and reason in findings["SP008"]["message"]
    assert "adaptive speculative decoding runs a chain" not in findings.get("RS001", {}).get("message", "")


@pytest.mark.parametrize(("version", "extra"), [("0.5.12", CHAIN), ("0.5.14", ()), ("0.5.23", ())])
def test_running_everywhere(version: str, extra: tuple[str, ...]) -> None:
    findings, _ = _report(*extra, version=version)
    assert "SP008" not in findings
    assert "adaptive speculative decoding runs a chain" in findings["RS001"]["message"]
    assert "SP001" not in findings  # adaptive fills steps/topk/tokens in: nothing is partially set
