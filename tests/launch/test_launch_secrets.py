"""The API key is shown masked wherever launch prints the command, and the real one still runs."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from specguard.launch.probe import free_port
from specguard.redact import redact_argv, redact_text
from tests.conftest import run_cli
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
