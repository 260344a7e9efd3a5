"""``specguard check --explain-memory`` through the real CLI, in a subprocess."""

from __future__ import annotations

from tests.conftest import DRAFT_TEMPLATES, HF_CONFIGS, run_cli, run_cli_json

TARGET = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
DRAFT = str(DRAFT_TEMPLATES / "sgl-project-SpecForge" / "llama3-8B-eagle3.json")
ARGS = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
        "--speculative-draft-model-path", "draft", "--context-length", "2048", "--dtype", "bfloat16")


def test_human_table() -> None:
    result = run_cli("check", "--offline", "--gpu", "H100", "--target", TARGET, "--draft", DRAFT, "--explain-memory", "--", *ARGS)
    out = result.stdout
    for line in ("target weights", "draft weights", "KV pool", "tokens it holds", "tree", "cuda graphs", "headroom", "spare"):
        assert line in out, (line, out)
    assert "memory per GPU: H100" in out and "memory: fits" in out


def test_json_memory_section() -> None:
    _code, document = run_cli_json("check", "--offline", "--gpu", "H100", "--target", TARGET, "--draft", DRAFT, "--explain-memory", "--", *ARGS)
    memory = document["memory"]
    assert memory["estimated"] is True and memory["fits"] is True
    assert memory["kv_bytes_per_token"] == {"target": 131072, "draft": 4096}
    assert memory["lines"]["target weights"]["bytes"] == 8030261248 * 2
    assert memory["kv_pool_tokens"] > 100_000
    assert memory["cuda_graph_bs"][-1] == 48


def test_json_has_no_memory_section_without_the_option() -> None:
    _, document = run_cli_json("check", "--offline", "--gpu", "H100", "--target", TARGET, "--draft", DRAFT, "--", *ARGS)
    assert "memory" not in document


def test_unknown_gpu_says_why() -> None:
    _code, document = run_cli_json("check", "--offline", "--target", TARGET, "--draft", DRAFT, "--explain-memory", "--", *ARGS)
    assert document["memory"]["estimated"] is False and "--gpu" in document["memory"]["reason"]
    assert not [f for f in document["findings"] if f["code"] in ("MM001", "MM002")]
    result = run_cli("check", "--offline", "--target", TARGET, "--draft", DRAFT, "--explain-memory", "--", *ARGS)
    assert "memory: not estimated" in result.stdout
