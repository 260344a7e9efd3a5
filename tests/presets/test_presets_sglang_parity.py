"""Every SGLang-runtime preset's rendered SGLang argv is accepted by SGLang's own parser.

Runs through the peer harness (tests/parity/peer) in the SGLang venv; skipped without it. The
model paths are replaced by local config.json-only directories (the fixtures the harness
builds), since SGLang reads config.json while it resolves its arguments.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from specguard.presets import load, shipped_names
from tests.conftest import REPO, run_cli

PEER = REPO / "tests" / "parity" / "peer"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_specguard_presets_peer_{name}", PEER / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


client = _load("client")
make_models = _load("make_models")
SGLANG_PY = client.find_sglang_python()

# Each preset model (and the slime guide's /root paths) -> a stand-in directory from make_models.
STAND_INS = {
    "meta-llama/Llama-3.1-8B-Instruct": "llama31-8b-bf16",
    "meta-llama/Meta-Llama-3.1-8B-Instruct": "llama31-8b-bf16",
    "/root/Llama-3.1-8B-Instruct": "llama31-8b-bf16",
    "meta-llama/Meta-Llama-3-8B-Instruct": "llama31-8b-bf16",
    "meta-llama/Llama-2-7b-chat-hf": "llama2-7b-chat",
    "Qwen/Qwen2.5-7B-Instruct": "qwen2.5-7b-bf16",
    "Qwen/Qwen2.5-1.5B-Instruct": "qwen2.5-7b-bf16",
    "Qwen/Qwen3-235B-A22B": "qwen3-235b-a22b",
    "deepseek-ai/DeepSeek-V3": "deepseek-v3",
    "deepseek-ai/DeepSeek-R1": "deepseek-r1",
    "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B": "eagle3-llama31-draft-fp16-2k",
    "/root/sglang-EAGLE3-LLaMA3.1-Instruct-8B": "eagle3-llama31-draft-fp16-2k",
    "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B": "eagle3-llama31-draft-fp16-2k",
    "lmsys/sglang-EAGLE-llama2-chat-7B": "eagle-llama2-chat-7b",
    "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B": "eagle-llama31-draft-fp16-2k",
    "lmsys/Qwen3-235B-A22B-EAGLE3": "eagle3-qwen3-235b-draft",
    "z-lab/LLaMA3.1-8B-Instruct-DFlash-UltraChat": "dflash-draft",
}
PATH_FLAGS = {"--model-path", "--model", "--speculative-draft-model-path"}
SGLANG_PRESETS = [n for n in shipped_names() if load(n).preset.runtime.value == "sglang"]

pytestmark = [
    pytest.mark.sglang,
    pytest.mark.skipif(SGLANG_PY is None, reason="SGLang peer venv not found: run scripts/sglang_env/setup.sh"),
    pytest.mark.skipif(not make_models.FIXTURES.is_dir(), reason=f"fixtures not found at {make_models.FIXTURES}"),
]


def _sglang_argv(name: str) -> list[str]:
    result = run_cli("render", "--preset", name, "--to", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["argv_by_dialect"]["sglang"]


def _localise(argv: list[str], models: dict[str, Path]) -> list[str] | None:
    out = list(argv)
    for index, token in enumerate(out[:-1]):
        if token in PATH_FLAGS:
            stand_in = STAND_INS.get(out[index + 1])
            if stand_in is None:
                return None
            out[index + 1] = str(models[stand_in])
    return [*out, "--device", "cuda"]


@pytest.fixture(scope="module")
def peer_results(tmp_path_factory):
    models = make_models.write_models(tmp_path_factory.mktemp("models"))
    cases, skipped = [], []
    for name in SGLANG_PRESETS:
        argv = _localise(_sglang_argv(name), models)
        if argv is None:
            skipped.append(name)
            continue
        env = dict(load(name).preset.env)
        cases.append({"name": name, "argv": argv, "env": env, "simulate": client.H100})
    results = client.run_cases(cases, SGLANG_PY)
    return {r["name"]: r for r in results}, skipped


@pytest.mark.parametrize("name", SGLANG_PRESETS)
def test_rendered_sglang_argv_is_accepted_by_sglang(name, peer_results):
    results, skipped = peer_results
    if name in skipped:
        pytest.skip(f"{name}: no local stand-in config.json for its models")
    result = results[name]
    assert result["accepted"], {k: result.get(k) for k in ("stage", "exc_type", "message", "raised_in")}
