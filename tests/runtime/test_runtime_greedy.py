"""Greedy speculative decoding equals plain greedy decoding, token for token, on the tiny pair."""

from __future__ import annotations

import pytest
from runtime_helpers import DEVICE

from specguard.runtime.loader import load_model
from specguard.runtime.speculative import Decoder, SamplingParams, SpecConfig
from specguard.runtime.tokenizer import Tokenizer

PROMPTS = [
    "def scale_3(x):\n",
    "def merge_all(items):\n    result = []\n",
    "class Parse7:\n    def __init__(self, key):\n",
    "def fetch_12(node):\n    value = node * 12\n    return fetch(value)\n\ndef fetch_13(node):\n",
    "def count_5(size):\n    value = size + 5\n    return count(value)\n\ndef count_all(sizes):\n    result = []\n",
    "x = 1\n",
]
NEW_TOKENS = 64

CONFIGS = {
    "standalone-chain": SpecConfig("STANDALONE", num_steps=4, topk=1, num_draft_tokens=5),
    "standalone-tree": SpecConfig("STANDALONE", num_steps=3, topk=2, num_draft_tokens=6),
    "standalone-wide-tree": SpecConfig("STANDALONE", num_steps=4, topk=4, num_draft_tokens=16),
    "ngram-bfs": SpecConfig("NGRAM", num_steps=1, topk=10, num_draft_tokens=12),
    "ngram-prob": SpecConfig(
        "NGRAM", num_steps=2, topk=4, num_draft_tokens=8, ngram_max_bfs_breadth=4, ngram_match_type="PROB"
    ),
}


@pytest.fixture(scope="module")
def models(tiny_pair):
    target = load_model(tiny_pair.target, device=DEVICE)
    draft = load_model(tiny_pair.draft, device=DEVICE)
    target.setup_cache(512)
    draft.setup_cache(512)
    return target, draft, Tokenizer(tiny_pair.target)


def _run(decoder: Decoder, prompt: list[int]) -> tuple[list[int], list[int]]:
    out: list[int] = []
    accepted: list[int] = []
    for result in decoder.decode(prompt, SamplingParams(temperature=0.0)):
        out += result.tokens
        if result.accepted_drafts is not None:
            accepted.append(result.accepted_drafts)
        if len(out) >= NEW_TOKENS:
            return out[:NEW_TOKENS], accepted
    raise AssertionError("unreachable")


@pytest.fixture(scope="module")
def plain_outputs(models):
    target, _, tok = models
    decoder = Decoder(target, SpecConfig())
    return {p: _run(decoder, tok.encode(p))[0] for p in PROMPTS}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_greedy_speculative_equals_plain(models, plain_outputs, name):
    target, draft, tok = models
    spec = CONFIGS[name]
    decoder = Decoder(target, spec, draft if spec.algorithm == "STANDALONE" else None)
    rounds = drafts = 0
    for prompt in PROMPTS:
        out, accepted = _run(decoder, tok.encode(prompt))
        assert out == plain_outputs[prompt], f"{name} diverged on {prompt!r}"
        rounds += len(accepted)
        drafts += sum(accepted)
    accept_length = (drafts + rounds) / rounds
    # The drafts really are used (this is what makes decoding faster; speed itself is benchmarked).
    assert accept_length > (2.0 if spec.algorithm == "STANDALONE" else 1.5), accept_length
