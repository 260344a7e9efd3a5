"""Draft-vs-target facts from safetensors headers: the reader, the HF cache path, and DM100-DM104
through the real CLI, on checkpoints written with real names and shapes (sparse data sections)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from specguard.errors import InputError
from specguard.facts import load_facts
from specguard.weights import read_header
from tests.catalog.safetensors_files import (
    eagle2_head,
    eagle3_head,
    write_checkpoint,
    write_safetensors,
)
from tests.conftest import DRAFT_TEMPLATES, HF_CONFIGS, run_cli_json

LLAMA3_EAGLE3 = json.loads((DRAFT_TEMPLATES / "sgl-project-SpecForge" / "llama3-8B-eagle3.json").read_text())
QWEN3_235B_EAGLE3 = json.loads((DRAFT_TEMPLATES / "sgl-project-SpecForge" / "qwen3-235B-A22B-eagle3.json").read_text())
EAGLE2_LLAMA2 = json.loads((HF_CONFIGS / "yuhuili" / "EAGLE-llama2-chat-7B" / "config.json").read_text())
DRAFT_RULES = {"DM100", "DM101", "DM102", "DM103"}


def llama3_head(**changes) -> dict:
    """The tensors of an EAGLE3 head for Llama-3.1-8B with SpecForge's llama3-8B-eagle3.json shape."""
    c = LLAMA3_EAGLE3
    sizes = {"hidden": c["hidden_size"], "target_hidden": c["hidden_size"], "aux": 3, "intermediate": c["intermediate_size"],
                 "heads": c["num_attention_heads"], "kv_heads": c["num_key_value_heads"], "vocab": c["vocab_size"],
                 "draft_vocab": c["draft_vocab_size"], "dtype": "F16"}
    return eagle3_head(**{**sizes, **changes})


def check_eagle3(draft_dir: Path, target: str = "meta-llama/Llama-3.1-8B-Instruct") -> tuple[int, dict]:
    return run_cli_json("check", "--offline", "--", "--model-path", target, "--speculative-algorithm", "EAGLE3",
                        "--speculative-draft-model-path", str(draft_dir))


def codes(document: dict) -> set[str]:
    return {f["code"] for f in document["findings"]}


def test_header_reader_matches_the_safetensors_library(tmp_path: Path) -> None:
    safetensors = pytest.importorskip("safetensors")
    path = write_safetensors(tmp_path / "model.safetensors", llama3_head())
    header = read_header(path)
    with safetensors.safe_open(str(path), framework="numpy") as handle:
        assert set(handle.keys()) == set(header)
        for name in handle.keys():  # noqa: SIM118 - safe_open is not iterable
            assert tuple(handle.get_slice(name).get_shape()) == header[name][1]
    assert header["fc.weight"] == ("F16", (4096, 12288))
    assert path.stat().st_blocks * 512 < 1024 * 1024  # the 800 MB data section is a hole


def test_weight_facts_from_a_sharded_local_checkpoint(tmp_path: Path) -> None:
    tensors = llama3_head()
    names = list(tensors)
    shards = [{n: tensors[n] for n in names[:6]}, {n: tensors[n] for n in names[6:]}]
    facts = load_facts(str(write_checkpoint(tmp_path / "head", LLAMA3_EAGLE3, shards)), role="draft", weights=True)
    weights = facts.weights
    assert weights is not None and weights.tensor_count == len(tensors)
    assert weights.fc_shape == (4096, 12288) and weights.d2t_shape == (32000,) and weights.t2d_shape == (128256,)
    assert weights.lm_head_shape == (32000, 4096) and weights.embed_shape is None
    assert weights.stored_dtypes == ("F16",) and weights.quantized_tensors == 0
    assert facts.origin == "local"


def test_a_shard_the_index_names_but_is_missing_is_bad_input(tmp_path: Path) -> None:
    directory = write_checkpoint(tmp_path / "head", LLAMA3_EAGLE3, [{"fc.weight": ("F16", (4096, 12288))}, {"d2t": ("I64", (32000,))}])
    (directory / "model-00002-of-00002.safetensors").unlink()
    with pytest.raises(InputError, match="names shard model-00002-of-00002.safetensors, which is missing"):
        load_facts(str(directory), role="draft", weights=True)


def test_a_damaged_header_is_bad_input(tmp_path: Path) -> None:
    directory = write_checkpoint(tmp_path / "head", LLAMA3_EAGLE3, [llama3_head()])
    (directory / "model.safetensors").write_bytes(b"\xff" * 16)
    result_code, document = check_eagle3(directory)
    assert result_code == 2 and "safetensors header" in document["error"]


def test_weights_read_from_a_real_hf_cache_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """models--ORG--NAME/snapshots/<commit>/ with refs/main, as huggingface_hub lays it out."""
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    repo = cache / "models--lmsys--Qwen3-235B-A22B-EAGLE3"
    commit = "1" * 40
    c = QWEN3_235B_EAGLE3
    head = eagle3_head(hidden=c["hidden_size"], target_hidden=c["hidden_size"], aux=3, intermediate=c["intermediate_size"],
                       heads=c["num_attention_heads"], kv_heads=c["num_key_value_heads"], vocab=c["vocab_size"],
                       draft_vocab=c["draft_vocab_size"])
    write_checkpoint(repo / "snapshots" / commit, c, [head])
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    facts = load_facts("lmsys/Qwen3-235B-A22B-EAGLE3", offline=True, role="draft", weights=True)
    assert facts.origin == "hf-cache" and facts.revision == commit
    assert facts.weights is not None and facts.weights.fc_shape == (4096, 3 * 4096)
    assert facts.weights.source.startswith("HF cache ")


def test_a_complete_eagle3_head_passes_every_weight_rule(tmp_path: Path) -> None:
    _code, document = check_eagle3(write_checkpoint(tmp_path / "head", LLAMA3_EAGLE3, [llama3_head()]))
    assert not codes(document) & DRAFT_RULES, document["findings"]
    assert document["draft"]["weights"]["fc_shape"] == [4096, 12288]
    assert document["target"]["origin"] == "catalog"


def test_eagle2_head_passed_as_eagle3_is_caught_from_headers(tmp_path: Path) -> None:
    """yuhuili's EAGLE-2 llama2 config relabelled as EAGLE3: only the fc width tells."""
    config = {**EAGLE2_LLAMA2, "architectures": ["LlamaForCausalLMEagle3"]}
    head = eagle2_head(hidden=config["hidden_size"], intermediate=config["intermediate_size"],
                       heads=config["num_attention_heads"], kv_heads=config["num_attention_heads"])
    code, document = check_eagle3(write_checkpoint(tmp_path / "head", config, [head]), target="meta-llama/Llama-2-7b-chat-hf")
    assert code == 1 and "DM100" in codes(document)
    assert "DM101" not in codes(document)  # one finding for one cause


def test_eagle3_head_with_the_wrong_aux_layer_count_is_caught(tmp_path: Path) -> None:
    """fc trained on 4 aux states while the config names 3 layers."""
    config = {**LLAMA3_EAGLE3, "eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 15, 28]}}
    code, document = check_eagle3(write_checkpoint(tmp_path / "head", config, [llama3_head(aux=4)]))
    assert code == 1 and "DM101" in codes(document)
    message = next(f["message"] for f in document["findings"] if f["code"] == "DM101")
    assert "4 aux hidden states" in message and "[1, 15, 28]" in message


def test_eagle3_head_missing_d2t_is_caught(tmp_path: Path) -> None:
    code, document = check_eagle3(write_checkpoint(tmp_path / "head", LLAMA3_EAGLE3, [llama3_head(d2t=False)]))
    assert code == 1 and "DM102" in codes(document)


def test_eagle3_head_missing_lm_head_is_caught(tmp_path: Path) -> None:
    code, document = check_eagle3(write_checkpoint(tmp_path / "head", LLAMA3_EAGLE3, [llama3_head(lm_head=False)]))
    assert code == 1 and "DM103" in codes(document)


def _deepseek_v3_target(tmp_path: Path, *, with_mtp: bool) -> Path:
    """DeepSeek-V3's real config (catalog copy) and a few of its real tensor names: layer 61 is the MTP layer."""
    from specguard import catalog

    config = catalog.lookup("deepseek-ai/DeepSeek-V3").document()
    shard1 = {
        "model.embed_tokens.weight": ("BF16", (129280, 7168)),
        "model.layers.0.input_layernorm.weight": ("BF16", (7168,)),
        "model.layers.0.self_attn.kv_a_proj_with_mqa.weight": ("F8_E4M3", (576, 7168)),
        "model.layers.0.self_attn.kv_a_proj_with_mqa.weight_scale_inv": ("F32", (5, 56)),
    }
    shard2 = {"model.norm.weight": ("BF16", (7168,)), "lm_head.weight": ("BF16", (129280, 7168))}
    if with_mtp:
        shard2 |= {"model.layers.61.eh_proj.weight": ("F8_E4M3", (7168, 14336)), "model.layers.61.enorm.weight": ("BF16", (7168,))}
    return write_checkpoint(tmp_path / "DeepSeek-V3", config, [shard1, shard2])


@pytest.mark.parametrize("with_mtp", [False, True])
def test_mtp_target_without_mtp_weights_is_caught(tmp_path: Path, with_mtp: bool) -> None:
    target = _deepseek_v3_target(tmp_path, with_mtp=with_mtp)
    _code, document = run_cli_json("check", "--offline", "--", "--model-path", str(target), "--speculative-algorithm", "EAGLE", "--tp-size", "8")
    assert ("DM104" in codes(document)) is (not with_mtp), document["findings"]
    weights = document["target"]["weights"]
    assert weights["mtp_tensors"] == (2 if with_mtp else 0) and weights["quantized_tensors"] >= 2


def test_a_four_aux_head_whose_config_names_four_layers_loads_from_0_5_12_only(tmp_path: Path) -> None:
    """SGLang sizes fc from the config from 0.5.12 on; 0.5.11 always builds it for 3 aux states."""
    config = {**LLAMA3_EAGLE3, "eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 10, 20, 28]}}
    directory = write_checkpoint(tmp_path / "head", config, [llama3_head(aux=4)])
    _, current = check_eagle3(directory)
    assert "DM101" not in codes(current)
    _code, old = run_cli_json("check", "--offline", "--sglang-version", "0.5.11", "--", "--model-path", "meta-llama/Llama-3.1-8B-Instruct",
                             "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", str(directory))
    message = next(f["message"] for f in old["findings"] if f["code"] == "DM101")
    assert "3 aux states whatever the config says" in message


def test_models_show_of_a_local_checkpoint_lists_the_header_facts(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    directory = write_checkpoint(tmp_path / "head", LLAMA3_EAGLE3, [llama3_head(d2t=False)])
    result = run_cli("models", "show", str(directory), "--format", "json")
    assert result.returncode == 0, result.stderr
    rows = {row["fact"]: row for row in json.loads(result.stdout)["facts"]}
    assert rows["weights.fc_shape"]["value"] == [4096, 12288] and rows["weights.fc_shape"]["from"] == str(directory)
    assert "weights.d2t_shape" not in rows  # absent, not guessed
    assert rows["draft_vocab_size"]["value"] == 32000 and rows["draft_vocab_size"]["from"] == "local directory"


def _blob_linked_snapshot(repo: Path, commit: str, config: dict, shards: list[dict]) -> Path:
    """A snapshot as huggingface_hub writes it: every file a symlink to ../../blobs/<hash>."""
    staged = write_checkpoint(repo / "staged", config, shards)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (repo / "blobs").mkdir()
    for number, path in enumerate(sorted(staged.iterdir())):
        path.rename(repo / "blobs" / f"blob{number}")
        os.symlink(f"../../blobs/blob{number}", snapshot / path.name)
    staged.rmdir()
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    return snapshot


def test_a_sharded_hf_cache_snapshot_of_blob_links_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    tensors = llama3_head()
    names = list(tensors)
    shards = [{n: tensors[n] for n in names[:6]}, {n: tensors[n] for n in names[6:]}]
    _blob_linked_snapshot(tmp_path / "hub" / "models--org--head", "2" * 40, LLAMA3_EAGLE3, shards)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    facts = load_facts("org/head", offline=True, role="draft", weights=True)
    assert facts.weights is not None and facts.weights.tensor_count == len(tensors)


def test_a_cached_index_naming_a_file_outside_the_snapshot_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    snapshot = _blob_linked_snapshot(tmp_path / "hub" / "models--org--head", "3" * 40, LLAMA3_EAGLE3, [llama3_head(), {"d2t": ("I64", (32000,))}])
    index = snapshot / "model.safetensors.index.json"
    index.unlink()
    index.write_text(json.dumps({"weight_map": {"fc.weight": "../../../../../../etc/hostname"}}))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(InputError, match=r'weight_map entry "fc.weight" names "\.\./\.\./.*climbs out'):
        load_facts("org/head", offline=True, role="draft", weights=True)


def test_a_local_folder_whose_shards_link_into_the_hf_cache_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`hf download --local-dir` before huggingface_hub 0.23 linked large files into the cache's blobs."""
    from huggingface_hub import constants

    blobs = tmp_path / "hub" / "models--org--head" / "blobs"
    blobs.mkdir(parents=True)
    write_safetensors(blobs / "abc", llama3_head())
    local = tmp_path / "local"
    local.mkdir()
    (local / "config.json").write_text(json.dumps(LLAMA3_EAGLE3))
    os.symlink(blobs / "abc", local / "model.safetensors")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    facts = load_facts(str(local), role="draft", weights=True)
    assert facts.weights is not None and facts.weights.fc_shape == (4096, 12288)


def test_a_local_shard_linked_anywhere_else_is_refused(tmp_path: Path) -> None:
    elsewhere = write_safetensors(tmp_path / "elsewhere.safetensors", llama3_head())
    local = tmp_path / "local"
    local.mkdir()
    (local / "config.json").write_text(json.dumps(LLAMA3_EAGLE3))
    os.symlink(elsewhere, local / "model.safetensors")
    with pytest.raises(InputError, match="is a symlink to .*elsewhere.safetensors, outside the folder"):
        load_facts(str(local), role="draft", weights=True)


def test_a_d2t_table_under_another_prefix_is_the_heads_d2t(tmp_path: Path) -> None:
    """SGLang's EAGLE3 loader takes any tensor whose name contains "d2t" (0.5.23 llama_eagle3.py:350),
    so a head that stores it as ``draft_model.d2t`` has one: no false "missing d2t"."""
    tensors = {("draft_model.d2t" if name == "d2t" else name): spec for name, spec in llama3_head().items()}
    facts = load_facts(str(write_checkpoint(tmp_path / "head", LLAMA3_EAGLE3, [tensors])), role="draft", weights=True)
    assert facts.weights is not None and facts.weights.d2t_shape == (32000,)


def test_name_roots_are_the_first_dotted_part_of_each_tensor_name() -> None:
    """IQuestQ1MTP refuses a tensor outside embed_tokens, lm_head, target_final_norm and mtp.* (0.5.21
    iquest_q1_mtp.py:187-200; DM645): the roots say where a checkpoint keeps its tensors."""
    from specguard.weights import weight_facts

    header = {
        "mtp.eh_proj.weight": ("BF16", (4096, 8192)),
        "mtp.enorm.weight": ("BF16", (4096,)),
        "model.embed_tokens.weight": ("BF16", (151936, 4096)),
        "lm_head.weight": ("BF16", (151936, 4096)),
        "d2t": ("I64", (32000,)),
    }
    facts = weight_facts(header, source="test", num_hidden_layers=None)
    assert facts.name_roots == ("d2t", "lm_head", "model", "mtp")
    assert weight_facts({}, source="test", num_hidden_layers=None).name_roots == ()
