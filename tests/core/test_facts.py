"""config.json facts: every real fixture, both dtype spellings, the hub path through a local cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specguard.errors import InputError
from specguard.facts import facts_from_config, load_facts
from specguard.records import as_dict
from tests.conftest import DRAFT_TEMPLATES, HF_CONFIGS

FIXTURES = sorted(p.parent for p in HF_CONFIGS.rglob("config.json"))

EXPECTED = {
    "meta-llama/Llama-3.1-8B-Instruct": {"architecture": "LlamaForCausalLM", "dtype": "bfloat16", "max_position_embeddings": 131072, "vocab_size": 128256, "num_key_value_heads": 8},
    "meta-llama/Llama-2-7b-chat-hf": {"architecture": "LlamaForCausalLM", "dtype": "float16", "max_position_embeddings": 2048, "vocab_size": 32000},
    "Qwen/Qwen2.5-7B-Instruct": {"architecture": "Qwen2ForCausalLM", "dtype": "bfloat16", "max_position_embeddings": 32768, "vocab_size": 152064},
    "Qwen/Qwen3-32B": {"architecture": "Qwen3ForCausalLM", "num_hidden_layers": 64, "hidden_size": 5120, "vocab_size": 151936},
    "Qwen/Qwen3-235B-A22B": {"architecture": "Qwen3MoeForCausalLM", "num_hidden_layers": 94, "num_experts": 128},
    "deepseek-ai/DeepSeek-V3": {"architecture": "DeepseekV3ForCausalLM", "num_nextn_predict_layers": 1, "quantization": "fp8", "kv_lora_rank": 512},
    "deepseek-ai/DeepSeek-R1": {"architecture": "DeepseekV3ForCausalLM", "num_nextn_predict_layers": 1},
    "yuhuili/EAGLE-llama2-chat-7B": {"architecture": "LlamaForCausalLM", "num_hidden_layers": 1, "dtype": "float16"},
}


@pytest.mark.parametrize("directory", FIXTURES, ids=[str(p.relative_to(HF_CONFIGS)) for p in FIXTURES])
def test_every_fixture_loads_in_both_dtype_spellings(directory: Path, tmp_path: Path) -> None:
    facts = load_facts(str(directory))
    raw = json.loads((directory / "config.json").read_text())
    assert facts.dtype_key == ("dtype" if "dtype" in raw else "torch_dtype")
    # The same file as transformers 5 writes it: `dtype` instead of `torch_dtype`.
    renamed = {("dtype" if k == "torch_dtype" else k): v for k, v in raw.items()}
    (tmp_path / "config.json").write_text(json.dumps(renamed))
    other = load_facts(str(tmp_path))
    assert other.dtype == facts.dtype and other.dtype_key == "dtype"
    where = {"source", "folder", "dtype_key"}  # where the file lies, and how dtype was spelled
    assert as_dict(other, exclude=where) == as_dict(facts, exclude=where)
    for field, value in EXPECTED.get(str(directory.relative_to(HF_CONFIGS)), {}).items():
        assert getattr(facts, field) == value, field


def test_draft_templates_carry_eagle_facts() -> None:
    facts = load_facts(str(DRAFT_TEMPLATES / "sgl-project-SpecForge" / "qwen3-235B-A22B-eagle3.json"))
    assert facts.architectures == ("LlamaForCausalLMEagle3",)
    assert facts.eagle_aux_hidden_state_layer_ids == (1, 46, 90)
    assert facts.draft_vocab_size == 32000
    dflash = load_facts(str(DRAFT_TEMPLATES / "sgl-project-SpecForge" / "qwen3-8b-dflash.json"))
    assert dflash.block_size is not None and dflash.has_remote_code


def test_absent_facts_are_unknown_not_guessed() -> None:
    facts = facts_from_config({"architectures": ["LlamaForCausalLM"]}, source="x")
    assert facts.dtype is None and facts.max_position_embeddings is None and facts.num_nextn_predict_layers is None
    assert facts.has_mtp_layers is None


def test_eagle3_head_norm_and_aux_facts_are_read_as_sglang_reads_them() -> None:
    head = facts_from_config(
        {"eagle_config": {"use_aux_hidden_state": False, "norm_before_fc": True}, "norm_before_fc": False, "use_aux_norm": True, "norm_output": True},
        source="x",
    )
    # llama_eagle3.py: eagle_config's norm_before_fc before the top-level one; fc_norm or the legacy use_aux_norm.
    assert (head.eagle_use_aux_hidden_state, head.norm_before_fc, head.fc_norm, head.norm_output) == (False, True, True, True)
    assert facts_from_config({"norm_before_fc": True, "fc_norm": False}, source="x").norm_before_fc is True
    assert facts_from_config({"fc_norm": False}, source="x").fc_norm is False
    unstated = facts_from_config({"eagle_config": {}}, source="x")
    assert (unstated.eagle_use_aux_hidden_state, unstated.fc_norm, unstated.norm_before_fc, unstated.norm_output) == (None, None, None, None)


def test_an_explicit_null_draft_vocab_size_is_told_from_an_absent_one() -> None:
    # llama_eagle3.py reads config.draft_vocab_size: null is None there, an absent key is no attribute (DM421).
    null = facts_from_config({"draft_vocab_size": None, "tie_word_embeddings": False}, source="x")
    assert (null.draft_vocab_size, null.draft_vocab_size_null) == (None, True)
    assert facts_from_config({"draft_vocab_size": 32000}, source="x").draft_vocab_size_null is False
    assert facts_from_config({}, source="x").draft_vocab_size_null is None


def test_dflash_attention_extras_are_read_from_dflash_config() -> None:
    draft = facts_from_config({"dflash_config": {"attention_sink_bias": True, "attention_value_scale": 0.5}, "partial_rotary_factor": 0.5}, source="x")
    assert (draft.dflash_attention_sink_bias, draft.dflash_attention_value_scale, draft.partial_rotary_factor) == (True, 0.5, 0.5)
    # parse_dflash_draft_config reads the two extras inside dflash_config only.
    top_level = facts_from_config({"attention_sink_bias": True, "attention_value_scale": 0.5}, source="x")
    assert (top_level.dflash_attention_sink_bias, top_level.dflash_attention_value_scale) == (None, None)


def test_lilicorr_fields_are_dflash_configs_lilicorr_keys_as_written() -> None:
    draft = facts_from_config({"dflash_config": {"block_size": 16, "lilicorr_candidate_topk": "8", "lilicorr_enabled": True}}, source="x")
    assert draft.lilicorr_fields == {"lilicorr_candidate_topk": "8", "lilicorr_enabled": True}
    assert facts_from_config({"dflash_config": {"block_size": 16}}, source="x").lilicorr_fields == {}
    # Only dflash_config's keys count (SGLang's _get_dflash_config); no dflash_config, no DFLASH draft to judge.
    assert facts_from_config({"lilicorr_candidate_topk": 8}, source="x").lilicorr_fields is None


def test_dflash_selector_rank_is_read_from_dflash_config_with_sglangs_default() -> None:
    assert facts_from_config({"dflash_config": {"selector_rank": 64, "selector_top_k": 32}}, source="x").dflash_selector_rank == 64
    # parse_dflash_draft_config reads dflash_config.get("selector_rank", 0): unset anywhere there is 0.
    assert facts_from_config({"dflash_config": {"block_size": 16}}, source="x").dflash_selector_rank == 0
    assert facts_from_config({"selector_rank": 64}, source="x").dflash_selector_rank == 0


def test_dspark_use_dense_ffn_is_read_as_minimax_m3_dspark_reads_it() -> None:
    assert facts_from_config({"dspark_config": {"use_dense_ffn": True}}, source="x").dspark_use_dense_ffn is True
    assert facts_from_config({"dspark_use_dense_ffn": True}, source="x").dspark_use_dense_ffn is True
    # the top-level dspark_config is copied onto the text config and wins over the text config's own
    both = {"text_config": {"dspark_config": {"use_dense_ffn": True}}, "dspark_config": {"use_dense_ffn": False}}
    assert facts_from_config(both, source="x").dspark_use_dense_ffn is False
    assert facts_from_config({"text_config": {"dspark_config": {"use_dense_ffn": True}}}, source="x").dspark_use_dense_ffn is True
    assert facts_from_config({"dflash_config": {"block_size": 8}}, source="x").dspark_use_dense_ffn is False


def test_dspark_markov_rank_is_resolved_with_and_without_dflash_config() -> None:
    published = facts_from_config({"dflash_config": {"markov_rank": 4, "markov_head_type": "gated"}}, source="x")
    assert (published.dspark_markov_rank, published.dspark_markov_rank_without_dflash_config) == (4, 0)
    # dspark_config wins over dflash_config; the prefixed key over both; top level is the last fallback.
    both = facts_from_config({"dflash_config": {"markov_rank": 4}, "dspark_config": {"markov_rank": 2}}, source="x")
    assert (both.dspark_markov_rank, both.dspark_markov_rank_without_dflash_config) == (2, 2)
    prefixed = facts_from_config({"dspark_markov_rank": 8, "dspark_config": {"markov_rank": 2}}, source="x")
    assert (prefixed.dspark_markov_rank, prefixed.dspark_markov_rank_without_dflash_config) == (8, 8)
    top = facts_from_config({"dflash_config": {"block_size": 8}, "markov_rank": 3}, source="x")
    assert (top.dspark_markov_rank, top.dspark_markov_rank_without_dflash_config) == (3, 3)
    assert facts_from_config({}, source="x").dspark_markov_rank == 0


def test_dspark_mask_token_id_is_resolved_as_parse_dspark_draft_config_does() -> None:
    # the prefixed dspark_noise_token_id, then dspark_config, win over every mask_token_id
    prefixed = {"dspark_noise_token_id": 7, "dspark_config": {"mask_token_id": 5}, "mask_token_id": 3}
    assert facts_from_config(prefixed, source="x").dspark_mask_token_id == 7
    assert facts_from_config({"dspark_config": {"mask_token_id": 5}, "mask_token_id": 3}, source="x").dspark_mask_token_id == 5
    # the text config's before the top level's; dflash_config's alone is read by every release
    assert facts_from_config({"text_config": {"mask_token_id": 4}, "mask_token_id": 3}, source="x").dspark_mask_token_id == 4
    assert facts_from_config({"dflash_config": {"mask_token_id": 9}}, source="x").dspark_mask_token_id == 9
    # dflash_config's and the top level's disagree: the releases read them in opposite orders, so unknown
    assert facts_from_config({"dflash_config": {"mask_token_id": 9}, "mask_token_id": 3}, source="x").dspark_mask_token_id is None
    assert facts_from_config({}, source="x").dspark_mask_token_id is None


def test_dspark_markov_head_type_is_resolved_with_and_without_dflash_config() -> None:
    published = facts_from_config({"dflash_config": {"markov_rank": 4, "markov_head_type": "Gated"}}, source="x")
    assert (published.dspark_markov_head_type, published.dspark_markov_head_type_without_dflash_config) == ("gated", None)
    # the prefixed key wins, then dspark_config (over dflash_config), then the text config, then the top level
    prefixed = facts_from_config({"dspark_markov_head_type": "rnn", "dspark_config": {"markov_head_type": "gated"}}, source="x")
    assert (prefixed.dspark_markov_head_type, prefixed.dspark_markov_head_type_without_dflash_config) == ("rnn", "rnn")
    both = facts_from_config({"dflash_config": {"markov_head_type": "rnn"}, "dspark_config": {"markov_head_type": "vanilla"}}, source="x")
    assert (both.dspark_markov_head_type, both.dspark_markov_head_type_without_dflash_config) == ("vanilla", "vanilla")
    text = facts_from_config({"text_config": {"markov_head_type": "mlp"}, "markov_head_type": "gated"}, source="x")
    assert (text.dspark_markov_head_type, text.dspark_markov_head_type_without_dflash_config) == ("mlp", "mlp")
    assert facts_from_config({}, source="x").dspark_markov_head_type is None


def test_dspark_subfolder_is_known_for_a_local_checkpoint_only(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["DeepseekV4ForCausalLM"]}))
    assert load_facts(str(tmp_path)).dspark_subfolder is False
    (tmp_path / "dspark").mkdir()
    assert load_facts(str(tmp_path)).dspark_subfolder is False  # SGLang needs the subfolder's config.json
    (tmp_path / "dspark" / "config.json").write_text("{}")
    assert load_facts(str(tmp_path)).dspark_subfolder is True
    assert load_facts(str(tmp_path / "config.json")).dspark_subfolder is None


def test_padded_vocab_size_is_read_from_the_text_config_too() -> None:
    assert facts_from_config({"text_config": {"padded_vocab_size": 201024, "vocab_size": 200058}}, source="x").padded_vocab_size == 201024
    assert facts_from_config({"vocab_size": 32000}, source="x").padded_vocab_size is None


def test_is_hybrid_swa_is_read_from_the_config_or_its_text_config() -> None:
    assert facts_from_config({"is_hybrid_swa": True}, source="x").is_hybrid_swa is True
    assert facts_from_config({"text_config": {"is_hybrid_swa": True}}, source="x").is_hybrid_swa is True
    assert facts_from_config({"architectures": ["LlamaForCausalLM"]}, source="x").is_hybrid_swa is None


def test_quantization_exclude_is_read_from_the_quantization_config() -> None:
    """Quark's exclude list (quark.py reads quant_config["exclude"]); QT462 looks for its mtp.* entries."""
    quark = {"quantization_config": {"quant_method": "quark", "exclude": ["lm_head", "mtp.fc"]}}
    assert facts_from_config(quark, source="x").quantization_exclude == ("lm_head", "mtp.fc")
    assert facts_from_config({"quantization_config": {"quant_method": "fp8"}}, source="x").quantization_exclude is None
    assert facts_from_config({"architectures": ["LlamaForCausalLM"]}, source="x").quantization_exclude is None


def test_mixed_precision_quantized_layers_are_read_with_their_algorithm() -> None:
    """ModelOpt MIXED_PRECISION lists quantized modules with their quant_algo (modelopt_quant.py); QT465 reads them."""
    mixed = {"quantization_config": {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION",
                                     "quantized_layers": {"mtp.fc": {"quant_algo": "nvfp4"}, "model.layers.0.mlp": {"quant_algo": "FP8"}}}}
    facts = facts_from_config(mixed, source="x")
    assert facts.quant_algo == "MIXED_PRECISION"
    assert facts.quantized_layers == {"mtp.fc": "NVFP4", "model.layers.0.mlp": "FP8"}
    assert facts_from_config({"quantization_config": {"quant_method": "fp8"}}, source="x").quantized_layers is None


def test_encoder_configs_name_the_vision_and_audio_sections_that_are_objects() -> None:
    """MiMo-V2 is multimodal only with both sections (models/mimo_v2.py); DM464 reads them."""
    both = {"vision_config": {"depth": 32}, "audio_config": {"d_model": 1280}}
    assert facts_from_config(both, source="x").encoder_configs == ("vision_config", "audio_config")
    assert facts_from_config({"vision_config": {"depth": 32}, "audio_config": None}, source="x").encoder_configs == ("vision_config",)
    assert facts_from_config({"architectures": ["LlamaForCausalLM"]}, source="x").encoder_configs == ()


def test_num_kv_shared_layers_is_read_from_gemma4s_text_config() -> None:
    assert facts_from_config({"text_config": {"num_kv_shared_layers": 20}}, source="x").num_kv_shared_layers == 20
    assert facts_from_config({"num_kv_shared_layers": 0}, source="x").num_kv_shared_layers == 0
    assert facts_from_config({"architectures": ["LlamaForCausalLM"]}, source="x").num_kv_shared_layers is None


def test_dflash_projector_type_is_dflash_configs_else_the_top_level() -> None:
    assert facts_from_config({"dflash_config": {"projector_type": "domino"}, "projector_type": "linear"}, source="x").dflash_projector_type == "domino"
    assert facts_from_config({"projector_type": "domino"}, source="x").dflash_projector_type == "domino"
    assert facts_from_config({"dflash_config": {}}, source="x").dflash_projector_type is None


def test_rope_parameters_form_is_normalised() -> None:
    facts = facts_from_config(
        {"rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0}, "dtype": "bfloat16"}, source="x"
    )
    assert facts.rope_theta == 500000.0
    assert facts.rope_scaling == {"rope_type": "llama3", "factor": 8.0}


@pytest.mark.parametrize(
    ("content", "needle"),
    [("{not json", "is not valid JSON (line 1"), ("[1, 2]", "holds a JSON list, not an object")],
)
def test_bad_config_files(tmp_path: Path, content: str, needle: str) -> None:
    (tmp_path / "config.json").write_text(content)
    with pytest.raises(InputError) as error:
        load_facts(str(tmp_path))
    assert needle in error.value.one_line()


def test_directory_without_config(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="has no config.json"):
        load_facts(str(tmp_path), role="draft")


def test_repo_id_offline_and_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    # A model the catalog does not hold either (the catalog stands in for the ones it holds).
    with pytest.raises(InputError, match="not in the local Hugging Face cache"):
        load_facts("meta-llama/Llama-Guard-3-8B", offline=True)


def test_repo_id_offline_and_not_cached_falls_back_to_the_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    facts = load_facts("meta-llama/Llama-3.1-8B-Instruct", offline=True)
    assert facts.origin == "catalog"
    assert facts.max_position_embeddings == 131072 and facts.vocab_size == 128256
    assert facts.origin_detail and "catalog snapshot" in facts.origin_detail and "not in the local Hugging Face cache" in facts.origin_detail
    # A preset-style caller that has its own snapshot asks without the catalog.
    with pytest.raises(InputError):
        load_facts("meta-llama/Llama-3.1-8B-Instruct", offline=True, catalog=False)


def test_repo_id_read_from_a_real_hf_cache_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """hf_hub_download(local_files_only) resolves refs/main -> snapshots/<commit>/config.json, as the hub client lays it out."""
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    repo = cache / "models--meta-llama--Llama-3.1-8B-Instruct"
    commit = "0e9e39f249a16976918f6564b8830bc894c89659"
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text((HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct" / "config.json").read_text())
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    facts = load_facts("meta-llama/Llama-3.1-8B-Instruct", offline=True)
    assert facts.max_position_embeddings == 131072 and facts.revision == commit
    assert facts.origin == "hf-cache"  # the cache is read before the catalog
    pinned = load_facts(f"meta-llama/Llama-3.1-8B-Instruct@{commit}", offline=True)
    assert pinned.source.endswith("@" + commit)


def test_dflash_mask_token_ids_are_read_from_dflash_config_and_the_top_level() -> None:
    # parse_dflash_draft_config: dflash_config.mask_token_id, else (0.5.18+) the top-level one (DM441)
    both = facts_from_config({"dflash_config": {"mask_token_id": 151669}, "mask_token_id": 3}, source="x")
    assert (both.dflash_mask_token_id, both.mask_token_id) == (151669, 3)
    assert facts_from_config({"mask_token_id": 3}, source="x").dflash_mask_token_id is None
    assert facts_from_config({}, source="x").mask_token_id is None


def test_dflash_sliding_window_switches_are_read_where_sglang_and_transformers_read_them() -> None:
    # Qwen3Config keeps sliding_window only with use_sliding_window (DM440); swa_window_size is dflash_config's
    draft = facts_from_config({"use_sliding_window": True, "dflash_config": {"swa_window_size": 512}}, source="x")
    assert (draft.use_sliding_window, draft.dflash_swa_window_size) == (True, 512)
    assert facts_from_config({"text_config": {"use_sliding_window": False}}, source="x").use_sliding_window is False
    assert facts_from_config({"swa_window_size": 512}, source="x").dflash_swa_window_size is None


def test_inkling_banded_mtp_depths_are_read_where_sglang_reads_them() -> None:
    # InklingMMConfig: a non-empty mtp_config.local_layer_ids replaces text_config.mtp_local_layer_ids (SP488)
    text = {"architectures": ["InklingForConditionalGeneration"], "text_config": {"mtp_local_layer_ids": [1]}}
    assert facts_from_config(text, source="x").mtp_local_layer_ids == (1,)
    both = {**text, "mtp_config": {"local_layer_ids": [0, 2]}}
    assert facts_from_config(both, source="x").mtp_local_layer_ids == (0, 2)
    empty = {**text, "mtp_config": {"local_layer_ids": []}}
    assert facts_from_config(empty, source="x").mtp_local_layer_ids == (1,)
    assert facts_from_config({"text_config": {}}, source="x").mtp_local_layer_ids is None
    # no text_config: SGLang reads its default config, never a top-level key
    assert facts_from_config({"mtp_local_layer_ids": [1]}, source="x").mtp_local_layer_ids is None
    with pytest.raises(InputError, match="mtp_config.local_layer_ids"):
        facts_from_config({"mtp_config": {"local_layer_ids": "0"}}, source="x")


def test_nemotron_35_draft_layout_and_top_level_sink_are_read_as_dflash_utils_reads_them() -> None:
    # dflash_utils.is_nemotron_35_draft_config (0.5.19 :469-505): every clause must hold; models/dflash.py reads the
    # sink as the top-level attention_sink_bias.
    layout = {
        "architectures": ["DFlashDraftModel"],
        "has_embed_tokens": True,
        "has_lm_head": False,
        "quantization_config": {"quant_algo": "W4A16_NVFP4"},
        "dflash_config": {"target_layer_ids": [1, 10], "sample_from_anchor": False},
        "eagle_aux_hidden_state_layer_ids": [2, 11],
        "attention_sink_bias": True,
    }
    draft = facts_from_config(layout, source="x")
    assert (draft.nemotron_35_draft_layout, draft.attention_sink_bias, draft.dflash_attention_sink_bias) == (True, True, None)
    assert facts_from_config({**layout, "eagle_aux_hidden_state_layer_ids": [1, 10]}, source="x").nemotron_35_draft_layout is False
    assert facts_from_config({**layout, "dflash_config": {"target_layer_ids": [1, 10]}}, source="x").nemotron_35_draft_layout is False
    assert facts_from_config({**layout, "has_lm_head": True}, source="x").nemotron_35_draft_layout is False
    top_level = {**layout, "dflash_config": {}, "target_layer_ids": [1, 10], "sample_from_anchor": False}
    assert facts_from_config(top_level, source="x").nemotron_35_draft_layout is True
    assert facts_from_config({}, source="x").attention_sink_bias is None


def test_minimax_sparse_attention_config_is_read_from_text_config_first() -> None:
    # get_minimax_sparse_attention_config (0.5.16 configs/model_config.py:144-155): text_config's section, else the top level's
    section = {"sparse_block_size": 128, "sparse_topk_blocks": 16}
    nested = facts_from_config({"text_config": {"sparse_attention_config": section}}, source="x")
    assert (nested.sparse_block_size, nested.sparse_topk_blocks) == (128, 16)
    top = facts_from_config({"text_config": {}, "sparse_attention_config": {"sparse_block_size": 64}}, source="x")
    assert (top.sparse_block_size, top.sparse_topk_blocks) == (64, None)
    assert facts_from_config({}, source="x").sparse_block_size is None
    # SGLang compares the raw values (minimax_sparse_backend.py:81-88): a string is not refused here, only unknown.
    assert facts_from_config({"sparse_attention_config": {"sparse_topk_blocks": "16"}}, source="x").sparse_topk_blocks is None


def test_dflash_parsed_options_are_dflash_configs_keys_as_written() -> None:
    draft = facts_from_config({"dflash_config": {"block_size": 16, "conv_kernel_size": 4, "output_multiplier": "x"}}, source="x")
    assert draft.dflash_parsed_options == {"conv_kernel_size": 4, "output_multiplier": "x"}
    assert facts_from_config({"dflash_config": {"block_size": 16}}, source="x").dflash_parsed_options == {}
    # parse_dflash_draft_config reads them inside dflash_config only.
    assert facts_from_config({"conv_kernel_size": 4}, source="x").dflash_parsed_options is None


def test_hyv4_indexer_types_are_read_from_the_top_level() -> None:
    # HYV4Config takes indexer_types as a top-level kwarg (0.5.20 configs/hy_v4.py:36,107-114); absent is unknown here.
    facts = facts_from_config({"architectures": ["HYV4ForCausalLM"], "indexer_types": ["full", "shared", "shared"]}, source="x")
    assert facts.indexer_types == ("full", "shared", "shared")
    assert facts_from_config({"architectures": ["HYV4ForCausalLM"]}, source="x").indexer_types is None
    # SGLang only tests `"shared" in` it and indexes it (0.5.20 arg_groups/model_hook.py:55-59): another shape is
    # not refused; present, it replaces the default list, its shared layers unknown.
    assert facts_from_config({"indexer_types": "shared"}, source="x").indexer_types == ()


def test_intermediate_size_mlp_is_read_from_the_config_or_its_text_config() -> None:
    # A llama4_text EAGLE3 head states it at the top level; a Llama-4 target under text_config (DM554).
    head = facts_from_config({"model_type": "llama4_text", "intermediate_size": 8192, "intermediate_size_mlp": 16384}, source="x")
    assert (head.model_type, head.intermediate_size, head.intermediate_size_mlp) == ("llama4_text", 8192, 16384)
    assert facts_from_config({"text_config": {"intermediate_size_mlp": 16384}}, source="x").intermediate_size_mlp == 16384
    assert facts_from_config({"intermediate_size": 8192}, source="x").intermediate_size_mlp is None


def test_qsa_indexer_facts_are_read_from_the_config_or_its_text_config() -> None:
    # parse_qsa_profile reads the text config (0.5.20 layers/attention/qsa/config.py:36-37, 80-88)
    qsa = facts_from_config({"text_config": {"indexer_n_heads": 32, "indexer_compress_ratio": 4}}, source="x")
    assert (qsa.indexer_n_heads, qsa.indexer_compress_ratio) == (32, 4)
    assert facts_from_config({}, source="x").indexer_compress_ratio is None
    # With a text_config SGLang reads only it; each value through int() (qsa/config.py:36-47).
    assert facts_from_config({"indexer_n_heads": 32, "text_config": {}}, source="x").indexer_n_heads is None
    assert facts_from_config({"indexer_n_heads": 32, "indexer_compress_ratio": "4"}, source="x").indexer_compress_ratio == 4
    assert facts_from_config({"indexer_compress_ratio": "four"}, source="x").indexer_compress_ratio is None


def test_learnable_sink_is_read_as_the_dsa_backend_defaults_read_it() -> None:
    # _dsa_split_backend_resolution: getattr(hf_config, "learnable_sink", False) (0.5.20 arg_groups/overrides.py:711)
    assert facts_from_config({"learnable_sink": True}, source="x").learnable_sink is True
    assert facts_from_config({}, source="x").learnable_sink is None
    # A truth test, not a typed flag: any truthy value counts.
    assert facts_from_config({"learnable_sink": 1}, source="x").learnable_sink is True
    assert facts_from_config({"learnable_sink": 0}, source="x").learnable_sink is False


def test_shared_expert_intermediate_size_is_read_from_the_config_or_its_text_config() -> None:
    # Qwen3.5 MoE keeps it in text_config; qwen2_moe.py can_fuse_shared_expert compares it with moe_intermediate_size.
    nested = facts_from_config({"text_config": {"shared_expert_intermediate_size": 512, "moe_intermediate_size": 512}}, source="x")
    assert (nested.shared_expert_intermediate_size, nested.moe_intermediate_size) == (512, 512)
    assert facts_from_config({"shared_expert_intermediate_size": 0}, source="x").shared_expert_intermediate_size == 0
    assert facts_from_config({}, source="x").shared_expert_intermediate_size is None
    # qwen2_moe.py only compares it with 0 (0.5.18 :134-135,151): a negative one is no shared expert, not refused.
    assert facts_from_config({"shared_expert_intermediate_size": -1}, source="x").shared_expert_intermediate_size == -1


def test_fp8_ignored_layers_are_read_as_fp8config_reads_them() -> None:
    # Fp8Config.from_config: ignored_layers, else modules_to_not_convert (0.5.12 layers/quantization/fp8.py:210-212).
    fp8 = {"quant_method": "fp8", "ignored_layers": ["midlayer.self_attn.kv_b_proj"]}
    assert facts_from_config({"quantization_config": fp8}, source="x").quantization_ignored == ("midlayer.self_attn.kv_b_proj",)
    other = {"quant_method": "fp8", "modules_to_not_convert": ["lm_head"]}
    assert facts_from_config({"quantization_config": other}, source="x").quantization_ignored == ("lm_head",)
    assert facts_from_config({"quantization_config": {"quant_method": "fp8"}}, source="x").quantization_ignored is None
    # Fp8Config iterates whatever it is given (fp8.py:213-219) and other methods read modules_to_not_convert with `in`:
    # another shape is not refused, only not read as a name list.
    string = {"quant_method": "fp8", "ignored_layers": "lm_head"}
    assert facts_from_config({"quantization_config": string}, source="x").quantization_ignored is None


def test_compressed_tensors_ignore_is_read_from_quantization_config() -> None:
    # CompressedTensorsConfig.from_config reads config["ignore"] (0.5.20 compressed_tensors.py:275; QT647).
    ct = {"quant_method": "compressed-tensors", "ignore": ["lm_head", "model.language_model.layers.78.self_attn.q_a_proj"]}
    assert facts_from_config({"quantization_config": ct}, source="x").quantization_ignore == ("lm_head", "model.language_model.layers.78.self_attn.q_a_proj")
    assert facts_from_config({"quantization_config": {"quant_method": "compressed-tensors"}}, source="x").quantization_ignore is None
    # Other methods read an "ignore" key of their own shape (humming.py iterates it): another shape is not refused,
    # only not read as a name list.
    string = {"quant_method": "compressed-tensors", "ignore": "lm_head"}
    assert facts_from_config({"quantization_config": string}, source="x").quantization_ignore is None


def test_fp8_scale_fmt_is_read_from_quantization_config() -> None:
    # LongCat-Flash FP8 on SM100 gets the flashinfer_trtllm FP8 GEMM unless scale_fmt is "ue8m0" (0.5.16 overrides.py:1400-1410).
    ue8m0 = {"quant_method": "fp8", "scale_fmt": "ue8m0"}
    assert facts_from_config({"quantization_config": ue8m0}, source="x").quant_scale_fmt == "ue8m0"
    assert facts_from_config({"quantization_config": {"quant_method": "fp8"}}, source="x").quant_scale_fmt is None
    # SGLang only compares it with "ue8m0", so any other value loads: it is read, never refused.
    assert facts_from_config({"quantization_config": {"quant_method": "fp8", "scale_fmt": 8}}, source="x").quant_scale_fmt != "ue8m0"
