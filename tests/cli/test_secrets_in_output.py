"""No output form prints a secret: check's human, JSON and SARIF reports (the corrected launch
and the changes included), launch text read from a script, error lines, render and presets show.
specguard/redact.py is the one table; a file the user asks for keeps the real value
(tests/presets/test_write_safely.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import HF_CONFIGS, REPO, run_cli

SECRET = "sk-never-shown-0451"
LLAMA = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
SECRETS = (
    "--api-key", SECRET, f"--admin-api-key={SECRET}", "--ssl-keyfile-password", SECRET,
)
SECRET_ENV = ("--env", f"HF_TOKEN={SECRET}", "--env", f"SGLANG_S3_SECRET_ACCESS_KEY={SECRET}")


def eagle3(draft: Path) -> list[str]:
    """A launch --fix changes (so the human report prints a corrected launch)."""
    return ["--model-path", LLAMA, "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", str(draft)]


@pytest.mark.parametrize("output_format", ["human", "json", "sarif"])
def test_check_masks_secret_flags_and_env_in_every_format(eagle3_llama_draft_dir: Path, output_format: str) -> None:
    result = run_cli("check", "--offline", "--fix", "--format", output_format, *SECRET_ENV, "--", *eagle3(eagle3_llama_draft_dir), *SECRETS)
    assert result.returncode in (0, 1), result.stderr
    assert SECRET not in result.stdout + result.stderr
    if output_format == "json":
        document = json.loads(result.stdout)
        assert document["changes"], "the launch is corrected"
        argv = document["argv"]
        assert argv[argv.index("--api-key") + 1] == "***" and "--admin-api-key=***" in argv
        assert document["env"] == {"HF_TOKEN": "***", "SGLANG_S3_SECRET_ACCESS_KEY": "***"}
    if output_format == "human":
        assert "corrected launch:" in result.stdout and "--api-key '***'" in result.stdout


def test_check_masks_an_abbreviated_and_a_slime_spelled_key() -> None:
    """SGLang's parser reads --api-ke as --api-key; slime passes --sglang-api-key on."""
    abbreviated = run_cli("check", "--offline", "--format", "json", "--", "--model-path", LLAMA, "--api-ke", SECRET)
    assert SECRET not in abbreviated.stdout + abbreviated.stderr, abbreviated.stdout
    slime = run_cli("check", "--offline", "--format", "json", "--dialect", "slime", "--", "--hf-checkpoint", LLAMA, "--sglang-api-key", SECRET, "--wandb-key", SECRET)
    assert slime.returncode in (0, 1), slime.stderr
    assert SECRET not in slime.stdout + slime.stderr


def test_check_masks_the_key_a_script_sets_through_a_variable(tmp_path: Path) -> None:
    script = tmp_path / "serve.sh"
    script.write_text(f'KEY="{SECRET}"\nexport SGLANG_S3_SECRET_ACCESS_KEY={SECRET}\npython -m sglang.launch_server --model-path {LLAMA} --api-key "$KEY"\n')
    for output_format in ("human", "json", "sarif"):
        result = run_cli("check", "--offline", "--format", output_format, "--script", str(script))
        assert result.returncode in (0, 1), result.stderr
        assert SECRET not in result.stdout + result.stderr, output_format


def test_an_error_line_masks_a_token_it_quotes() -> None:
    token = "hf_" + "Q" * 30
    result = run_cli("check", "--offline", "--env", f"HF-TOKEN={token}", "--", "--model-path", LLAMA)
    assert result.returncode == 2
    assert token not in result.stdout + result.stderr and "--env" in result.stderr
    as_json = run_cli("check", "--offline", "--format", "json", "--env", f"HF-TOKEN={token}", "--", "--model-path", LLAMA)
    assert token not in as_json.stdout + as_json.stderr and json.loads(as_json.stdout)["exit_code"] == 2


@pytest.fixture
def preset_with_a_key(tmp_path: Path) -> Path:
    folder = tmp_path / "mine"
    shutil.copytree(REPO / "presets", folder, ignore=shutil.ignore_patterns("*.yaml"))
    text = (REPO / "presets" / "sglang-standalone-qwen2.5-7b-specv2.yaml").read_text()
    path = folder / "mine.yaml"
    assert "\nenv:\n" in text
    text = text.replace("\nflags:\n", f"\nflags:\n  api-key: {SECRET}  # the team's key\n", 1)
    path.write_text(text.replace("\nenv:\n", f"\nenv:\n  HF_TOKEN: {SECRET}\n", 1))
    return path


@pytest.mark.parametrize("to", ["sglang", "json", "yaml"])
def test_render_masks_the_key(preset_with_a_key: Path, to: str) -> None:
    result = run_cli("render", "--preset", str(preset_with_a_key), "--to", to)
    assert result.returncode in (0, 1), result.stderr
    assert SECRET not in result.stdout + result.stderr
    assert "***" in result.stdout


def test_presets_show_masks_the_key_and_keeps_the_rest_as_written(preset_with_a_key: Path) -> None:
    human = run_cli("presets", "show", str(preset_with_a_key))
    assert SECRET not in human.stdout + human.stderr
    assert "  api-key: '***'  # the team's key\n" in human.stdout and "  HF_TOKEN: '***'\n" in human.stdout
    machine = run_cli("presets", "show", str(preset_with_a_key), "--format", "json")
    assert SECRET not in machine.stdout + machine.stderr
    assert json.loads(machine.stdout)["preset"]["flags"]["api-key"] == "***"


def test_presets_show_masks_a_key_written_in_flow_style(tmp_path: Path) -> None:
    """`env: {HF_TOKEN: ...}` on one line: no `key: value` line to mask, so the parsed value is."""
    folder = tmp_path / "mine"
    shutil.copytree(REPO / "presets", folder, ignore=shutil.ignore_patterns("*.yaml"))
    text = (REPO / "presets" / "sglang-standalone-qwen2.5-7b-specv2.yaml").read_text()
    block = 'env:\n  SGLANG_ENABLE_SPEC_V2: "True"\n'
    assert block in text
    path = folder / "flow.yaml"
    path.write_text(text.replace(block, f'env: {{SGLANG_ENABLE_SPEC_V2: "True", HF_TOKEN: {SECRET}}}\n'))
    result = run_cli("presets", "show", str(path))
    assert result.returncode in (0, 1), result.stderr
    assert SECRET not in result.stdout + result.stderr
    assert 'env: {SGLANG_ENABLE_SPEC_V2: "True", HF_TOKEN: ***}' in result.stdout


def test_a_message_about_a_secret_flag_reads_as_written() -> None:
    """Messages are masked by the launch's secret values, not by pattern: "no --api-key is set"
    names the flag, and read as a flag and its value it became "no --api-key *** set"."""
    result = run_cli("check", "--offline", "--select", "SV001", "--format", "json", "--", "--model-path", LLAMA, "--host", "0.0.0.0")
    messages = [f["message"] for f in json.loads(result.stdout)["findings"] if f["code"] == "SV001"]
    assert messages and "no --api-key is set" in messages[0], messages
