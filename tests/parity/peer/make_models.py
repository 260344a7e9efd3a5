#!/usr/bin/env python3
"""Write config.json-only local model directories for the SGLang peer harness.

    python tests/parity/peer/make_models.py DIR            # writes DIR/<name>/config.json
    python tests/parity/peer/make_models.py DIR --list     # prints name -> source

Every config.json is a byte copy of a fixture under $SPECGUARD_FIXTURES (else
<repo>/../shared/fixtures), except for the one documented kind of edit: renaming
``architectures`` the way the sglang-EAGLE re-uploads do (see MODELS.md). Nothing else is
added or changed. Runs under any Python 3 (no sglang import).

Only config.json is needed: SGLang 0.5.23's prepare_server_args -> resolve_once ->
check_server_args reads the target's config.json (via transformers AutoConfig) and, for a
local --speculative-draft-model-path, the draft's config.json. No tokenizer, weights or
generation_config.json is read at argument-resolution time (checked for every case in
test_peer_smoke.py and the catalogue examples). A path that does not exist is treated
as a Hub repo id and fails offline with OSError, so directories must exist.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path


def _default_fixtures() -> Path:
    env = os.environ.get("SPECGUARD_FIXTURES")
    if env:
        return Path(env)
    # <repo>/../shared/fixtures: the layout tests/conftest.py assumes.
    return Path(__file__).resolve().parents[4] / "shared" / "fixtures"


FIXTURES = _default_fixtures()
HF = "hf-configs"
DT = "draft-templates"

# name -> (fixture path relative to FIXTURES, architectures rename or None, note)
MODELS: dict[str, tuple[str, list[str] | None, str]] = {
    # ---- targets (verbatim HF configs) ----
    "llama31-8b-bf16": (f"{HF}/meta-llama/Llama-3.1-8B-Instruct/config.json", None,
                        "LlamaForCausalLM, bf16, max_pos 131072"),
    "llama2-7b-chat": (f"{HF}/meta-llama/Llama-2-7b-chat-hf/config.json", None,
                       "early HF revision, max_pos 2048"),
    "qwen2.5-7b-bf16": (f"{HF}/Qwen/Qwen2.5-7B-Instruct/config.json", None,
                        "Qwen2ForCausalLM, vocab 152064, max_pos 32768"),
    "qwen3-32b-bf16": (f"{HF}/Qwen/Qwen3-32B/config.json", None,
                       "Qwen3ForCausalLM, max_pos 40960"),
    "qwen3-235b-a22b": (f"{HF}/Qwen/Qwen3-235B-A22B/config.json", None,
                        "Qwen3MoeForCausalLM"),
    "deepseek-v3": (f"{HF}/deepseek-ai/DeepSeek-V3/config.json", None,
                    "DeepseekV3ForCausalLM, num_nextn_predict_layers 1 (MTP), fp8 quantization_config"),
    "deepseek-r1": (f"{HF}/deepseek-ai/DeepSeek-R1/config.json", None,
                    "DeepseekV3ForCausalLM (MTP)"),
    # ---- drafts ----
    # The catalogue's $E draft: SpecForge llama3-8B EAGLE3 template (fp16, max_pos 2048) with
    # architectures renamed to the EAGLE-1 class, as sglang-EAGLE copies do.
    "eagle-llama31-draft-fp16-2k": (f"{DT}/sgl-project-SpecForge/llama3-8B-eagle3.json",
                                    ["LlamaForCausalLMEagle"],
                                    "SpecForge llama3-8B-eagle3 template, architectures -> LlamaForCausalLMEagle"),
    "eagle3-llama31-draft-fp16-2k": (f"{DT}/sgl-project-SpecForge/llama3-8B-eagle3.json", None,
                                     "SpecForge llama3-8B-eagle3 template verbatim (LlamaForCausalLMEagle3)"),
    "eagle3-qwen2.5-7b-draft": (f"{DT}/sgl-project-SpecForge/qwen2.5-7b-eagle3.json", None,
                                "SpecForge qwen2.5-7b-eagle3 template verbatim"),
    "eagle3-qwen3-32b-draft": (f"{DT}/sgl-project-SpecForge/qwen3-32b-eagle3.json", None,
                               "SpecForge qwen3-32b-eagle3 template verbatim"),
    "eagle3-qwen3-235b-draft": (f"{DT}/sgl-project-SpecForge/qwen3-235B-A22B-eagle3.json", None,
                                "SpecForge qwen3-235B-A22B-eagle3 template verbatim"),
    "angelslim-qwen3-32b-eagle3": (f"{DT}/Tencent-AngelSlim/qwen3-32b-eagle3.json", None,
                                   "AngelSlim template verbatim (vLLM-style Eagle3LlamaForCausalLM)"),
    "dflash-draft": (f"{DT}/sgl-project-SpecForge/qwen3-8b-dflash.json", None,
                     "SpecForge qwen3-8b-dflash template verbatim (DFlashDraftModel, block_size 16)"),
    "eagle-llama2-chat-7b": (f"{HF}/yuhuili/EAGLE-llama2-chat-7B/config.json",
                             ["LlamaForCausalLMEagle"],
                             ("yuhuili/EAGLE-llama2-chat-7B, architectures -> LlamaForCausalLMEagle "
                             "(what lmsys/sglang-EAGLE-llama2-chat-7B changes)")),
}


def write_models(dest: Path, names: list[str] | None = None) -> dict[str, Path]:
    dest = Path(dest)
    out: dict[str, Path] = {}
    for name, (rel, arch, _note) in MODELS.items():
        if names and name not in names:
            continue
        src = FIXTURES / rel
        if not src.is_file():
            raise FileNotFoundError(f"fixture missing for {name}: {src}")
        d = dest / name
        d.mkdir(parents=True, exist_ok=True)
        if arch is None:
            shutil.copyfile(src, d / "config.json")
        else:
            cfg = json.loads(src.read_text())
            cfg["architectures"] = arch  # the only edit; key order preserved
            (d / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
        out[name] = d
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", type=Path, nargs="?")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args(argv)
    if a.list or a.dest is None:
        for name, (rel, arch, note) in MODELS.items():
            print(f"{name:32s} {rel}{'  [architectures -> ' + arch[0] + ']' if arch else ''}  # {note}")
        return 0
    made = write_models(a.dest)
    for name, d in made.items():
        print(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
