"""The API key is shown masked wherever launch prints the command, and the real one still runs."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from specguard.launch.probe import free_port
from specguard.redact import (
    SGLANG_SECRET_ENV,
    SGLANG_SECRET_FLAGS,
    is_secret_env,
    is_secret_flag,
    redact_argv,
    redact_text,
)
from tests.conftest import REPO, run_cli
from tests.launch.conftest import assert_no_process_left, launch_env
from tests.launch.test_launch_fake_sglang import TARGET, args

SECRET = "sk-do-not-print-0451"


def test_dry_run_masks_the_key_in_human_and_json_output() -> None:
    server = ["--model-path", TARGET, "--speculative-algorithm", "NGRAM", "--api-key", SECRET, "--admin-api-key=" + SECRET]
    human = run_cli("launch", "--dry-run", "--runtime", "sglang", "--gpu", "H100", "--", *server)
    assert human.returncode == 0, human.stderr
    assert SECRET not in human.stdout + human.stderr
    assert "--api-key '***'" in human.stdout and "'--admin-api-key=***'" in human.stdout
    machine = run_cli("launch", "--dry-run", "--format", "json", "--runtime", "sglang", "--gpu", "H100", "--", *server)
    assert machine.returncode == 0, machine.stderr
    assert SECRET not in machine.stdout + machine.stderr
    document = json.loads(machine.stdout)
    assert "***" in document["launch"]["command"] and "***" in document["argv"]


def test_slime_printed_command_masks_the_key() -> None:
    result = run_cli(
        "launch", "--dry-run", "--gpu", "H100", "--dialect", "slime", "--",
        "--hf-checkpoint", TARGET, "--sglang-speculative-algorithm", "NGRAM", "--sglang-api-key", SECRET,
    )
    assert SECRET not in result.stdout + result.stderr, result.stdout


def test_starting_line_masks_the_key_and_the_runtime_gets_the_real_one(launcher_factory) -> None:
    port = free_port()
    launcher = launcher_factory(args(port, "--no-smoke", server=("--api-key", SECRET)), launch_env(fake_sglang=True))
    launcher.wait_for("serving at", timeout=120)
    assert "--api-key '***'" in launcher.err  # the "starting" line
    runtime_cmdline = Path(f"/proc/{launcher.runtime_pgid}/cmdline").read_bytes().split(b"\0")
    assert SECRET.encode() in runtime_cmdline  # masked on screen only: the runtime runs with the real key
    launcher.interrupt(signal.SIGINT)
    assert launcher.wait(timeout=60) == 130
    assert_no_process_left(launcher.runtime_pgid)


def test_redaction_covers_every_spelling() -> None:
    assert redact_argv(["--api-key", "a", "--sglang-api-key=b", "--ssl-keyfile-password", "c", "--port", "1"]) == [
        "--api-key", "***", "--sglang-api-key=***", "--ssl-keyfile-password", "***", "--port", "1",
    ]
    assert redact_text("x --api-key 'a b' --admin-api-key=c --port 1") == "x --api-key *** --admin-api-key=*** --port 1"


# ------------------------------------------------------------------ the one table of secrets


def _sglang_flags_and_env() -> tuple[set[str], set[str]]:
    data = REPO / "specguard" / "data"
    history = json.loads((data / "sglang-history.json").read_text())
    newest = json.loads((data / "sglang-0.5.23-flags.json").read_text())
    flags = set(history["flags"]) | {o for entry in newest["flags"] for o in entry["option_strings"] if o.startswith("--")}
    return flags, set(history["env"])


def test_sglang_secret_flags_are_exactly_the_table_across_every_release() -> None:
    """Every SGLang flag of every known release whose value is a secret is in the table, and no
    count or path (--bucket-time-to-first-token, --ssl-keyfile) is taken for one."""
    flags, env = _sglang_flags_and_env()
    assert {flag for flag in flags if is_secret_flag(flag)} == set(SGLANG_SECRET_FLAGS)
    assert set(SGLANG_SECRET_FLAGS) <= flags
    assert {name for name in env if is_secret_env(name)} == set(SGLANG_SECRET_ENV)
    assert set(SGLANG_SECRET_ENV) <= env


@pytest.mark.parametrize("name", ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "WANDB_API_KEY", "WANDB_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "DB_PASSWORD", "GCP_CREDENTIALS"])
def test_credential_env_vars_are_secrets(name: str) -> None:
    assert is_secret_env(name)


@pytest.mark.parametrize("name", ["CUDA_VISIBLE_DEVICES", "TOKENIZERS_PARALLELISM", "SGLANG_LOG_DECODE_GRAPH_KEY", "SGLANG_MAX_NEW_TOKENS_LIMIT", "KEY"])
def test_other_env_vars_are_not(name: str) -> None:
    assert not is_secret_env(name)


@pytest.mark.parametrize("flag", ["--sglang-api-key", "--sglang-admin-api-key=x", "--sglang-ssl-keyfile-password", "--wandb-key", "--hf-token", "--db-password"])
def test_every_dialects_spelling_and_named_secrets_are_secret_flags(flag: str) -> None:
    assert is_secret_flag(flag)


def test_text_masks_env_assignments_and_hf_tokens() -> None:
    text = "export HF_TOKEN=hf_abcdefghijklmnop; AWS_SECRET_ACCESS_KEY='a b' SGLANG_X=1 python -m x --wandb-key k --tp 2"
    assert redact_text(text) == "export HF_TOKEN=***; AWS_SECRET_ACCESS_KEY=*** SGLANG_X=1 python -m x --wandb-key *** --tp 2"
    assert redact_text("see hf_abcdefghijklmnop") == "see hf_***"


def test_dry_run_masks_a_secret_env_var_in_human_and_json_output() -> None:
    server = ["--model-path", TARGET, "--speculative-algorithm", "NGRAM"]
    env = ["--env", f"SGLANG_S3_SECRET_ACCESS_KEY={SECRET}", "--env", f"HF_TOKEN={SECRET}"]
    human = run_cli("launch", "--dry-run", "--runtime", "sglang", "--gpu", "H100", *env, "--", *server)
    assert human.returncode == 0, human.stderr
    assert SECRET not in human.stdout + human.stderr
    assert "env SGLANG_S3_SECRET_ACCESS_KEY=***" in human.stderr and "SGLANG_S3_SECRET_ACCESS_KEY='***'" in human.stdout
    machine = run_cli("launch", "--dry-run", "--format", "json", "--runtime", "sglang", "--gpu", "H100", *env, "--", *server)
    assert machine.returncode == 0, machine.stderr
    assert SECRET not in machine.stdout + machine.stderr
    document = json.loads(machine.stdout)
    assert document["env"]["SGLANG_S3_SECRET_ACCESS_KEY"] == "***" and document["launch"]["env"]["HF_TOKEN"] == "***"
