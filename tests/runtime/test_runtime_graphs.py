"""The static KV cache and the CUDA-graph path: the capture plan read from SGLang's flags, the
replay-or-eager bookkeeping and the static-shape forwards a graph records (run eagerly on CPU,
where capture is skipped), and, where CUDA is present, real capture and replay."""

from __future__ import annotations

import pytest
import torch

from specguard.runtime.eagle import load_eagle_head
from specguard.runtime.flags import parse_flags
from specguard.runtime.graphs import (
    CPU_NOTE,
    GraphPlan,
    attach_graphs,
    plain_graph_schedule,
)
from specguard.runtime.loader import load_model
from specguard.runtime.speculative import Decoder, SamplingParams, SpecConfig
from specguard.runtime.tokenizer import Tokenizer

PROMPTS = [
    "def scale_3(x):\n",
    "def merge_all(items):\n    result = []\n",
    "class Parse7:\n    def __init__(self, key):\n",
    "x = 1\n",
    "def count_5(size):\n",
    "def fetch_12(node):\n    value = node * 12\n",
]
NEW = 24


def test_speculative_plan_follows_sglangs_schedule_and_clamp():
    plan = GraphPlan.from_args(device="cuda", speculative=True, request_rows=49, cuda_graph_max_bs=40)
    assert plan.enabled and plan.max_bs == 40
    assert plan.batch_sizes == [*range(1, 9), *range(10, 33, 2), 40]
    # rows clamp (get_batch_sizes_to_capture): sizes above the rows dropped, the row count captured
    small = GraphPlan.from_args(device="cuda", speculative=True, request_rows=13, cuda_graph_max_bs=40)
    assert small.batch_sizes == [*range(1, 9), 10, 12, 13]


def test_plain_plan_and_padding_off():
    assert plain_graph_schedule(40) == [1, 2, 4, 8, 12, 16, 24, 32, 40]
    plan = GraphPlan.from_args(
        device="cuda", speculative=False, request_rows=100, cuda_graph_max_bs=12, disable_cuda_graph_padding=True
    )
    assert plan.batch_sizes == list(range(1, 13))
    assert plan.pick(7) == 7 and plan.pick(13) is None


def test_default_max_bs_is_sglangs_by_memory_lowered_only_by_a_users_max_running_requests():
    h100 = 79.19 * 1024
    assert GraphPlan.from_args(device="cuda", speculative=True, request_rows=1000, gpu_mib=h100).max_bs == 256
    assert GraphPlan.from_args(device="cuda", speculative=True, request_rows=1000, gpu_mib=None).max_bs == 160
    lowered = GraphPlan.from_args(device="cuda", speculative=True, request_rows=1000, gpu_mib=h100, user_max_running_requests=16)
    assert lowered.max_bs == 16 and lowered.batch_sizes[-1] == 16


def test_padding_picks_the_smallest_captured_size_that_fits():
    plan = GraphPlan(True, [1, 2, 4, 8], 8)
    assert [plan.pick(b) for b in (1, 3, 5, 8, 9)] == [1, 4, 8, 8, None]


def test_disabled_and_cpu_plans_say_why():
    off = GraphPlan.from_args(device="cuda", speculative=True, request_rows=10, disable_cuda_graph=True)
    assert not off.enabled and off.batch_sizes == [] and "--disable-cuda-graph" in off.note
    cpu = GraphPlan.from_args(device="cpu", speculative=True, request_rows=10, cuda_graph_max_bs=8)
    assert not cpu.enabled and cpu.note == CPU_NOTE and cpu.batch_sizes == [*range(1, 9)]
    assert cpu.stats()["note"] == CPU_NOTE


def test_graph_flags_are_read_not_ignored():
    parsed = parse_flags(
        ["--model-path", "/m", "--cuda-graph-max-bs", "8", "--disable-cuda-graph-padding", "--cuda-graph-max-bs-decode", "4"]
    )
    args = parsed.args
    assert (args.cuda_graph_max_bs, args.cuda_graph_max_bs_decode, args.disable_cuda_graph_padding) == (8, 4, True)
    assert args.ignored_flags == [] and not parsed.warnings
    assert parse_flags(["--model-path", "/m", "--disable-cuda-graph"]).args.disable_cuda_graph


@pytest.fixture()
def fresh(tiny_pair, tiny_eagle3):
    """Models of their own (graph runners are attached to the modules)."""
    target = load_model(tiny_pair.target)
    draft = load_model(tiny_pair.draft)
    head = load_eagle_head(tiny_eagle3.draft, target)
    for model in (target, draft, head):
        model.setup_cache(160, 8)
    return target, draft, head, Tokenizer(tiny_pair.target)


def _plain_alone(target, tok, prompt: str) -> list[int]:
    decoder = Decoder(target, SpecConfig())
    out: list[int] = []
    for result in decoder.decode(tok.encode(prompt), SamplingParams(temperature=0.0), row=7):
        out += result.tokens
        if len(out) >= NEW:
            return out[:NEW]
    raise AssertionError("unreachable")


def _batched(decoder: Decoder, tok, prompts: list[str]) -> list[list[int]]:
    seqs = []
    for row, prompt in enumerate(prompts):
        seq = decoder.start(tok.encode(prompt), SamplingParams(temperature=0.0), row)
        decoder.prefill(seq)
        seqs.append(seq)
    while min(len(s.committed) - len(s.prompt) for s in seqs) < NEW:
        if decoder.speculative:
            decoder.spec_step(seqs)
        else:
            decoder.plain_step(seqs)
    return [s.committed[len(s.prompt) : len(s.prompt) + NEW] for s in seqs]


SPECS = {
    "plain": SpecConfig(),
    "standalone-chain": SpecConfig("STANDALONE", num_steps=3, topk=1, num_draft_tokens=4),
    "standalone-tree": SpecConfig("STANDALONE", num_steps=3, topk=2, num_draft_tokens=6),
    "eagle3-chain": SpecConfig("EAGLE3", num_steps=3, topk=1, num_draft_tokens=4),
    "eagle3-tree": SpecConfig("EAGLE3", num_steps=3, topk=2, num_draft_tokens=5),
    "ngram": SpecConfig("NGRAM", num_steps=1, topk=4, num_draft_tokens=6, ngram_max_bfs_breadth=4),
}


@pytest.mark.parametrize("name", list(SPECS))
def test_static_shapes_replayed_eagerly_on_cpu_equal_plain_greedy(fresh, name):
    """The forwards a graph records (every slot of a row under a mask, batches padded into a
    scratch row) run here without capture: batches of 3 replay the size-4 shapes, batches of 6
    run eagerly, and every output is plain greedy decoding's."""
    target, draft, head, tok = fresh
    spec = SPECS[name]
    drafter = {"STANDALONE": draft, "EAGLE3": head}.get(spec.algorithm or "")
    expected = {p: _plain_alone(target, tok, p) for p in PROMPTS}
    plan = GraphPlan(True, [1, 2, 4], 4)
    attach_graphs(plan, target, drafter, spec, pad_row=7, capture=False)
    decoder = Decoder(target, spec, drafter)
    assert _batched(decoder, tok, PROMPTS[:3]) == [expected[p] for p in PROMPTS[:3]]
    replayed = sum(plan.replays.values())
    assert replayed > 0 and all(key.endswith("@4") for key in plan.replays), plan.replays
    assert _batched(decoder, tok, PROMPTS) == [expected[p] for p in PROMPTS]
    assert sum(plan.eager.values()) > 0 and sum(plan.replays.values()) == replayed  # 6 > 4: eager
    if drafter is not None and spec.topk == 1:
        assert drafter.graphs.shapes[1][0] == "draft"
    assert target.graphs.shapes[spec.num_draft_tokens if spec.algorithm else 1][0] == ("verify" if spec.algorithm else "decode")


def test_the_kv_cache_is_allocated_once_and_only_written(fresh):
    """Static cache: every forward (prefill, batched draft, verify, decode) writes into the buffers
    allocated by setup_cache; none is reallocated, and setting it up again with the same shape is a no-op."""
    target, draft, head, tok = fresh

    def pointers() -> list[int]:
        caches = [layer.self_attn.cache for model in (target, draft) for layer in model.model.decoder_layers]
        caches += [layer.self_attn.cache for layer in head.head_layers]
        return [t.data_ptr() for c in caches for t in (c.k, c.v)]

    before = pointers()
    for spec, drafter in ((SPECS["standalone-tree"], draft), (SPECS["eagle3-chain"], head), (SPECS["plain"], None)):
        _batched(Decoder(target, spec, drafter), tok, PROMPTS[:4])
    target.setup_cache(160, 8)
    draft.setup_cache(160, 8)
    head.setup_cache(160, 8)
    assert pointers() == before


needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a CUDA device")


@needs_cuda
@pytest.mark.parametrize("name", ["plain", "standalone-chain", "eagle3-chain", "eagle3-tree"])
def test_captured_graphs_replay_to_plain_greedy_on_cuda(tiny_pair, tiny_eagle3, name):
    target = load_model(tiny_pair.target, device="cuda")
    draft = load_model(tiny_pair.draft, device="cuda")
    head = load_eagle_head(tiny_eagle3.draft, target)
    for model in (target, draft, head):
        model.setup_cache(160, 8)
    tok = Tokenizer(tiny_pair.target)
    spec = SPECS[name]
    drafter = {"STANDALONE": draft, "EAGLE3": head}.get(spec.algorithm or "")
    expected = [_plain_alone(target, tok, p) for p in PROMPTS[:3]]
    plan = GraphPlan.from_args(device="cuda", speculative=spec.algorithm is not None, request_rows=7, cuda_graph_max_bs=4)
    attach_graphs(plan, target, drafter, spec, pad_row=7)
    assert plan.capture_seconds > 0
    assert _batched(Decoder(target, spec, drafter), tok, PROMPTS[:3]) == expected
    assert sum(plan.replays.values()) > 0
