"""The memory estimate against SGLang's own formulas, published parameter counts and logged figures.

Agreement (estimate vs reference), as asserted below:
- KV bytes per token vs SGLang 0.5.23's cell-size formula: exact (0.0%) for all seven fixtures,
  tp 1 and tp 8, auto and fp8 KV.
- Parameters vs the model cards: Llama-3.1-8B 8.030B vs 8.03B (+0.00%), Llama-2-7B 6.738B vs 6.74B
  (-0.02%), Qwen2.5-7B 7.616B vs 7.61B (+0.07%; card "7.61B"), Qwen3-32B 32.762B vs 32.8B (-0.12%),
  Qwen3-235B-A22B 235.09B vs 235B (+0.04%), DeepSeek-V3 671.03B vs 671B (+0.00%), its MTP module
  13.46B vs 14B (-3.8%; the card rounds 685B - 671B).
- Logged by SGLang (PR 4760, Llama-3.1-8B bf16, "mem usage=15.11 GB", "#tokens: 442750"): weights
  14.96 GiB (-1.0%), pool tokens +0.3%; and a 24 GB-card log (mem usage=15.02 GB, #tokens 38141):
  weights -0.4%, tokens +0.5%.
"""

from __future__ import annotations

import pytest
from packaging.version import Version

from specguard.facts import load_facts
from specguard.memory.estimate import (
    GIB,
    draft_placement,
    spec_reserve_mib,
    weight_bytes,
)
from specguard.memory.params import count_draft, count_target, kv_bytes_per_token
from specguard.resolution.cuda_graph import spec_graph_schedule
from tests.conftest import DRAFT_TEMPLATES, HF_CONFIGS

FIXTURES = {
    "llama31-8b": "meta-llama/Llama-3.1-8B-Instruct",
    "llama2-7b": "meta-llama/Llama-2-7b-chat-hf",
    "qwen25-7b": "Qwen/Qwen2.5-7B-Instruct",
    "qwen3-32b": "Qwen/Qwen3-32B",
    "qwen3-235b-a22b": "Qwen/Qwen3-235B-A22B",
    "deepseek-v3": "deepseek-ai/DeepSeek-V3",
    "deepseek-r1": "deepseek-ai/DeepSeek-R1",
}


def facts(name: str):
    return load_facts(str(HF_CONFIGS / FIXTURES[name]))


def sglang_cell_size(config: dict, tp: int, kv_size: int) -> int:
    """A literal transcription of SGLang 0.5.23
    python/sglang/srt/model_executor/pool_configurator.py ``_compute_cell_size`` (lines 340-535),
    for the non-DSA, non-FP4, non-hybrid paths:

        if kvc.use_mla_backend:
            cell_size = calculate_mla_kv_cache_dim(...) * effective_num_layers * kv_size
            # calculate_mla_kv_cache_dim: kv_lora_rank + qk_rope_head_dim for non-DSA models
        else:
            n = model_config.get_num_kv_heads(tp_size, dcp_size)   # max(1, total_kv_heads // tp)
            cell_size = n * (model_config.head_dim + model_config.v_head_dim) * effective_num_layers * kv_size
    """
    layers = config["num_hidden_layers"]
    if config.get("kv_lora_rank"):
        return (config["kv_lora_rank"] + config["qk_rope_head_dim"]) * layers * kv_size
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    v_head_dim = head_dim
    n = max(1, config.get("num_key_value_heads", config["num_attention_heads"]) // tp)
    return n * (head_dim + v_head_dim) * layers * kv_size


@pytest.mark.parametrize("name", sorted(FIXTURES))
@pytest.mark.parametrize("tp", [1, 8])
@pytest.mark.parametrize("kv_size", [2, 1])
def test_kv_bytes_per_token_agree_with_sglang_formula(name: str, tp: int, kv_size: int) -> None:
    from tests.conftest import load_fixture

    config = load_fixture(f"{FIXTURES[name]}/config.json")
    reference = sglang_cell_size(config, tp, kv_size)
    ours = kv_bytes_per_token(facts(name), kv_size, tp)
    assert ours is not None
    assert abs(ours - reference) / reference <= 0.10
    assert ours == reference  # in fact exact


def test_kv_examples_by_hand() -> None:
    assert kv_bytes_per_token(facts("llama31-8b"), 2, 1) == 131072  # 8 kv heads x 256 x 32 layers x 2 B
    assert kv_bytes_per_token(facts("deepseek-v3"), 2, 8) == 70272  # (512 + 64) x 61 x 2 B, not split by tp
    assert kv_bytes_per_token(facts("qwen3-235b-a22b"), 2, 8) == 47 * 2 * 256 * 2  # 4 kv heads // 8 -> 1


# Published sizes (model cards on huggingface.co): Llama-3.1-8B "8.03B params" (safetensors
# total), Llama-2-7b "6.74B", Qwen2.5-7B-Instruct "Number of Parameters: 7.61B", Qwen3-32B
# "32.8B", Qwen3-235B-A22B "235B in total and 22B activated", DeepSeek-V3 "671B total ... 685B
# ... includes 671B of the Main Model weights and 14B of the Multi-Token Prediction (MTP) Module".
PUBLISHED = {
    "llama31-8b": (8.03e9, 0.01),
    "llama2-7b": (6.74e9, 0.01),
    "qwen25-7b": (7.61e9, 0.01),
    "qwen3-32b": (32.8e9, 0.01),
    "qwen3-235b-a22b": (235e9, 0.01),
    "deepseek-v3": (671e9, 0.01),
    "deepseek-r1": (671e9, 0.01),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_parameter_count_agrees_with_published_size(name: str) -> None:
    published, tolerance = PUBLISHED[name]
    count = count_target(facts(name))
    assert count is not None
    assert abs(count.total - published) / published <= tolerance


def test_deepseek_mtp_module_is_about_14b() -> None:
    count = count_target(facts("deepseek-v3"))
    assert count is not None and abs(count.mtp - 14e9) / 14e9 <= 0.05


def test_fp8_weights_are_about_one_byte_per_linear_param() -> None:
    count = count_target(facts("deepseek-v3"))
    assert count is not None
    fp8, _ = weight_bytes(count, 2, "fp8", 1)
    bf16, _ = weight_bytes(count, 2, None, 1)
    assert 0.5 < fp8 / bf16 < 0.52  # embeddings/head/norms/router stay bf16
    per_gpu, _ = weight_bytes(count, 2, "fp8", 8)
    # DeepSeek-V3 fp8 is ~642 GiB of weights: ~80 GiB per GPU at tp 8 (does not fit 8x H100 with KV)
    assert 78 * GIB < per_gpu < 82 * GIB


def test_eagle3_draft_shares_the_target_embedding() -> None:
    target = facts("llama31-8b")
    draft = load_facts(str(DRAFT_TEMPLATES / "sgl-project-SpecForge" / "llama3-8B-eagle3.json"))
    count = count_draft("eagle3", draft, target)
    assert count is not None and count.embed == 0
    assert count.lm_head == 32000 * 4096  # draft vocab head
    assert 0.4e9 < count.total < 0.45e9


@pytest.mark.parametrize(
    ("log", "mem_usage_gib", "free_before_gib", "tokens"),
    [
        # https://github.com/sgl-project/sglang/pull/4760 (2025-03-25): "Load weight end ... avail
        # mem=63.48 GB, mem usage=15.11 GB", "KV Cache is allocated. #tokens: 442750".
        ("pr-4760", 15.11, 63.48 + 15.11, 442750),
        # A public README's SGLang log of Llama-3.1-8B-Instruct on a 24 GB card (2025-07-14):
        # "avail mem=7.37 GB, mem usage=15.02 GB", "#tokens: 38141".
        ("readme-24gb", 15.02, 7.37 + 15.02, 38141),
    ],
)
def test_pool_tokens_agree_with_sglang_logs(log: str, mem_usage_gib: float, free_before_gib: float, tokens: int) -> None:
    """SGLang then used mem_fraction_static 0.88 for tp 1 (0.5.1 server_args.py:395); the pool is
    free_before x 0.88 - weights (the 0.5.23 formula, unchanged in substance)."""
    target = facts("llama31-8b")
    count = count_target(target)
    assert count is not None
    weights, _ = weight_bytes(count, 2, None, 1)
    assert abs(weights / GIB - mem_usage_gib) / mem_usage_gib <= 0.02
    cell = kv_bytes_per_token(target, 2, 1)
    assert cell is not None
    predicted = int((free_before_gib * GIB * 0.88 - weights) // cell)
    assert abs(predicted - tokens) / tokens <= 0.02


def test_spec_graph_schedule_matches_sglang() -> None:
    # cuda_graph_hook.py:500-529 (P29): max 40 -> [1..8, 10, 12, ..., 32, 40]
    assert spec_graph_schedule(40) == [*range(1, 9), *range(10, 33, 2), 40]
    assert spec_graph_schedule(12, disable_padding=True) == list(range(1, 13))
    assert spec_graph_schedule(2) == [1, 2]


@pytest.mark.parametrize(
    ("algorithm", "version", "mib"),
    [
        ("EAGLE3", "0.5.9", 2 * 1024),  # 0.5.9 server_args.py:1051-1057
        ("EAGLE3", "0.5.10rc0", 4 * 1024),  # 0.5.10rc0 server_args.py:1295-1301
        ("STANDALONE", "0.5.13", 6 * 1024),  # 0.5.13 server_args.py:1627-1633
        ("NGRAM", "0.5.13", 0),
        ("EAGLE3", "0.5.14", 0),  # 0.5.14 server_args.py:3308-3316: no draft reserve
    ],
)
def test_default_fraction_draft_reserve_by_release(algorithm: str, version: str, mib: int) -> None:
    assert spec_reserve_mib(algorithm, Version(version)) == mib


def test_draft_enters_the_static_budget_in_0_5_14() -> None:
    """0.5.13 sizes the target's pool before the draft loads (model_runner.py:784); 0.5.14 loads the draft first
    (scheduler.py:858-868) and puts EAGLE's layers in the cell (pool_configurator.py:129-145)."""
    assert draft_placement("eagle3", Version("0.5.13")) == (False, False)
    assert draft_placement("dflash", Version("0.5.13")) == (False, True)  # 0.5.13 pool_configurator.py:107-125
    assert draft_placement("eagle3", Version("0.5.14")) == (True, True)
