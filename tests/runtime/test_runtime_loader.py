"""The checkpoint loader and the model: both rope spellings, tied embeddings, shards, bad checkpoints."""

from __future__ import annotations

import math

import pytest
import torch
from runtime_helpers import llama_config, random_model, write_checkpoint

from specguard.runtime.config import parse_config, rope_inv_freq
from specguard.runtime.errors import CheckpointError
from specguard.runtime.loader import load_model
from specguard.runtime.tree import DraftTree

PROMPT = torch.tensor([3, 17, 5, 42, 8, 9, 11, 2])


def full_logits(model) -> torch.Tensor:
    model.setup_cache(64)
    with torch.inference_mode():
        return model(PROMPT, torch.arange(len(PROMPT)), 0)


def test_both_rope_spellings_load_to_the_same_model(tmp_path):
    legacy = llama_config(rope_theta=500000.0)
    v5 = llama_config()
    del v5["rope_theta"]
    v5["rope_parameters"] = {"rope_theta": 500000.0, "rope_type": "default"}
    model = random_model(legacy)
    a = load_model(write_checkpoint(tmp_path / "legacy", legacy, model))
    b = load_model(write_checkpoint(tmp_path / "v5", v5, model))
    assert a.config.rope.theta == b.config.rope.theta == 500000.0
    torch.testing.assert_close(full_logits(a), full_logits(b), rtol=0, atol=0)


def test_tied_embeddings_without_lm_head_weight(tmp_path):
    cfg = llama_config(tie_word_embeddings=True)
    model = random_model(cfg)
    loaded = load_model(write_checkpoint(tmp_path / "tied", cfg, model))
    assert loaded.lm_head.weight.data_ptr() == loaded.model.embed_tokens.weight.data_ptr()
    torch.testing.assert_close(full_logits(loaded), full_logits(model))


def test_sharded_checkpoint_matches_single_file(tmp_path):
    cfg = llama_config()
    model = random_model(cfg)
    single = load_model(write_checkpoint(tmp_path / "single", cfg, model))
    sharded = load_model(write_checkpoint(tmp_path / "sharded", cfg, model, shards=3))
    torch.testing.assert_close(full_logits(single), full_logits(sharded), rtol=0, atol=0)


def test_partial_checkpoint_names_the_missing_tensor(tmp_path):
    cfg = llama_config()
    path = write_checkpoint(tmp_path / "partial", cfg, random_model(cfg), drop=("model.layers.1.mlp.down_proj.weight",))
    with pytest.raises(CheckpointError, match=r"model\.layers\.1\.mlp\.down_proj\.weight"):
        load_model(path)


def test_untied_checkpoint_without_lm_head_is_partial(tmp_path):
    cfg = llama_config()
    path = write_checkpoint(tmp_path / "nohead", cfg, random_model(cfg), drop=("lm_head.weight",))
    with pytest.raises(CheckpointError, match="lm_head.weight"):
        load_model(path)


def test_missing_shard_is_named(tmp_path):
    cfg = llama_config()
    path = write_checkpoint(tmp_path / "shards", cfg, random_model(cfg), shards=2)
    (path / "model-00002-of-00002.safetensors").unlink()
    with pytest.raises(CheckpointError, match="model-00002-of-00002.safetensors"):
        load_model(path)


def test_unsupported_architecture_and_missing_files(tmp_path):
    cfg = llama_config(architectures=["MixtralForCausalLM"], model_type="mixtral")
    path = write_checkpoint(tmp_path / "moe", llama_config(), random_model(llama_config()))
    (path / "config.json").write_text(__import__("json").dumps(cfg))
    with pytest.raises(CheckpointError, match="unsupported architecture.*Mixtral"):
        load_model(path)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_model(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="config.json is missing"):
        load_model(tmp_path / "empty")


@pytest.mark.parametrize(
    "arch",
    ["LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM"],
)
def test_cached_decode_matches_uncached_forward(tmp_path, arch):
    """Token-by-token decoding through the KV cache equals one causal pass, for each family."""
    cfg = llama_config(architectures=[arch], model_type=arch.removesuffix("ForCausalLM").lower(), head_dim=8)
    model = load_model(write_checkpoint(tmp_path / arch, cfg, random_model(cfg)))
    assert model.config.qkv_bias == (arch == "Qwen2ForCausalLM")
    assert model.config.qk_norm == (arch == "Qwen3ForCausalLM")
    if arch == "Qwen2ForCausalLM":
        assert model.model.layers[0].self_attn.q_proj.bias is not None
    reference = model.forward_train(PROMPT.unsqueeze(0))[0]
    model.setup_cache(64)
    with torch.inference_mode():
        steps = [model(PROMPT[i : i + 1], torch.tensor([i]), i)[0] for i in range(len(PROMPT))]
    torch.testing.assert_close(torch.stack(steps), reference, atol=1e-4, rtol=1e-4)


def test_tree_verify_in_one_forward_matches_each_branch(tmp_path):
    """One forward over a tree with its ancestor mask gives each node the logits of its own path."""
    cfg = llama_config()
    model = load_model(write_checkpoint(tmp_path / "m", cfg, random_model(cfg)))
    model.setup_cache(64)
    prefix = PROMPT[:5]
    tree = DraftTree.root_only(int(PROMPT[5]))
    a = tree.add_child(0, 7)
    b = tree.add_child(0, 12)
    a1 = tree.add_child(a, 30)
    b1 = tree.add_child(b, 31)
    tree.add_child(b1, 40)
    with torch.inference_mode():
        model(prefix, torch.arange(5), 0)
        n = len(tree)
        mask = torch.ones(n, 5 + n, dtype=torch.bool)
        mask[:, 5:] = tree.ancestor_mask()
        positions = torch.tensor(tree.depths) + 5
        tree_logits = model(torch.tensor(tree.tokens), positions, 5, mask)
        for node in range(n):
            path = []
            j = node
            while j >= 0:
                path.append(tree.tokens[j])
                j = tree.parents[j]
            seq = torch.cat([prefix, torch.tensor(path[::-1])])
            ref = model(seq, torch.arange(len(seq)), 0)[-1]
            torch.testing.assert_close(tree_logits[node], ref, atol=1e-4, rtol=1e-4)
    assert a1 != b1


def test_llama3_rope_scaling():
    cfg = parse_config(
        llama_config(
            hidden=128,
            heads=2,
            kv_heads=1,
            rope_theta=500000.0,
            rope_scaling={
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
            },
        )
    )
    base = [1.0 / (500000.0 ** (i / 64)) for i in range(0, 64, 2)]
    scaled = rope_inv_freq(cfg)
    for f, s in zip(base, scaled, strict=True):
        wavelen = 2 * math.pi / f
        if wavelen < 8192 / 4:
            assert s == f
        elif wavelen > 8192:
            assert s == pytest.approx(f / 8)
        else:
            assert f / 8 < s < f
    assert any(f / 8 < s < f for f, s in zip(base, scaled, strict=True))


def test_dtype_flag_and_config_dtype(tmp_path):
    cfg = llama_config(dtype="bfloat16")
    path = write_checkpoint(tmp_path / "bf16", cfg, random_model(cfg))
    assert load_model(path).dtype == torch.bfloat16
    assert load_model(path, "float32").dtype == torch.float32
    with pytest.raises(CheckpointError, match="--dtype"):
        load_model(path, "int3")


@pytest.mark.parametrize("keep", [0.5, 0.01], ids=["half", "header-cut"])
def test_truncated_shard_is_named(tmp_path, keep):
    cfg = llama_config()
    path = write_checkpoint(tmp_path / "cut", cfg, random_model(cfg), shards=2)
    shard = path / "model-00001-of-00002.safetensors"
    data = shard.read_bytes()
    shard.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(CheckpointError) as info:
        load_model(path)
    assert str(shard) in str(info.value) and "truncated" in str(info.value)


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("tokenizer_config.json", '{"chat_template": ', "not readable JSON"),
        ("tokenizer_config.json", "[1, 2]", "not an object"),
        ("tokenizer.json", '{"model": ', "not a readable tokenizer.json"),
    ],
)
def test_broken_tokenizer_files_are_named_by_the_server(tmp_path, tiny_pair, name, content, says):
    """Through the real runtime entry point: one line naming the file, exit 2, no traceback."""
    import shutil
    import subprocess
    import sys

    model = tmp_path / "model"
    shutil.copytree(tiny_pair.target, model)
    (model / name).write_text(content)
    result = subprocess.run(
        [sys.executable, "-m", "specguard.runtime", "--model-path", str(model), "--port", "1"],
        capture_output=True, text=True, timeout=120,
    )
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert len(errors) == 1 and str(model / name) in errors[0] and says in errors[0]
