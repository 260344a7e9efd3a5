"""The tiny pair: Hugging Face layout, deterministic builds, safe concurrent first use."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from runtime_helpers import REPO

from specguard.runtime.tiny import Recipe, build_pair, ensure_tiny_pair
from specguard.runtime.tokenizer import Tokenizer

SMALL = Recipe(corpus_functions=300, target_steps=2, draft_steps=2, batch_size=2, seq_len=32)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_tiny_pair_is_in_hugging_face_layout(tiny_pair):
    for model_dir in (tiny_pair.target, tiny_pair.draft):
        for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"):
            assert (model_dir / name).is_file(), model_dir / name
        tok_cfg = json.loads((model_dir / "tokenizer_config.json").read_text())
        assert tok_cfg["chat_template"] and tok_cfg["eos_token"] == "</s>"
    target_cfg = json.loads((tiny_pair.target / "config.json").read_text())
    draft_cfg = json.loads((tiny_pair.draft / "config.json").read_text())
    assert target_cfg["architectures"] == ["LlamaForCausalLM"]
    assert "rope_parameters" in target_cfg and "rope_theta" in draft_cfg  # both spellings in use
    assert draft_cfg["tie_word_embeddings"] is True and target_cfg["vocab_size"] == draft_cfg["vocab_size"]
    rendered = Tokenizer(tiny_pair.target).apply_chat_template([{"role": "user", "content": "hi"}])
    assert rendered == "<|user|>\nhi\n<|assistant|>\n"


def test_build_is_deterministic(tmp_path):
    a = build_pair(tmp_path / "a", SMALL, log=lambda _: None)
    b = build_pair(tmp_path / "b", SMALL, log=lambda _: None)
    for x, y in ((a.target, b.target), (a.draft, b.draft)):
        assert _sha(x / "model.safetensors") == _sha(y / "model.safetensors")
        assert _sha(x / "tokenizer.json") == _sha(y / "tokenizer.json")


def test_two_processes_building_at_once_both_get_the_pair(tmp_path):
    child = (
        "import sys, json; from pathlib import Path; "
        "from specguard.runtime.tiny import Recipe, ensure_tiny_pair; "
        "r = Recipe(corpus_functions=300, target_steps=2, draft_steps=2, batch_size=2, seq_len=32); "
        "p = ensure_tiny_pair(Path(sys.argv[1]), r); print(json.dumps([str(p.target), str(p.draft)]))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", child, str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    paths = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert paths[0] == paths[1]
    pair = ensure_tiny_pair(tmp_path, SMALL)
    assert [str(pair.target), str(pair.draft)] == paths[0]
    assert (pair.target / "model.safetensors").is_file()
    assert [p.name for p in tmp_path.iterdir()] == [pair.target.parent.name]  # no scratch left behind


def test_cli_prints_both_paths(tiny_pair):
    """Pointed at the session's cache root, the CLI finds the built pair and prints its paths."""
    result = subprocess.run(
        [sys.executable, "-m", "specguard.runtime.tiny", "--out", str(tiny_pair.target.parent.parent)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"target: {tiny_pair.target}", f"draft: {tiny_pair.draft}"]
