"""DM130 draft-vocab-same-size-other-family: boundaries beyond its examples."""

from __future__ import annotations

import pytest

from specguard.models import Severity
from specguard.rules import RULES_BY_CODE
from specguard.rules.base import Example
from specguard.rules.draft_model.DM130_draft_vocab_same_size_other_family import model_family
from tests.conftest import HF_CONFIGS

RULE = RULES_BY_CODE["DM130"]
STANDALONE = ("--model-path", "t", "--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", "d")


def fired(argv=STANDALONE, target=None, draft=None) -> list:
    return list(RULE.check(Example(argv=argv, target=target or {}, draft=draft or {}).context()))


@pytest.mark.parametrize(("model_type", "family"), [("qwen2", "qwen"), ("qwen3_moe", "qwen"), ("gemma3_text", "gemma"), ("llama", "llama"), ("mistral", "mistral")])
def test_model_family(model_type: str, family: str) -> None:
    assert model_family(model_type) == family


def test_llama2_fixture_target_with_a_mistral_draft_of_the_same_size() -> None:
    from specguard.facts import load_facts

    llama2 = load_facts(str(HF_CONFIGS / "meta-llama" / "Llama-2-7b-chat-hf"))
    assert (llama2.vocab_size, llama2.model_type) == (32000, "llama")
    [finding] = fired(target={"vocab_size": llama2.vocab_size, "model_type": llama2.model_type}, draft={"vocab_size": 32000, "model_type": "mistral"})
    assert finding.severity is Severity.WARNING and "32000" in finding.message


@pytest.mark.parametrize(
    ("target", "draft"),
    [
        ({"vocab_size": 32000, "model_type": "llama"}, {"vocab_size": 32768, "model_type": "mistral"}),  # sizes differ: DM003's
        ({"vocab_size": 32000, "model_type": "llama"}, {"vocab_size": 32000, "model_type": None}),  # unknown family: quiet
        ({"vocab_size": 32000, "model_type": "llama"}, {"vocab_size": 32000, "model_type": "llama"}),
    ],
)
def test_quiet(target: dict, draft: dict) -> None:
    assert fired(target=target, draft=draft) == []


def test_only_standalone() -> None:
    eagle3 = ("--model-path", "t", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d")
    assert fired(argv=eagle3, target={"vocab_size": 32000, "model_type": "llama"}, draft={"vocab_size": 32000, "model_type": "mistral"}) == []
