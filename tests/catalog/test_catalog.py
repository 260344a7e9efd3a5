"""The shipped catalog: every entry sourced, readable and the bytes its source gave, lazy lookups,
`specguard models`, and offline checks of real target/draft pairs that run on catalog facts and
say so. A copy is compared with its upstream commit by ``scripts/build_catalog.py --check``
(it needs clones); here, with the sha256 its ``source.json`` records."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from specguard import catalog
from specguard.facts import catalog_facts, facts_from_config
from tests.conftest import REPO, run_cli, run_cli_json

ENTRIES = catalog.index()["models"]
SOURCE_OF_A_COPY = re.compile(r"^[\w.-]+/[\w.-]+ ?@ ?[0-9a-f]{8,40} ?: ?\S+")


def test_catalog_has_its_snapshot_date_and_over_a_hundred_models() -> None:
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", catalog.snapshot_date())
    assert len(ENTRIES) >= 150  # the floor
    assert len({e["model"].lower() for e in ENTRIES}) == len(ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["model"] for e in ENTRIES])
def test_every_entry_is_sourced_and_normalises(entry: dict) -> None:
    found = catalog.lookup(entry["model"])
    assert found is not None and found.model == entry["model"] and found.source
    document = found.document()
    if found.kind == "config":
        # A copy of a public copy: repo@commit:path, never a hand-written file.
        assert SOURCE_OF_A_COPY.match(found.source), found.source
        facts = facts_from_config(document, source=entry["model"])
        assert facts.architecture == entry["architecture"]
        assert facts.hidden_size or facts.model_type  # a model config, not some other JSON
    else:
        assert found.kind == "facts" and "found" in found.fidelity
        facts = catalog_facts(entry["model"], source=entry["model"], revision=None)
        assert facts is not None and facts.origin == "catalog"


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["model"] for e in ENTRIES])
def test_every_file_is_the_bytes_its_source_gave(entry: dict) -> None:
    """The build records the sha256 of what it read (a commit's file, a kept copy, a preset's
    facts); a shipped file edited since, by hand or by a tool, no longer matches it."""
    found = catalog.lookup(entry["model"])
    assert found is not None
    recorded = json.loads((found.folder / "source.json").read_text(encoding="utf-8"))["sha256"]
    assert hashlib.sha256(found.path.read_bytes()).hexdigest() == recorded


def _build_catalog_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_catalog", REPO / "scripts" / "build_catalog.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILD = _build_catalog_module()


@pytest.mark.parametrize("model", sorted(BUILD.READ_COPIES))
def test_read_copies_are_byte_identical_to_the_file_read(model: str) -> None:
    """Copies read with read_file are kept under scripts/catalog_sources/OWNER+REPO@COMMIT/PATH."""
    repo, commit, path = BUILD.READ_COPIES[model]
    entry = catalog.lookup(model)
    assert entry is not None and entry.kind == "config" and entry.source == f"{repo}@{commit}:{path}"
    kept = BUILD.READ_COPIES_DIR / f"{repo.replace('/', '+')}@{commit}" / path
    assert entry.path.read_bytes() == kept.read_bytes()


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


def _copy_of(models: Path, model: str, source: str, data: bytes, sha256: str) -> None:
    folder = models / model
    folder.mkdir(parents=True)
    (folder / "config.json").write_bytes(data)
    meta = {"model": model, "kind": "config", "source": source, "date": None, "fidelity": "", "sha256": sha256}
    (folder / "source.json").write_text(json.dumps(meta))


def test_the_upstream_check_compares_each_copy_with_its_commit(tmp_path: Path) -> None:
    """``build_catalog.py --check`` on a real clone: a faithful copy passes, an edited one and a
    recorded sha256 that is not the commit's are named, and a repository with no clone is said."""
    clone = tmp_path / "clones" / "org+models" / "repo"
    clone.mkdir(parents=True)
    _git(clone, "init", "-q")
    (clone / "config.json").write_bytes(b'{"hidden_size": 4096}\n')
    _git(clone, "add", "config.json")
    _git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "config")
    commit = _git(clone, "rev-parse", "HEAD")
    upstream = b'{"hidden_size": 4096}\n'
    digest = hashlib.sha256(upstream).hexdigest()
    models = tmp_path / "models"
    _copy_of(models, "org/faithful", f"org/models@{commit}:config.json", upstream, digest)
    _copy_of(models, "org/edited", f"org/models@{commit}:config.json", b'{"hidden_size": 4097}\n', digest)
    _copy_of(models, "org/misrecorded", f"org/models@{commit}:config.json", upstream, hashlib.sha256(b"other").hexdigest())
    _copy_of(models, "org/elsewhere", f"other/repo@{commit}:config.json", upstream, digest)
    checked, problems, unmirrored = BUILD.check_copies(models, tmp_path / "clones")
    assert checked == 3 and unmirrored == {"other/repo"}
    assert sorted(problem.split(":", 1)[0] for problem in problems) == ["org/edited", "org/misrecorded"]


@pytest.mark.parametrize("model", sorted(BUILD.HF_PAGES))
def test_hf_page_entries_state_the_page_s_facts_and_cite_it(model: str) -> None:
    entry = catalog.lookup(model)
    assert entry is not None and entry.kind == "facts" and entry.source == BUILD.HF_PAGES[model][0]
    page = json.loads((BUILD.READ_COPIES_DIR / "huggingface.co" / model / "config.json.page.json").read_text())
    stated = entry.document()
    assert stated["architectures"] == page["architectures"] and stated["hidden_size"] == page["hidden_size"]
    assert stated["max_position_embeddings"] == page["max_position_embeddings"]
    assert stated.get("draft_vocab_size") == page.get("draft_vocab_size")


def test_the_published_gpt_oss_draft_is_not_specforge_s_template() -> None:
    """Why SpecForge's templates are not a catalog source: the published file differs (its HF commit page)."""
    stated = catalog.lookup("lmsys/EAGLE3-gpt-oss-120b-bf16").document()
    assert (stated["intermediate_size"], stated["num_attention_heads"], stated["head_dim"], stated["max_position_embeddings"]) == (16384, 32, 128, 131072)
    assert "vocab_size" not in stated  # beyond the lines the page shows


def test_lookup_is_case_insensitive_like_the_hub_and_rejects_paths() -> None:
    assert catalog.lookup("qwen/qwen3-235b-a22b").model == "Qwen/Qwen3-235B-A22B"
    assert catalog.lookup("../etc/passwd") is None
    assert catalog.lookup("Qwen/../../x") is None


PROBE = """
import json, sys
opened = []
import pathlib
real_read_text = pathlib.Path.read_text
def read_text(self, *args, **kwargs):
    opened.append(str(self))
    return real_read_text(self, *args, **kwargs)
pathlib.Path.read_text = read_text
from specguard.facts import load_facts
load_facts("Qwen/Qwen3-235B-A22B", offline=True)
print(json.dumps([p for p in opened if "/specguard/catalog/" in p]))
print(sorted(m for m in sys.modules if m.startswith("huggingface_hub.")), file=sys.stderr)
"""


def test_an_offline_lookup_reads_only_the_entry_asked_for() -> None:
    """Lazy: the asked-for entry's two files, not the index, and the hub client is not loaded."""
    env = {"HF_HUB_CACHE": str(REPO / "no-such-cache"), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    opened = json.loads(result.stdout)
    assert sorted(Path(p).name for p in opened) == ["config.json", "snapshot.json", "source.json"], opened
    assert all("Qwen3-235B-A22B" in p for p in opened if not p.endswith("snapshot.json"))
    assert "huggingface_hub.file_download" not in result.stderr


def test_models_lists_the_catalog_as_json() -> None:
    code, document = run_cli_json("models")
    assert code == 0 and document["snapshot_date"] == catalog.snapshot_date()
    assert [m["model"] for m in document["models"]] == [e["model"] for e in ENTRIES]


def test_models_show_prints_each_fact_and_where_it_came_from() -> None:
    result = run_cli("models", "show", "deepseek-ai/DeepSeek-V3", "--offline", "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    facts = {row["fact"]: row for row in document["facts"]}
    assert facts["num_nextn_predict_layers"]["value"] == 1
    assert "specguard catalog" in facts["hidden_size"]["from"] and "ai-dynamo/aiconfigurator@" in facts["hidden_size"]["from"]
    assert document["model"]["origin"] == "catalog"
    human = run_cli("models", "show", "deepseek-ai/DeepSeek-V3", "--offline")
    assert "DeepseekV3ForCausalLM" in human.stdout and "catalog" in human.stdout


def test_models_show_of_an_unknown_model_is_one_clear_line() -> None:
    result = run_cli("models", "show", "microsoft/Phi-3-mini-4k-instruct", "--offline")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "catalog has no copy" in result.stderr and len(result.stderr.strip().splitlines()) == 1


# Target/draft pairs of the seed documents and the presets (each draft's facts cite their source),
# and MTP targets that are their own draft. Each runs offline from catalog facts alone.
PAIRS = [
    ("Qwen/Qwen3-235B-A22B", "EAGLE3", "lmsys/Qwen3-235B-A22B-EAGLE3"),
    ("meta-llama/Llama-3.1-8B-Instruct", "EAGLE3", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B"),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "EAGLE3", "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B"),
    ("meta-llama/Llama-2-7b-chat-hf", "EAGLE", "lmsys/sglang-EAGLE-llama2-chat-7B"),
    ("meta-llama/Meta-Llama-3-8B-Instruct", "EAGLE", "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B"),
    ("meta-llama/Llama-3.1-8B-Instruct", "DFLASH", "z-lab/LLaMA3.1-8B-Instruct-DFlash-UltraChat"),
    ("Qwen/Qwen2.5-7B-Instruct", "STANDALONE", "Qwen/Qwen2.5-1.5B-Instruct"),
    ("deepseek-ai/DeepSeek-V3", "EAGLE", None),
    ("deepseek-ai/DeepSeek-R1", "EAGLE", None),
    ("deepseek-ai/DeepSeek-V3.1", "EAGLE", None),
    ("deepseek-ai/DeepSeek-V3.2", "EAGLE", None),
    ("nvidia/DeepSeek-V3.1-NVFP4", "EAGLE", None),
    ("zai-org/GLM-4.5", "EAGLE", None),
    ("zai-org/GLM-4.7-FP8", "EAGLE", None),
    ("zai-org/GLM-4.7-Flash", "EAGLE", None),
    ("zai-org/GLM-5", "EAGLE", None),
    ("zai-org/GLM-5.1", "EAGLE", None),
    ("XiaomiMiMo/MiMo-7B-RL", "EAGLE", None),
    ("XiaomiMiMo/MiMo-7B-Base", "EAGLE", None),
    ("XiaomiMiMo/MiMo-V2-Flash", "EAGLE", None),
    ("Qwen/Qwen3-Next-80B-A3B-Thinking", "EAGLE", None),
    ("Qwen/Qwen3.5-397B-A17B", "EAGLE", None),
    ("Qwen/Qwen3.5-27B", "EAGLE", None),
    ("Qwen/Qwen3.5-9B", "EAGLE", None),
    ("moonshotai/Kimi-K2-Instruct", "EAGLE", None),
    # Published drafts whose HF page shows their config.json, with the targets they were trained for.
    ("openai/gpt-oss-120b", "EAGLE3", "lmsys/EAGLE3-gpt-oss-120b-bf16"),
    ("moonshotai/Kimi-K2-Instruct", "EAGLE3", "AQ-MedAI/Kimi-K2-Instruct-eagle3"),
    ("moonshotai/Kimi-K2.5", "EAGLE3", "AQ-MedAI/Kimi-K25-eagle3"),
    ("meta-llama/Llama-2-7b-chat-hf", "EAGLE", "yuhuili/EAGLE-llama2-chat-7B"),
]


@pytest.mark.parametrize(("target", "algorithm", "draft"), PAIRS, ids=[f"{t}+{d or 'mtp'}" for t, _, d in PAIRS])
def test_offline_pair_runs_on_catalog_facts_and_says_so(target: str, algorithm: str, draft: str | None) -> None:
    argv = ["--model-path", target, "--speculative-algorithm", algorithm, "--tp-size", "8"]
    if draft:
        argv += ["--speculative-draft-model-path", draft]
    code, document = run_cli_json("check", "--offline", "--", *argv)
    assert code in (0, 1), document
    assert document["target"]["origin"] == "catalog" and "catalog snapshot" in document["target"]["origin_detail"]
    if draft:
        assert document["draft"]["origin"] == "catalog"
        assert document["draft"]["architectures"] or document["draft"]["max_position_embeddings"]
    human = run_cli("check", "--offline", "--", *argv)
    assert "target facts: specguard catalog" in human.stdout
    assert not draft or "draft facts: specguard catalog" in human.stdout


def test_the_seed_pair_runs_the_draft_vs_target_rules_on_catalog_facts() -> None:
    """The issue's example: the head's aux layers [1, 46, 90] are checked against the real 94 layers."""
    code, document = run_cli_json("check", "--offline", "--", "--model-path", "Qwen/Qwen3-32B", "--speculative-algorithm", "EAGLE3",
                                  "--speculative-draft-model-path", "lmsys/Qwen3-235B-A22B-EAGLE3")
    assert code == 1 and "DM013" in {f["code"] for f in document["findings"]}  # a 64-layer target
    code, document = run_cli_json("check", "--offline", "--", "--model-path", "Qwen/Qwen3-235B-A22B", "--speculative-algorithm", "EAGLE3",
                                  "--speculative-draft-model-path", "lmsys/Qwen3-235B-A22B-EAGLE3")
    assert "DM013" not in {f["code"] for f in document["findings"]}
    assert document["target"]["num_hidden_layers"] == 94 and document["draft"]["eagle_aux_hidden_state_layer_ids"] == [1, 46, 90]


def test_gpt_oss_eagle3_draft_aux_layers_are_checked_against_the_target() -> None:
    """gpt-oss-120b has 36 layers; its lmsys draft captures [1, 17, 33], inside them: no DM013."""
    _code, document = run_cli_json("check", "--offline", "--", "--model-path", "openai/gpt-oss-120b", "--speculative-algorithm", "EAGLE3",
                                  "--speculative-draft-model-path", "lmsys/EAGLE3-gpt-oss-120b-bf16")
    assert document["target"]["num_hidden_layers"] == 36 and document["draft"]["eagle_aux_hidden_state_layer_ids"] == [1, 17, 33]
    assert not {"DM013", "DM002"} & {f["code"] for f in document["findings"]}  # 131072 positions, like the target
    _code, document = run_cli_json("check", "--offline", "--", "--model-path", "openai/gpt-oss-20b", "--speculative-algorithm", "EAGLE3",
                                  "--speculative-draft-model-path", "lmsys/EAGLE3-gpt-oss-120b-bf16")
    assert document["target"]["num_hidden_layers"] == 24
    assert "DM013" in {f["code"] for f in document["findings"]}  # layer 33 of a 24-layer target
