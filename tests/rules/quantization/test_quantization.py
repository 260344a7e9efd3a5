"""QT rules through the CLI (the cases as data are in tests/rules/cases/QT040.yaml, QT041.yaml)."""

from __future__ import annotations

from tests.conftest import model_dir, run_cli_json


def test_qt040_through_the_cli_in_slime_spelling(tmp_path):
    draft = model_dir(tmp_path, "draft", {"architectures": ["LlamaForCausalLMEagle3"]})
    _, document = run_cli_json(
        "check", "--offline", "--sglang-version", "0.5.9", "--draft", str(draft), "--dialect", "slime", "--",
        "--sglang-quantization", "gptq", "--sglang-speculative-algorithm", "EAGLE3",
        "--sglang-speculative-draft-model-path", str(draft),
    )
    (finding,) = [f for f in document["findings"] if f["code"] == "QT040"]
    assert "--sglang-speculative-draft-model-quantization unquant" in finding["message"]
