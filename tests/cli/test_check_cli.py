"""`specguard check` as a user runs it: a real subprocess, offline, on real fixtures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HF_CONFIGS, REPO, model_dir, run_cli, run_cli_json

LLAMA = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")


def eagle3_args(draft: Path, *extra: str) -> list[str]:
    return ["--", "--model-path", LLAMA, "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", str(draft), *extra]


def test_json_contract(eagle3_llama_draft_dir: Path) -> None:
    code, doc = run_cli_json("check", *eagle3_args(eagle3_llama_draft_dir))
    assert code == 1 and doc["exit_code"] == 1 and doc["ok"] is False
    assert doc["schema_version"] == 1
    assert set(doc) >= {"target", "draft", "environment", "findings", "changes", "conflicts", "argv", "env", "resolved"}
    codes = {f["code"] for f in doc["findings"]}
    assert {"DM001", "DM002", "RS001"} <= codes
    dm001 = next(f for f in doc["findings"] if f["code"] == "DM001")
    assert dm001["fix"] == {"title": dm001["fix"]["title"], "applicability": "safe", "edits": [{"flag": "--dtype", "value": "bfloat16"}]}
    assert dm001["applied"] is False and dm001["sources"]
    assert doc["target"]["dtype_key"] == "torch_dtype" and doc["draft"]["max_position_embeddings"] == 2048
    assert doc["resolved"]["eagle_topk"] == 4
    assert doc["argv"][:2] == ["--model-path", LLAMA]


def test_fix_applies_safe_fixes_only(eagle3_llama_draft_dir: Path) -> None:
    code, doc = run_cli_json("check", "--fix", *eagle3_args(eagle3_llama_draft_dir))
    assert doc["changes"] == [{"flag": "--dtype", "old": None, "new": "bfloat16", "rule": "DM001"}]
    assert code == 1  # DM002's fix is unsafe and was not applied
    code, doc = run_cli_json("check", "--unsafe-fixes", *eagle3_args(eagle3_llama_draft_dir))
    assert code == 0 and doc["ok"]
    assert {c["rule"] for c in doc["changes"]} == {"DM001", "DM002"}
    assert doc["argv"][-4:] == ["--dtype", "bfloat16", "--context-length", "2048"]
    assert all(f["applied"] for f in doc["findings"] if f["severity"] == "error")


def test_clean_configuration_exits_zero(eagle3_llama_draft_dir: Path) -> None:
    result = run_cli("check", *eagle3_args(eagle3_llama_draft_dir, "--dtype", "float16", "--context-length", "2048"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no errors remain" in result.stdout


def test_human_output_shows_original_and_corrected(eagle3_llama_draft_dir: Path) -> None:
    result = run_cli("check", "--unsafe-fixes", *eagle3_args(eagle3_llama_draft_dir))
    assert "flags: original -> corrected" in result.stdout
    assert "DM002" in result.stdout and "python -m sglang.launch_server" in result.stdout


def test_sarif(eagle3_llama_draft_dir: Path) -> None:
    result = run_cli("check", "--format", "sarif", *eagle3_args(eagle3_llama_draft_dir))
    doc = json.loads(result.stdout)
    assert doc["version"] == "2.1.0"
    results = doc["runs"][0]["results"]
    assert {r["ruleId"] for r in results} >= {"DM001", "DM002"}
    assert {r["level"] for r in results if r["ruleId"] == "DM001"} == {"error"}


def test_slime_spelling_round_trips(eagle3_llama_draft_dir: Path) -> None:
    _code, doc = run_cli_json(
        "check", "--unsafe-fixes", "--",
        "--hf-checkpoint", LLAMA, "--sglang-speculative-algorithm", "EAGLE3",
        "--sglang-speculative-draft-model-path", str(eagle3_llama_draft_dir),
    )
    assert "--sglang-context-length" in doc["argv"] and "--hf-checkpoint" in doc["argv"]
    dm002 = next(f for f in doc["findings"] if f["code"] == "DM002")
    assert "--sglang-context-length" in dm002["message"]


def test_env_from_flag_and_process(eagle3_llama_draft_dir: Path) -> None:
    args = eagle3_args(eagle3_llama_draft_dir, "--dtype", "float16")
    _, doc = run_cli_json("check", "--env", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1", *args)
    dm002 = next(f for f in doc["findings"] if f["code"] == "DM002")
    assert dm002["severity"] == "warning"
    _, doc = run_cli_json("check", *args, env={"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"})
    assert doc["env"]["SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"] == "1"


def test_version_boundary_of_pr_9388(eagle3_llama_draft_dir: Path) -> None:
    args = eagle3_args(eagle3_llama_draft_dir, "--dtype", "float16")
    _, old = run_cli_json("check", "--sglang-version", "0.5.0", "--env", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1", *args)
    _, new = run_cli_json("check", "--sglang-version", "0.5.1", "--env", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1", *args)
    assert next(f for f in old["findings"] if f["code"] == "DM002")["severity"] == "error"
    assert "illegal memory access" in next(f for f in old["findings"] if f["code"] == "DM002")["message"]
    assert next(f for f in new["findings"] if f["code"] == "DM002")["severity"] == "warning"


def test_gpu_option_is_case_insensitive(eagle3_llama_draft_dir: Path) -> None:
    _, doc = run_cli_json("check", "--gpu", "h100", *eagle3_args(eagle3_llama_draft_dir))
    assert doc["environment"]["gpu"]["name"] == "H100" and doc["environment"]["gpu"]["compute_capability"] == [9, 0]


def test_rules_and_rule_commands() -> None:
    listing = run_cli("rules")
    assert listing.returncode == 0 and "DM001" in listing.stdout
    as_json = json.loads(run_cli("rules", "--format", "json").stdout)
    assert any(r["code"] == "DM002" for r in as_json)
    doc = run_cli("rule", "DM002")
    assert doc.returncode == 0
    for section in ("## What it does", "## Why is this bad", "## Fix safety", "## Example", "## Sources"):
        assert section in doc.stdout
    assert run_cli("rule", "draft-dtype-differs-from-target").returncode == 0


def test_rules_show_category_default_severity_and_default_set() -> None:
    rows = {r["code"]: r for r in json.loads(run_cli("rules", "--format", "json").stdout)}
    assert all(r["category"] and r["default_severity"] and isinstance(r["default_set"], bool) for r in rows.values())
    assert (rows["MM003"]["category"], rows["MM003"]["default_severity"], rows["MM003"]["default_set"]) == ("perf", "info", False)
    assert rows["FX086"]["needs"].startswith("structured output") and rows["DM002"]["default_set"] is True
    listing = run_cli("rules").stdout
    assert "category" in listing and "perf" in listing
    assert "Category: perf" in run_cli("rule", "MM003").stdout


# ------------------------------------------------------------------------------------ bad input


def _one_line_error(result, *needles: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_missing_model_directory(tmp_path: Path) -> None:
    _one_line_error(run_cli("check", "--", "--model-path", str(tmp_path / "nope")), "neither a directory nor a Hugging Face repo id")


def test_directory_without_config(tmp_path: Path) -> None:
    _one_line_error(run_cli("check", "--", "--model-path", str(tmp_path)), "has no config.json")


def test_malformed_json(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{oops")
    _one_line_error(run_cli("check", "--", "--model-path", str(tmp_path)), "config.json is not valid JSON", "line 1")


def test_config_not_an_object(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("42")
    _one_line_error(run_cli("check", "--", "--model-path", str(tmp_path)), "not an object")


def test_unreadable_file(tmp_path: Path) -> None:
    """A config.json its user may not read. Root reads any file through two capabilities
    (capabilities(7)); run as root, the CLI runs without them, so it meets the mode as a user does."""
    config = model_dir(tmp_path, "m", {}) / "config.json"
    config.chmod(0)
    argv = ("check", "--", "--model-path", str(config.parent))
    if os.geteuid() != 0:
        _one_line_error(run_cli(*argv), "cannot read")
        return
    without_override = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
    assert subprocess.run([*without_override, "cat", str(config)], capture_output=True).returncode != 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_", "HF_"))}
    result = subprocess.run([*without_override, sys.executable, "-m", "specguard", *argv], capture_output=True, text=True,
                            env={**env, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "200"}, cwd=REPO, timeout=60)
    _one_line_error(result, "cannot read")


def test_file_that_is_not_text(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 cannot be read as a config.json (and this works as root too)."""
    directory = model_dir(tmp_path, "m", {})
    (directory / "config.json").write_bytes(b"\xff\xfe\x00garbage")
    _one_line_error(run_cli("check", "--", "--model-path", str(directory)), "cannot read", "encoding")


@pytest.mark.parametrize(
    ("launch", "says"),
    [
        (("--speculative-num-steps", "three"), "--speculative-num-steps expects an integer"),
        (("--speculative-algorithm", "MTP"), "use NEXTN"),
    ],
)
def test_refused_flag_value_is_a_finding_not_an_input_error(launch: tuple[str, ...], says: str) -> None:
    code, doc = run_cli_json("check", "--offline", "--", "--model-path", LLAMA, *launch)
    assert code == 1
    assert [f["severity"] for f in doc["findings"] if f["code"] == "VB013" and says in f["message"]] == ["error"]


def test_unknown_gpu() -> None:
    _one_line_error(run_cli("check", "--gpu", "Z80", "--", "--model-path", LLAMA), "--gpu", "H100")


def test_malformed_env() -> None:
    _one_line_error(run_cli("check", "--env", "NOEQUALS", "--", "--model-path", LLAMA), "--env", "KEY=VALUE")


def test_repo_id_offline_not_cached(tmp_path: Path) -> None:
    result = run_cli("check", "--offline", "--", "--model-path", "some-org/some-model", env={"HF_HUB_CACHE": str(tmp_path)})
    _one_line_error(result, "some-org/some-model", "not in the local Hugging Face cache")


def test_bad_version() -> None:
    _one_line_error(run_cli("check", "--sglang-version", "latest", "--", "--model-path", LLAMA), "--sglang-version")


def test_json_mode_errors_are_json(tmp_path: Path) -> None:
    result = run_cli("check", "--format", "json", "--", "--model-path", str(tmp_path))
    assert result.returncode == 2
    assert json.loads(result.stdout) == {"schema_version": 1, "error": json.loads(result.stdout)["error"], "exit_code": 2}


def test_token_never_printed(tmp_path: Path) -> None:
    token = "hf_" + "A" * 34
    result = run_cli("check", "--", "--model-path", "org/private-model", env={"HF_TOKEN": token, "HF_HUB_CACHE": str(tmp_path)})
    assert token not in result.stdout + result.stderr


def test_header_tells_a_missing_draft_from_no_draft(tmp_path) -> None:
    target = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
    empty = tmp_path / "draft-without-config"
    empty.mkdir()
    # Read from text, a model that is not here is a note, and the check goes on without its facts.
    named = run_cli("check", "--offline", f"python -m sglang.launch_server --model-path {target} "
                    f"--speculative-algorithm EAGLE3 --speculative-draft-model-path {empty}")
    assert f"+ draft not found here ({empty})" in named.stdout.replace("\n", "")
    assert "no draft" not in named.stdout
    ngram = run_cli("check", "--offline", "--", "--model-path", target, "--speculative-algorithm", "NGRAM")
    assert "+ no draft given ·" in ngram.stdout


def test_rule_prints_example_facts_as_json() -> None:
    import re

    doc = run_cli("rule", "DM008").stdout
    assert "{'architectures'" not in doc and "('LlamaForCausalLMEagle3',)" not in doc
    facts = re.findall(r"draft facts (\{.*?\})(?:;|\))", doc)
    assert facts and all(json.loads(f) == {"architectures": ["LlamaForCausalLMEagle3"]} for f in facts)


def test_sv002_good_and_bad_launches_differ() -> None:
    """The good launch is the bad one without --trust-remote-code (they were the same command)."""
    doc = run_cli("rule", "SV002").stdout
    bad = doc.split("Bad:\n\n", 1)[1].split("\n", 1)[0].strip()
    good = doc.split("Good:\n\n", 1)[1].split("\n", 1)[0].strip()
    assert "--trust-remote-code" in bad and "--trust-remote-code" not in good
    assert good == bad.replace(" --trust-remote-code", "")
