"""RS001 says what the runtime does, in the runtime's name, and never prints a value as None."""

from __future__ import annotations

from tests.conftest import HF_CONFIGS, load_fixture, model_dir, run_cli_json

TARGET = str(HF_CONFIGS / "Qwen" / "Qwen3-32B")


def _rs001(*args: str) -> str:
    _, doc = run_cli_json("check", "--offline", *args)
    [finding] = [f for f in doc["findings"] if f["code"] == "RS001"]
    return finding["message"]


def test_a_value_only_the_runtime_can_know_is_said_as_what_it_does() -> None:
    # DFLASH with no draft config.json at hand: SGLang reads the draft's block_size, else 16
    # (speculative_hook.py:389-424).
    message = _rs001("--", "--model-path", TARGET, "--speculative-algorithm", "DFLASH")
    assert "=None" not in message
    assert "--speculative-num-draft-tokens to the block_size of the draft's config.json" in message


def test_sgl_jax_defaults_are_said_as_sgl_jax_s(tmp_path) -> None:
    draft = model_dir(tmp_path, "draft", load_fixture("draft-templates/sgl-project-SpecForge/qwen3-32b-eagle3.json"))
    message = _rs001("--dialect", "sgl-jax", "--", "--model-path", TARGET, "--speculative-algorithm", "EAGLE3",
                     "--speculative-draft-model-path", str(draft))
    assert message.startswith("sgl-jax will set ") and "SGLang" not in message
