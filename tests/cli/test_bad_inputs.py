"""Bad input, table-driven: every case is exit code 2, one line on stderr that names the culprit,
no traceback, and no file changed. Flag values (SGLang's parser types and choices), launch
text, specguard's own options (typos included), and config.json facts of the wrong type."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from specguard.flags import extracted_flags
from tests.conftest import HF_CONFIGS, REPO, run_cli

LLAMA_CONFIG = json.loads((HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct" / "config.json").read_text())


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]  # after `specguard check`; "{target}" is the model directory
    culprit: str  # must appear in the one error line
    config: dict | str | None = None  # the target's config.json (dict: Llama-3.1-8B's with these keys replaced; str: raw text)
    server_args: tuple[str, ...] = field(default=())  # after `-- --model-path {target}`
    # Give a valid launch (`-- --model-path {target}`) so that the culprit is the only problem;
    # off for cases that bring their own launch (a preset, a script, a text) or none on purpose.
    launch: bool = True


def flag(id: str, *server_args: str, culprit: str | None = None) -> Case:
    return Case(id=id, args=(), culprit=culprit or server_args[0], server_args=server_args)


def config(id: str, culprit: str, replacement: dict | str) -> Case:
    return Case(id=id, args=(), culprit=culprit, config=replacement)


# Values SGLang's parser refuses, or that fail once the server starts: each is a VB013 error
# finding (exit 1) beside whatever else the launch holds, not an input error.
REFUSED = [
    flag("dtype-choice", "--dtype", "banana"),
    flag("dtype-case", "--dtype", "BF16"),
    flag("kv-cache-dtype-choice", "--kv-cache-dtype", "fp9"),
    flag("attention-backend-choice", "--attention-backend", "flashattn9"),
    flag("port-too-high", "--port", "70000"),
    flag("port-99999", "--port", "99999"),
    flag("port-zero", "--port", "0"),
    flag("port-negative", "--port", "-1"),
    flag("port-text", "--port", "http"),
    flag("port-float", "--port", "30000.5"),
    flag("context-length-negative", "--context-length", "-1"),
    flag("context-length-zero", "--context-length", "0"),
    flag("context-length-text", "--context-length", "long"),
    flag("tp-size-zero", "--tp-size", "0"),
    flag("tp-size-text", "--tp-size", "two"),
    flag("tp-alias-zero", "--tp", "0"),
    flag("dp-size-zero", "--dp-size", "0"),
    flag("pp-size-zero", "--pp-size", "0"),
    flag("ep-size-zero", "--ep-size", "0"),
    flag("nnodes-zero", "--nnodes", "0"),
    flag("page-size-zero", "--page-size", "0"),
    flag("max-running-requests-zero", "--max-running-requests", "0"),
    flag("max-running-requests-text", "--max-running-requests", "many"),
    flag("mem-fraction-nan", "--mem-fraction-static", "nan"),
    flag("mem-fraction-inf", "--mem-fraction-static", "inf"),
    flag("mem-fraction-text", "--mem-fraction-static", "most"),
    flag("speculative-num-steps-text", "--speculative-num-steps", "three"),
    flag("speculative-topk-float", "--speculative-eagle-topk", "1.5"),
    flag("speculative-algorithm-unknown", "--speculative-algorithm", "MEDUSA"),
    flag("speculative-algorithm-mtp", "--speculative-algorithm", "MTP"),
    flag("cuda-graph-bs-text", "--cuda-graph-bs-decode", "1", "2", "x"),
    flag("chunked-prefill-text", "--chunked-prefill-size", "big"),
    flag("random-seed-text", "--random-seed", "abc"),
    flag("switch-given-true", "--disable-cuda-graph", "true"),
    flag("switch-given-1", "--trust-remote-code", "1"),
    flag("switch-inline-value", "--enable-dp-attention=yes", culprit="--enable-dp-attention"),
    flag("json-flag-invalid", "--preferred-sampling-params", "{temperature:", culprit="--preferred-sampling-params"),
    flag("json-flag-nan", "--preferred-sampling-params", "NaN", culprit="--preferred-sampling-params"),
    Case("slime-dtype-choice", ("--dialect", "slime"), "--sglang-dtype", server_args=("--sglang-dtype", "banana")),
    Case("slime-port", ("--dialect", "slime"), "--sglang-port", server_args=("--sglang-port", "99999")),
    Case("slime-switch-value", ("--dialect", "slime"), "--sglang-disable-cuda-graph", server_args=("--sglang-disable-cuda-graph", "true")),
]

CASES = [
    # --- launches specguard cannot read: an argument no flag owns, a value missing
    flag("stray-positional", "extra", culprit="'extra'"),
    flag("stray-positional-after-value", "--port", "30000", "30001", culprit="'30001'"),
    flag("value-missing", "--speculative-num-steps", culprit="--speculative-num-steps"),
    flag("value-missing-before-flag", "--dtype", "--port", "30000", culprit="--dtype"),
    # --- specguard's own options: typos, bad values (click's usage errors are one line too)
    Case("typo-unsafe-fix", ("--unsafe-fix",), "--unsafe-fixes"),
    Case("typo-offline", ("--offlne",), "--offline"),
    Case("typo-preset", ("--prest", "x"), "--preset"),
    Case("typo-target", ("--targte", "x"), "--target"),
    Case("typo-sglang-version", ("--sglang-versoin", "0.5.23"), "--sglang-version"),
    Case("dialect-choice", ("--dialect", "vllm"), "--dialect"),
    Case("format-choice", ("--format", "xml"), "--format"),
    Case("gpu-count-zero", ("--gpu-count", "0"), "--gpu-count"),
    Case("gpu-unknown", ("--gpu", "Z100"), "Z100"),
    Case("env-not-pair", ("--env", "SGLANG_X"), "--env"),
    Case("version-not-a-version", ("--sglang-version", "banana"), "banana"),
    Case("target-missing-dir", ("--target", "/nonexistent/model"), "/nonexistent/model"),
    Case("target-missing-with-preset", ("--preset", "eagle3-llama3.1-8b", "--offline", "--target", "/nonexistent/model"), "/nonexistent/model", launch=False),
    Case("draft-missing-with-preset", ("--preset", "eagle3-llama3.1-8b", "--offline", "--draft", "/nonexistent/draft"), "/nonexistent/draft", launch=False),
    Case("preset-unknown", ("--preset", "no-such-preset"), "no-such-preset", launch=False),
    Case("script-missing", ("--script", "/nonexistent/run.sh"), "/nonexistent/run.sh", launch=False),
    Case("text-without-launch", ("pip install sglang",), "holds no launch", launch=False),
    Case("text-unterminated-quote", ("python -m sglang.launch_server --model-path 'x",), "unterminated", launch=False),
    # --- config.json facts of the wrong type: one line naming the file and the key
    config("max-position-string", "max_position_embeddings", {"max_position_embeddings": "2048"}),
    config("max-position-float", "max_position_embeddings", {"max_position_embeddings": 2048.0}),
    config("max-position-list", "max_position_embeddings", {"max_position_embeddings": [2048]}),
    config("max-position-bool", "max_position_embeddings", {"max_position_embeddings": True}),
    config("max-position-negative", "max_position_embeddings", {"max_position_embeddings": -1}),
    config("max-position-zero", "max_position_embeddings", {"max_position_embeddings": 0}),
    config("hidden-size-zero", "hidden_size", {"hidden_size": 0}),
    config("heads-zero", "num_attention_heads", {"num_attention_heads": 0}),
    config("kv-heads-zero", "num_key_value_heads", {"num_key_value_heads": 0}),
    config("layers-string", "num_hidden_layers", {"num_hidden_layers": "32"}),
    config("vocab-negative", "vocab_size", {"vocab_size": -5}),
    config("architectures-string", "architectures", {"architectures": "LlamaForCausalLM"}),
    config("architectures-numbers", "architectures", {"architectures": [1, 2]}),
    config("torch-dtype-number", "torch_dtype", {"torch_dtype": 16}),
    config("tie-embeddings-string", "tie_word_embeddings", {"tie_word_embeddings": "yes"}),
    config("text-config-key", "text_config.max_position_embeddings", {"text_config": {"max_position_embeddings": "x"}}),
    config("rope-theta-nan-literal", "NaN", json.dumps(LLAMA_CONFIG).replace('"rope_theta": 500000.0', '"rope_theta": NaN')),
    config("vocab-infinity-literal", "Infinity", json.dumps(LLAMA_CONFIG).replace('"vocab_size": 128256', '"vocab_size": Infinity')),
    config("nesting", "nested too deeply", '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"),
    config("huge-integer", "too long", '{"max_position_embeddings": ' + "9" * 5000 + "}"),
    config("not-json", "not valid JSON", "{max_position_embeddings: 2048"),
    config("not-an-object", "not an object", "[1, 2, 3]"),
]


def test_the_table_is_large_enough() -> None:
    assert len(CASES) + len(REFUSED) >= 60
    assert len({case.id for case in (*CASES, *REFUSED)}) == len(CASES) + len(REFUSED)


def test_choice_cases_use_flags_that_have_choices() -> None:
    """A choice case is only meaningful where SGLang's parser really has choices."""
    table = extracted_flags()
    for name in ("--dtype", "--kv-cache-dtype", "--attention-backend"):
        assert table[name].choices, name


def _snapshot(*roots: Path) -> dict[str, str]:
    digests = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and ".venv" not in path.parts and "__pycache__" not in path.parts and ".pytest_cache" not in path.parts:
                digests[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input(case: Case, tmp_path: Path) -> None:
    target = tmp_path / "model"
    target.mkdir()
    if isinstance(case.config, str):
        (target / "config.json").write_text(case.config)
    else:
        (target / "config.json").write_text(json.dumps({**LLAMA_CONFIG, **(case.config or {})}))
    args = [arg.replace("{target}", str(target)) for arg in case.args]
    if case.launch:
        args += ["--", "--model-path" if "slime" not in case.id else "--hf-checkpoint", str(target), *case.server_args]
    before = _snapshot(tmp_path, REPO / "presets")
    result = run_cli("check", "--gpu", "H100", *args) if "--gpu" not in args else run_cli("check", *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("specguard: error: ")
    assert case.culprit in lines[0], lines[0]
    if case.config is not None and not case.server_args:
        assert str(target) in lines[0]  # the file is named
    assert _snapshot(tmp_path, REPO / "presets") == before


@pytest.mark.parametrize("case", REFUSED, ids=[case.id for case in REFUSED])
def test_refused_value_is_an_error_finding(case: Case) -> None:
    model = "--model-path" if "slime" not in case.id else "--hf-checkpoint"
    args = [*case.args, "--format", "json", "--", model, str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct"), *case.server_args]
    result = run_cli("check", "--gpu", "H100", *args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    refused = [f for f in json.loads(result.stdout)["findings"] if f["code"] == "VB013"]
    assert [f["severity"] for f in refused] == ["error"], refused
    assert case.culprit in refused[0]["message"], refused[0]["message"]


@pytest.mark.parametrize("case", [c for c in CASES if c.id in ("value-missing", "max-position-string", "typo-offline", "gpu-unknown")], ids=lambda c: c.id)
def test_bad_input_in_json_mode_is_a_json_document(case: Case, tmp_path: Path) -> None:
    target = tmp_path / "model"
    target.mkdir()
    (target / "config.json").write_text(json.dumps({**LLAMA_CONFIG, **(case.config if isinstance(case.config, dict) else {})}))
    args = [*case.args, "--format", "json", "--", "--model-path", str(target), *case.server_args]
    result = run_cli("check", *args) if "--gpu" in args else run_cli("check", "--gpu", "H100", *args)
    assert result.returncode == 2
    document = json.loads(result.stdout)
    assert document["exit_code"] == 2 and case.culprit in document["error"]


def test_misspelled_slime_flag_is_reported() -> None:
    result = run_cli("check", "--gpu", "H100", "--format", "json", "--", "--hf-checkpoint", str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct"), "--sglang-speculative-num-stepz", "3")
    document = json.loads(result.stdout)
    assert result.returncode == 1
    assert any("--sglang-speculative-num-stepz" in f["message"] and f["severity"] == "error" for f in document["findings"])


def test_valid_values_still_pass() -> None:
    """The value checks reject nothing SGLang accepts: choices, ranges, JSON and switches."""
    result = run_cli(
        "check", "--gpu", "H100", "--format", "json", "--", "--model-path", str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct"),
        "--dtype", "bfloat16", "--port", "65535", "--context-length", "8192", "--tp-size", "1", "--disable-cuda-graph",
        "--preferred-sampling-params", '{"temperature": 0.5}', "--mem-fraction-static", "0.8", "--kv-cache-dtype", "fp8_e4m3",
    )
    assert result.returncode == 0, result.stdout + result.stderr
