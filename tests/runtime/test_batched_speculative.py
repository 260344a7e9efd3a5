"""Batched speculative rounds (``Decoder.spec_step``): every running request drafts and is verified
together, and greedy output stays plain greedy output for every request, whatever the mix (plain,
chains and trees of STANDALONE, EAGLE3 and NGRAM in one batch), the arrival order and the
cancellations; the target's cache rows stay what a fresh prefill would write."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runtime_helpers import DEVICE

from specguard.runtime.eagle import load_eagle_head
from specguard.runtime.loader import load_model
from specguard.runtime.speculative import Decoder, SamplingParams, Sequence, SpecConfig
from specguard.runtime.tokenizer import Tokenizer

PROMPTS = [
    "def scale_3(x):\n",
    "def merge_all(items):\n    result = []\n",
    "class Parse7:\n    def __init__(self, key):\n",
    "def fetch_12(node):\n    value = node * 12\n    return fetch(value)\n\ndef fetch_13(node):\n",
    "x = 1\n",
    "def count_5(size):\n",
]
ROWS = 10  # the last one is scratch for the cache-consistency check
SLOTS = 256

KINDS = {
    "plain": SpecConfig(),
    "standalone-chain": SpecConfig("STANDALONE", num_steps=3, topk=1, num_draft_tokens=4),
    "standalone-tree": SpecConfig("STANDALONE", num_steps=3, topk=2, num_draft_tokens=6),
    "eagle3-chain": SpecConfig("EAGLE3", num_steps=3, topk=1, num_draft_tokens=4),
    "eagle3-tree": SpecConfig("EAGLE3", num_steps=3, topk=2, num_draft_tokens=5),
    "ngram": SpecConfig("NGRAM", num_steps=1, topk=4, num_draft_tokens=6, ngram_max_bfs_breadth=4),
}


@dataclass
class World:
    target: torch.nn.Module
    decoders: dict[str, Decoder]
    tok: Tokenizer
    plain: dict[tuple[int, int], list[int]] = field(default_factory=dict)

    def expected(self, prompt: int, n: int) -> list[int]:
        """Plain greedy decoding of ``PROMPTS[prompt]`` alone, ``n`` new tokens."""
        key = (prompt, n)
        if key not in self.plain:
            out: list[int] = []
            for result in self.decoders["plain"].decode(self.tok.encode(PROMPTS[prompt]), SamplingParams(temperature=0.0), row=ROWS - 1):
                out += result.tokens
                if len(out) >= n:
                    break
            self.plain[key] = out[:n]
        return self.plain[key]


@pytest.fixture(scope="module")
def world(tiny_pair, tiny_eagle3) -> World:
    target = load_model(tiny_pair.target, device=DEVICE)
    draft = load_model(tiny_pair.draft, device=DEVICE)
    head = load_eagle_head(tiny_eagle3.draft, target)
    for model in (target, draft, head):
        model.setup_cache(SLOTS, ROWS)
    decoders = {}
    for name, spec in KINDS.items():
        drafter = {"STANDALONE": draft, "EAGLE3": head}.get(spec.algorithm or "")
        decoders[name] = Decoder(target, spec, drafter)
    return World(target, decoders, Tokenizer(tiny_pair.target))


@dataclass
class Job:
    kind: str
    prompt: int
    new_tokens: int
    arrival: int  # the iteration it joins at
    cancel_at: int | None = None  # iterations after it joined
    seq: Sequence | None = None
    out: list[int] = field(default_factory=list)
    steps: int = 0


def _cache_matches_prefill(world: World, seq: Sequence) -> None:
    """The target's row holds the KV of every committed token but the last, as a fresh prefill writes it."""
    target = world.target
    n = len(seq.committed) - 1
    scratch = ROWS - 1
    target.bind_row(scratch)
    with torch.inference_mode():
        target.run(torch.tensor(seq.committed[:-1]), None, 0)
    for layer in target.model.decoder_layers:
        cache = layer.self_attn.cache
        torch.testing.assert_close(cache.k[seq.row, :, :n], cache.k[scratch, :, :n], rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(cache.v[seq.row, :, :n], cache.v[scratch, :, :n], rtol=1e-4, atol=1e-4)


def _simulate(world: World, jobs: list[Job], check_cache_every: int = 0) -> None:
    """The engine's loop in miniature: admit arrivals into free rows, prefill them, one batched
    round for the others, drop the finished and the cancelled."""
    free = list(range(ROWS - 1))
    waiting = sorted(jobs, key=lambda j: j.arrival)
    running: list[Job] = []
    iteration = 0
    step = world.decoders["standalone-chain"]  # any decoder: spec_step reads only the sequences
    while waiting or running:
        while waiting and waiting[0].arrival <= iteration and free:
            job = waiting.pop(0)
            row = free.pop(0)
            decoder = world.decoders[job.kind]
            job.seq = decoder.start(world.tok.encode(PROMPTS[job.prompt]), SamplingParams(temperature=0.0), row)
            job.out += decoder.prefill(job.seq).tokens
            running.append(job)
        ready = [j for j in running if j.seq is not None and len(j.out) < j.new_tokens]
        if ready:
            results = step.spec_step([j.seq for j in ready if j.seq is not None])
            for job, result in zip(ready, results, strict=True):
                job.out += result.tokens
                job.steps += 1
        iteration += 1
        for job in list(running):
            assert job.seq is not None
            if check_cache_every and iteration % check_cache_every == 0:
                _cache_matches_prefill(world, job.seq)
            cancelled = job.cancel_at is not None and job.steps >= job.cancel_at
            if len(job.out) >= job.new_tokens or cancelled:
                running.remove(job)
                free.append(job.seq.row)
                free.sort()
    for job in jobs:
        n = min(len(job.out), job.new_tokens)
        assert job.out[:n] == world.expected(job.prompt, n), (job.kind, job.prompt, n)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "plain"])
def test_one_kind_in_a_batch_is_plain_greedy(world, kind):
    jobs = [Job(kind, i % len(PROMPTS), 20 + 7 * i, arrival=i // 3) for i in range(8)]
    _simulate(world, jobs, check_cache_every=3)


def test_every_kind_in_one_batch_is_plain_greedy(world):
    kinds = list(KINDS)
    jobs = [Job(kinds[i % len(kinds)], i % len(PROMPTS), 24 + 5 * i, arrival=i % 3) for i in range(12)]
    _simulate(world, jobs, check_cache_every=4)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(list(KINDS)),
            st.integers(0, len(PROMPTS) - 1),
            st.integers(1, 40),
            st.integers(0, 12),
            st.one_of(st.none(), st.integers(0, 6)),
        ),
        min_size=1,
        max_size=14,
    )
)
def test_random_arrivals_and_cancellations_stay_lossless(world, spec):
    jobs = [Job(kind, prompt, n, arrival, cancel) for kind, prompt, n, arrival, cancel in spec]
    _simulate(world, jobs, check_cache_every=5)


def test_sampling_requests_ride_along_with_greedy_ones(world):
    """Sampled requests (their own generators) share a batch with greedy ones; the greedy ones
    stay plain greedy and the sampled ones stay within the vocabulary and their lengths."""
    rng = random.Random(3)
    decoder = world.decoders["eagle3-chain"]
    tree = world.decoders["standalone-tree"]
    seqs, greedy = [], []
    for row in range(6):
        sampled = row % 2 == 1
        params = SamplingParams(temperature=0.8, seed=rng.randrange(1 << 30)) if sampled else SamplingParams(temperature=0.0)
        d = tree if row % 3 == 0 else decoder
        seq = d.start(world.tok.encode(PROMPTS[row]), params, row)
        d.prefill(seq)
        seqs.append(seq)
        if not sampled:
            greedy.append((row, seq))
    for _ in range(8):
        decoder.spec_step(seqs)
    for row, seq in greedy:
        new = seq.committed[len(world.tok.encode(PROMPTS[row])) :]
        assert new == world.expected(row, len(new))
    vocab = world.target.config.vocab_size
    assert all(0 <= t < vocab for seq in seqs for t in seq.committed)


def test_a_failed_batch_leaves_every_request_as_it_was(world, monkeypatch):
    decoder = world.decoders["eagle3-chain"]
    seqs = []
    for row in range(3):
        seq = decoder.start(world.tok.encode(PROMPTS[row]), SamplingParams(temperature=0.0), row)
        decoder.prefill(seq)
        seqs.append(seq)
    decoder.spec_step(seqs)
    before = [(list(s.committed), s.drafter.snapshot()) for s in seqs]

    def boom(*args, **kwargs):
        raise RuntimeError("verify failed")

    monkeypatch.setattr(decoder, "_verify_rows", boom)
    with pytest.raises(RuntimeError):
        decoder.spec_step(seqs)
    monkeypatch.undo()
    for seq, (committed, state) in zip(seqs, before):
        assert seq.committed == committed
        assert seq.drafter.snapshot()[0] == state[0]  # type: ignore[index]
    for seq in seqs:  # one by one from the restored state, still lossless
        decoder.spec_round(seq)
    for row, seq in enumerate(seqs):
        new = seq.committed[len(world.tok.encode(PROMPTS[row])) :]
        assert new == world.expected(row, len(new))


@pytest.mark.parametrize("kind", ["standalone-chain", "standalone-tree", "eagle3-chain", "eagle3-tree"])
def test_batched_drafts_are_the_drafts_each_request_makes_alone(world, kind):
    """Drafting together changes nothing but the cost: every round accepts as many drafts as the
    same request's round alone (the batched draft and verify see what the one-row path sees)."""
    decoder = world.decoders[kind]

    def rounds(batched: bool) -> list[list[int]]:
        seqs = []
        for row in range(6):
            seq = decoder.start(world.tok.encode(PROMPTS[row]), SamplingParams(temperature=0.0), row)
            decoder.prefill(seq)
            seqs.append(seq)
        accepted = []
        for _ in range(8):
            results = decoder.spec_step(seqs) if batched else [decoder.spec_round(s) for s in seqs]
            accepted.append([r.accepted_drafts or 0 for r in results])
        return accepted

    alone, together = rounds(False), rounds(True)
    assert together == alone
    assert sum(map(sum, together)) > 0
