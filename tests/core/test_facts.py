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
