"""EAGLE and EAGLE3 heads: loading the published layouts, lossless greedy and sampled decoding.

Checkpoints here are written tensor by tensor under the names and shapes the published
layouts use (SpecForge's ``LlamaForCausalLMEagle3``: specforge/modeling/draft/llama3_eagle.py
``midlayer``/``fc``/``norm``/``lm_head``/``t2d``/``d2t``; EAGLE's ``LlamaForCausalLMEagle`` as
SGLang's llama_eagle.py loads it: ``fc`` with bias, ``layers.N``, no ``input_layernorm`` in layer
0), not through the runtime's own module, so a naming or shape mistake in the loader fails here.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import torch
from runtime_helpers import DEVICE, llama_config, random_model, write_checkpoint
from safetensors.torch import save_file
from test_runtime_sampling import _exact_second_token_marginal, _tv

from specguard.runtime.eagle import default_aux_layer_ids, load_eagle_head
from specguard.runtime.errors import CheckpointError
from specguard.runtime.loader import load_model
from specguard.runtime.speculative import Decoder, SamplingParams, SpecConfig

HIDDEN, HEADS, KV, HEAD_DIM = 32, 4, 2, 8


def _rand(*shape: int, std: float = 0.3) -> torch.Tensor:
    return torch.randn(*shape) * std


def _layer(prefix: str, qkv_in: int, input_layernorm: bool, hidden_norm: bool, inter: int) -> dict[str, torch.Tensor]:
    t = {
        f"{prefix}.self_attn.q_proj.weight": _rand(HEADS * HEAD_DIM, qkv_in),
        f"{prefix}.self_attn.k_proj.weight": _rand(KV * HEAD_DIM, qkv_in),
        f"{prefix}.self_attn.v_proj.weight": _rand(KV * HEAD_DIM, qkv_in),
        f"{prefix}.self_attn.o_proj.weight": _rand(HIDDEN, HEADS * HEAD_DIM),
        f"{prefix}.mlp.gate_proj.weight": _rand(inter, HIDDEN),
        f"{prefix}.mlp.up_proj.weight": _rand(inter, HIDDEN),
        f"{prefix}.mlp.down_proj.weight": _rand(HIDDEN, inter),
        f"{prefix}.post_attention_layernorm.weight": torch.ones(HIDDEN),
    }
    if input_layernorm:
        t[f"{prefix}.input_layernorm.weight"] = torch.ones(HIDDEN)
    if hidden_norm:
        t[f"{prefix}.hidden_norm.weight"] = torch.ones(HIDDEN)
    return t


def _head_config(arch: str, vocab: int, layers: int, **extra) -> dict:
    # The keys of SpecForge's configs/llama3-8B-eagle3.json, at tiny sizes.
    cfg = {
        "architectures": [arch],
        "bos_token_id": 0,
        "eos_token_id": 1,
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "intermediate_size": 2 * HIDDEN,
        "max_position_embeddings": 256,
        "model_type": "llama",
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV,
        "num_hidden_layers": layers,
        "rms_norm_eps": 1e-05,
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
        "vocab_size": vocab,
    }
    cfg.update(extra)
    return cfg


def write_eagle3_head(out: Path, vocab: int, draft_vocab: int, aux_ids: list[int] | None, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    extra: dict = {"draft_vocab_size": draft_vocab}
    if aux_ids is not None:
        extra["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": aux_ids}
    cfg = _head_config("LlamaForCausalLMEagle3", vocab, 1, **extra)
    hot = torch.sort(torch.randperm(vocab)[:draft_vocab]).values
    t2d = torch.zeros(vocab, dtype=torch.bool)
    t2d[hot] = True
    tensors = {
        "embed_tokens.weight": _rand(vocab, HIDDEN),  # present in SpecForge's module; SGLang shares the target's
        **_layer("midlayer", 2 * HIDDEN, input_layernorm=True, hidden_norm=True, inter=2 * HIDDEN),
        "fc.weight": _rand(HIDDEN, 3 * HIDDEN, std=0.1),
        "norm.weight": torch.ones(HIDDEN),
        "lm_head.weight": _rand(draft_vocab, HIDDEN),
        "d2t": hot - torch.arange(draft_vocab),
        "t2d": t2d,
    }
    out.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(out / "model.safetensors"))
    (out / "config.json").write_text(json.dumps(cfg))
    return out


def write_eagle_head(out: Path, vocab: int, layers: int = 2, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    tensors = {"embed_tokens.weight": _rand(vocab, HIDDEN), "fc.weight": _rand(HIDDEN, 2 * HIDDEN), "fc.bias": _rand(HIDDEN)}
    for i in range(layers):
        tensors.update(_layer(f"layers.{i}", HIDDEN, input_layernorm=i > 0, hidden_norm=False, inter=2 * HIDDEN))
    out.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(out / "model.safetensors"))
    (out / "config.json").write_text(json.dumps(_head_config("LlamaForCausalLMEagle", vocab, layers)))
    return out


@pytest.fixture
def target_dir(tmp_path: Path) -> Path:
    cfg = llama_config(vocab=64, hidden=HIDDEN, layers=6, heads=HEADS, kv_heads=KV)
    return write_checkpoint(tmp_path / "target", cfg, random_model(cfg, seed=1))


def _greedy(decoder: Decoder, prompt: list[int], n: int) -> tuple[list[int], list[int]]:
    out: list[int] = []
    accepted: list[int] = []
    for r in decoder.decode(prompt, SamplingParams(temperature=0.0)):
        out += r.tokens
        if r.accepted_drafts is not None:
            accepted.append(r.accepted_drafts)
        if len(out) >= n:
            return out[:n], accepted
    raise AssertionError("unreachable")


SPECS = [(1, 1, 2), (4, 1, 5), (3, 2, 6), (4, 4, 12)]


@pytest.mark.parametrize("kind", ["EAGLE3", "EAGLE3-default-aux", "EAGLE"])
@pytest.mark.parametrize("steps,topk,ndt", SPECS)
def test_random_head_in_published_layout_is_lossless(tmp_path, target_dir, kind, steps, topk, ndt):
    if kind == "EAGLE":
        head_dir = write_eagle_head(tmp_path / "head", 64)
    else:
        head_dir = write_eagle3_head(tmp_path / "head", 64, 40, None if kind.endswith("default-aux") else [0, 2, 3])
    target = load_model(target_dir, device=DEVICE)
    target.setup_cache(256)
    plain = [_greedy(Decoder(target, SpecConfig()), [5, 9, 2, 7], 40)[0], _greedy(Decoder(target, SpecConfig()), [3], 40)[0]]
    head = load_eagle_head(head_dir, target)
    head.setup_cache(256)
    decoder = Decoder(target, SpecConfig(kind.split("-")[0], steps, topk, ndt), head)
    rounds = 0
    for prompt, expected in zip([[5, 9, 2, 7], [3]], plain):
        out, accepted = _greedy(decoder, prompt, 40)
        assert out == expected
        rounds += len(accepted)
    assert rounds > 0


def test_aux_layers_follow_the_config_or_sglang_default(tmp_path, target_dir):
    target = load_model(target_dir, device=DEVICE)
    load_eagle_head(write_eagle3_head(tmp_path / "explicit", 64, 40, [0, 2, 3]), target)
    assert target.aux_layer_ids == (0, 2, 3)
    load_eagle_head(write_eagle3_head(tmp_path / "default", 64, 40, None), target)
    # SGLang captures the inputs of layers [2, n // 2, n - 3] = outputs of [1, n // 2 - 1, n - 4]
    assert target.aux_layer_ids == tuple(default_aux_layer_ids(6)) == (1, 2, 2)
    load_eagle_head(write_eagle_head(tmp_path / "eagle", 64), target)
    assert target.aux_layer_ids == ()  # EAGLE reads the final normed hidden state


def test_d2t_maps_draft_rows_to_target_tokens(tmp_path, target_dir):
    target = load_model(target_dir, device=DEVICE)
    head_dir = write_eagle3_head(tmp_path / "head", 64, 40, [0, 2, 3])
    head = load_eagle_head(head_dir, target)
    from safetensors import safe_open

    with safe_open(str(head_dir / "model.safetensors"), "pt") as f:
        d2t = f.get_tensor("d2t")
    assert torch.equal(head.hot_token_ids, d2t + torch.arange(40))
    head.setup_cache(16)
    target.setup_cache(16)
    _, hidden = target(torch.tensor([4, 5]), None, 0, return_hidden=True)
    logits, _ = head(torch.tensor([5, 6]), hidden, None, 0, from_target=True)
    assert logits.shape == (2, 40)
    finite = torch.isfinite(head.full_vocab(logits)[0]).nonzero().flatten()
    assert torch.equal(finite, head.hot_token_ids)  # only the draft vocabulary can be drafted


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda d: _drop(d, "midlayer.hidden_norm.weight"), "tensor 'layers.0.hidden_norm.weight' is missing"),
        (lambda d: _drop(d, "d2t"), "tensor 'd2t' is missing"),
        (lambda d: _config(d, architectures=["LlamaForCausalLM"]), "is not an EAGLE head"),
        (lambda d: _config(d, vocab_size=65), "differs from the target's"),
        (lambda d: _config(d, num_hidden_layers=2), "one midlayer only"),
        (lambda d: _config(d, eagle_config={"eagle_aux_hidden_state_layer_ids": [0, 2, 9]}), "outside the target's 6 layers"),
    ],
)
def test_bad_heads_are_refused_with_one_line(tmp_path, target_dir, mutate, message):
    head_dir = write_eagle3_head(tmp_path / "head", 64, 40, [0, 2, 3])
    mutate(head_dir)
    with pytest.raises(CheckpointError) as info:
        load_eagle_head(head_dir, load_model(target_dir, device=DEVICE))
    assert message in str(info.value) and "\n" not in str(info.value)


def _drop(head_dir: Path, key: str) -> None:
    from safetensors.torch import load_file

    tensors = load_file(str(head_dir / "model.safetensors"))
    tensors.pop(key)
    save_file(tensors, str(head_dir / "model.safetensors"))


def _config(head_dir: Path, **changes) -> None:
    cfg = json.loads((head_dir / "config.json").read_text())
    cfg.update(changes)
    (head_dir / "config.json").write_text(json.dumps(cfg))


@pytest.mark.parametrize("topk", [1, 2])
def test_sampling_with_a_reduced_vocabulary_head_matches_target(tmp_path, topk):
    """A random EAGLE3 head that can only draft 4 of 6 tokens: emitted tokens still follow the target."""
    vocab = 6
    cfg = llama_config(vocab=vocab, hidden=HIDDEN, layers=4, heads=HEADS, kv_heads=KV)
    target_dir = write_checkpoint(tmp_path / "target", cfg, random_model(cfg, seed=3, std=0.6))
    target = load_model(target_dir, device=DEVICE)
    head = load_eagle_head(write_eagle3_head(tmp_path / "head", vocab, 4, [0, 1, 3], seed=5), target)
    prompt = [1, 4, 2]
    params = SamplingParams(temperature=1.0)
    exact2 = _exact_second_token_marginal(target, prompt, params)
    target.setup_cache(64)
    head.setup_cache(64)
    ndt = 3 if topk == 1 else 4
    decoder = Decoder(target, SpecConfig("EAGLE3", 2, topk, ndt), head)
    counts = torch.zeros(vocab)
    n = 1500
    for seed in range(n):
        out: list[int] = []
        for r in itertools.islice(decoder.decode(prompt, SamplingParams(temperature=1.0, seed=seed)), 2):
            out += r.tokens
        counts[out[1]] += 1
    assert _tv(counts, exact2) < 0.06, (counts / n, exact2)


TINY_PROMPTS = [
    "def scale_3(x):\n",
    "def merge_all(items):\n    result = []\n",
    "class Parse7:\n    def __init__(self, key):\n",
    "x = 1\n",
]


@pytest.mark.parametrize("steps,topk,ndt,floor", [(5, 1, 6, 3.0), (3, 1, 4, 2.5), (5, 4, 8, 3.0)])
def test_tiny_eagle3_head_is_lossless_and_accepted(tiny_eagle3, steps, topk, ndt, floor):
    """The tiny EAGLE3 head (trained on the tiny target's aux states) drafts tokens the target keeps."""
    from specguard.runtime.tokenizer import Tokenizer

    target = load_model(tiny_eagle3.target, device=DEVICE)
    target.setup_cache(512)
    head = load_eagle_head(tiny_eagle3.draft, target)
    head.setup_cache(512)
    tok = Tokenizer(tiny_eagle3.target)
    decoder = Decoder(target, SpecConfig("EAGLE3", steps, topk, ndt), head)
    plain = Decoder(target, SpecConfig())
    rounds = drafts = 0
    for prompt in TINY_PROMPTS:
        ids = tok.encode(prompt)
        out, accepted = _greedy(decoder, ids, 96)
        assert out == _greedy(plain, ids, 96)[0], prompt
        rounds += len(accepted)
        drafts += sum(accepted)
    assert (drafts + rounds) / rounds > floor
