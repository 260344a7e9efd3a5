"""DM020 (a draft declaring zero MTP layers) and SP020 (multi-layer EAGLE needs a chain) beyond
their documented examples."""

from __future__ import annotations

import pytest

from specguard.rules.base import Example
from specguard.rules.draft_model import DM020_draft_declares_zero_mtp_layers as DM020
from specguard.rules.spec_params import SP020_multi_layer_eagle_not_a_chain as SP020

HEAD = ("--model-path", "m", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d")


def findings(module, *argv: str, **kwargs):
    ctx = Example(argv=argv, **kwargs).context()
    if not module.RULE.applies_to(ctx):
        return []
    return list(module.RULE.check(ctx))


@pytest.mark.parametrize("version,fires", [("0.5.5", True), ("0.5.12.post1", True), ("0.5.13", False), ("0.5.23", False)])
def test_dm020_release_window(version: str, fires: bool) -> None:
    assert bool(findings(DM020, *HEAD, draft={"num_nextn_predict_layers": 0}, sglang_version=version)) is fires


def test_dm020_quiet_for_real_mtp_drafts_and_unknown_keys() -> None:
    assert findings(DM020, *HEAD, draft={"num_nextn_predict_layers": 1}, sglang_version="0.5.12") == []
    assert findings(DM020, *HEAD, draft={}, sglang_version="0.5.12") == []
    # No separate draft: the target's own MTP layers are used.
    assert findings(DM020, "--model-path", "m", "--speculative-algorithm", "EAGLE", draft={"num_nextn_predict_layers": 0}, sglang_version="0.5.12") == []


MLE = ("--model-path", "m", "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "d", "--enable-multi-layer-eagle")


def test_sp020_typed_tree_and_auto_tree() -> None:
    (typed,) = findings(SP020, *MLE, "--speculative-num-steps", "3", "--speculative-eagle-topk", "2",
                        "--speculative-num-draft-tokens", "6", target={"architectures": ("Qwen3ForCausalLM",)}, sglang_version="0.5.18")
    assert "SGLang's automatic choice" not in typed.message
    (auto,) = findings(SP020, *MLE, target={"architectures": ("LlamaForCausalLM",)}, sglang_version="0.5.18")
    assert "SGLang's automatic choice" in auto.message
    assert {e.name: e.value for e in auto.fix.edits}["--speculative-num-draft-tokens"] == 6


def test_sp020_auto_enabled_targets_and_quiet_cases() -> None:
    mimo = {"architectures": ("MiMoV2FlashForCausalLM",)}
    tree = ("--model-path", "m", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "2", "--speculative-num-draft-tokens", "6")
    assert findings(SP020, *tree, target=mimo, sglang_version="0.5.18")  # SGLang turns multi-layer on itself
    assert findings(SP020, *tree, target=mimo, sglang_version="0.5.13")  # the assertion is new in 0.5.13
    assert findings(SP020, *tree, target=mimo, sglang_version="0.5.12.post1") == []  # before it existed
    chain = ("--model-path", "m", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
             "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")
    assert findings(SP020, *chain, target=mimo, sglang_version="0.5.18") == []
    assert findings(SP020, *tree, target={"architectures": ("LlamaForCausalLM",)}, sglang_version="0.5.18") == []
