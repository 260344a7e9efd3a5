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


# ------------------------------------------------------------------------------ issue #27

# The README's pair, read from specguard's catalog (the draft's config.json states only its dtype and context).
README_PAIR = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
               "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B")
AGGRESSIVE_TREE = ("--speculative-num-steps", "5", "--speculative-eagle-topk", "8", "--speculative-num-draft-tokens", "64")


def _memory_fix(*args: str) -> tuple[str, dict]:
    """(the MM finding's message, its fix) for a launch on an L4."""
    _code, document = run_cli_json("check", "--offline", "--gpu", "L4", "--", *README_PAIR, *args)
    [finding] = [f for f in document["findings"] if f["code"] in ("MM001", "MM002")]
    return finding["message"], finding["fix"]


def test_a_short_kv_pool_raises_the_fraction_without_calling_it_the_oom_recipe() -> None:
    """SGLang's OOM recipe lowers --mem-fraction-static first (speculative_decoding docs, "OOM
    Troubleshooting" step 1); raising it is the tuning guide's remedy for a small KV pool."""
    message, fix = _memory_fix("--context-length", "8192")
    assert fix["title"].startswith("raise --mem-fraction-static from 0.698 to 0.9")
    assert fix["edits"][0]["flag"] == "--mem-fraction-static" and fix["edits"][0]["value"] > 0.698
    assert "OOM recipe" not in message and "OOM recipe" not in fix["title"]


def test_short_headroom_lowers_the_fraction_as_the_oom_recipe_s_step_1() -> None:
    message, fix = _memory_fix(*AGGRESSIVE_TREE, "--mem-fraction-static", "0.9", "--context-length", "2048", "--dtype", "float16")
    assert "expect an out-of-memory" in message
    assert fix["title"].startswith("OOM recipe step 1: lower --mem-fraction-static from 0.9 to ")
    assert fix["edits"][0]["flag"] == "--mem-fraction-static" and fix["edits"][0]["value"] < 0.9


def test_weights_beyond_the_static_budget_raise_the_fraction_as_sglang_asks() -> None:
    message, fix = _memory_fix("--mem-fraction-static", "0.5", "--context-length", "4096")
    assert "Loaded weights leave no GPU memory" in message
    assert fix["title"].startswith("raise --mem-fraction-static from 0.5 to ") and "OOM recipe step 1" not in message


def test_an_fp8_checkpoint_s_table_names_its_weights_fp8() -> None:
    result = run_cli("check", "--preset", "slime-mtp-deepseek-v3", "--offline", "--explain-memory")
    title = next(line for line in result.stdout.splitlines() if "memory per GPU" in line)
    assert "fp8 (embed/head/norms bfloat16) weights" in title and "bfloat16 weights" not in title
    _code, document = run_cli_json("check", "--preset", "slime-mtp-deepseek-v3", "--offline", "--explain-memory")
    assert document["memory"]["weights_dtype"] == "fp8 (embed/head/norms bfloat16)" and document["memory"]["dtype"] == "bfloat16"


def test_the_flagship_slime_preset_counts_its_draft_s_weights() -> None:
    """lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B's facts state no shape (no published config.json was
    found): the head is sized as one layer of the target's shape, and says so, instead of 0.00 GiB."""
    _code, document = run_cli_json("check", "--preset", "eagle3-llama3.1-8b", "--offline", "--explain-memory")
    draft = document["memory"]["lines"]["draft weights"]
    assert draft["gib"] > 1.0
    assert "its shape is not stated: sized as one decoder layer of the target's shape" in draft["detail"]
    assert document["memory"]["kv_bytes_per_token"]["draft"] > 0
