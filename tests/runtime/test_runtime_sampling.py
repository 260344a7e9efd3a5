"""Sampling with speculation keeps the target's distribution, even with a deliberately bad draft."""

from __future__ import annotations

import itertools

import pytest
import torch
from runtime_helpers import llama_config, random_model

from specguard.runtime.speculative import (
    Decoder,
    SamplingParams,
    SpecConfig,
    logits_to_probs,
)
from specguard.runtime.tree import DraftTree

VOCAB = 6


def _tv(counts: torch.Tensor, probs: torch.Tensor) -> float:
    return 0.5 * float((counts / counts.sum() - probs).abs().sum())


def test_chain_rejection_sampling_keeps_target_distribution_with_bad_draft():
    """Leviathan's rule on a fixed (p, q) pair: the first emitted token follows p, not q."""
    p = torch.tensor([0.5, 0.2, 0.1, 0.1, 0.05, 0.05])
    q = torch.tensor([0.02, 0.02, 0.06, 0.1, 0.4, 0.4])  # mass where the target has little
    gen = torch.Generator().manual_seed(0)
    params = SamplingParams(temperature=1.0)
    logits = torch.log(torch.stack([p, p]))
    counts = torch.zeros(VOCAB)
    accepted = 0
    n = 8000
    for _ in range(n):
        draft = int(torch.multinomial(q, 1, generator=gen))
        path, bonus = Decoder._verify_chain_sampling(DraftTree.chain([0, draft]), logits, [q], params, gen)
        first = draft if len(path) > 1 else bonus
        accepted += len(path) - 1
        counts[first] += 1
    assert _tv(counts, p) < 0.03
    assert accepted / n < 0.4  # the bad draft is mostly rejected; only acceptance drops


def test_tree_point_mass_verification_keeps_target_distribution():
    """Deterministic siblings (NGRAM and tree drafts): residual renormalisation keeps p."""
    p = torch.tensor([0.05, 0.3, 0.25, 0.2, 0.15, 0.05])
    tree = DraftTree.root_only(0)
    for token in (5, 0, 3):  # children proposed in a bad order
        tree.add_child(0, token)
    logits = torch.log(p).expand(len(tree), VOCAB)
    gen = torch.Generator().manual_seed(1)
    counts = torch.zeros(VOCAB)
    for _ in range(8000):
        path, bonus = Decoder._verify_tree_sampling(tree, logits, SamplingParams(temperature=1.0), gen)
        counts[tree.tokens[path[1]] if len(path) > 1 else bonus] += 1
    assert _tv(counts, p) < 0.03


def _exact_second_token_marginal(target, prompt: list[int], params: SamplingParams) -> torch.Tensor:
    """P(token 2) = sum over token 1 of p(t1 | prompt) p(t2 | prompt, t1), by enumeration."""
    target.setup_cache(64)
    with torch.inference_mode():
        x = torch.tensor(prompt)
        p1 = logits_to_probs(target(x, torch.arange(len(x)), 0)[-1], params)
        marginal = torch.zeros(VOCAB)
        for t1 in range(VOCAB):
            seq = torch.tensor([*prompt, t1])
            p2 = logits_to_probs(target(seq, torch.arange(len(seq)), 0)[-1], params)
            marginal += p1[t1] * p2
    return marginal


@pytest.mark.parametrize("topk", [1, 2])
def test_end_to_end_sampling_with_random_bad_draft_matches_target(topk):
    """Real decoder, real models over a 6-token vocabulary: tokens 2 and 3 follow the target."""
    cfg = llama_config(vocab=VOCAB, hidden=16, layers=1, heads=2, kv_heads=1)
    target = random_model(cfg, seed=3, std=0.6)
    bad_draft = random_model(cfg, seed=99, std=0.6)
    prompt = [1, 4, 2]
    params = SamplingParams(temperature=1.0, max_new_tokens=3)
    exact2 = _exact_second_token_marginal(target, prompt, params)
    ndt = 3 if topk == 1 else 4
    spec = SpecConfig("STANDALONE", num_steps=2, topk=topk, num_draft_tokens=ndt)
    target.setup_cache(64)
    bad_draft.setup_cache(64)
    decoder = Decoder(target, spec, bad_draft)
    counts = torch.zeros(VOCAB)
    drafts_accepted = 0
    rounds = 0
    n = 1500
    for seed in range(n):
        out: list[int] = []
        for r in itertools.islice(decoder.decode(prompt, SamplingParams(temperature=1.0, seed=seed)), 2):
            out += r.tokens
            if r.accepted_drafts is not None:
                drafts_accepted += r.accepted_drafts
                rounds += 1
        counts[out[1]] += 1
    assert _tv(counts, exact2) < 0.06, (counts / n, exact2)
    assert drafts_accepted / rounds < ndt - 1  # not everything accepted: the draft really is bad
