"""``specguard launch`` refuses what would hang, crash or mislead, before anything starts: one line
naming the flag, exit code 2, no traceback. The real CLI in a subprocess; the live launches run
against the stand-in SGLang (fixtures/fake_sglang), so a refusal that did not happen would start it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from specguard.launch.probe import free_port
from tests.conftest import run_cli
from tests.launch.conftest import launch_env
from tests.launch.test_dry_run import NGRAM
from tests.launch.test_launch_fake_sglang import args

SGLANG = ["--gpu", "H100", "--runtime", "sglang"]


def one_error_line(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("specguard: error:")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr[-3000:]
    return errors[0]


def non_regular_files(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    return {"a FIFO (named pipe)": fifo, "a directory": tmp_path, "a character device": Path("/dev/zero")}


@pytest.mark.parametrize("kind", ["a FIFO (named pipe)", "a directory", "a character device"])
def test_a_log_file_that_is_not_a_regular_file_is_refused_before_the_runtime_starts(tmp_path: Path, kind: str) -> None:
    # Live, not a dry run: opening a FIFO with no reader blocks for ever (timeout= is the bound).
    path = non_regular_files(tmp_path)[kind]
    result = run_cli("launch", *args(free_port(), "--log-file", str(path)), env=launch_env(fake_sglang=True), timeout=120)
    assert result.returncode == 2
    line = one_error_line(result.stderr)
    assert f"--log-file {path} is {kind}" in line and "regular file" in line
    assert "starting" not in result.stderr


def test_a_log_file_that_does_not_exist_yet_is_fine(tmp_path: Path) -> None:
    log = tmp_path / "new.log"
    result = run_cli("launch", *SGLANG, "--dry-run", "--log-file", str(log), "--", *NGRAM, env=launch_env(fake_sglang=True))
    assert result.returncode == 0, result.stderr
    assert not log.exists()  # a dry run writes nothing


def test_dev_null_discards_the_log_and_is_taken() -> None:
    # The one device a log may go to: writing there never waits.
    result = run_cli("launch", *SGLANG, "--dry-run", "--log-file", os.devnull, "--", *NGRAM, env=launch_env(fake_sglang=True))
    assert result.returncode == 0, result.stderr


BAD_HOSTS = ["no.such.host.invalid", "999.1.1.1"]


@pytest.mark.parametrize("host", BAD_HOSTS)
@pytest.mark.parametrize("where", ["launcher", "server-args"])
def test_a_host_that_does_not_resolve_is_refused_by_the_dry_run(host: str, where: str) -> None:
    given = ["--host", host]
    argv = [*SGLANG, "--dry-run", *(given if where == "launcher" else []), "--", *NGRAM, *(given if where == "server-args" else [])]
    result = run_cli("launch", *argv, env=launch_env(fake_sglang=True))
    assert result.returncode == 2
    assert f"--host {host} does not resolve" in one_error_line(result.stderr)


def test_a_host_that_does_not_resolve_is_one_json_error_under_format_json() -> None:
    result = run_cli("launch", *SGLANG, "--dry-run", "--format", "json", "--host", BAD_HOSTS[0], "--", *NGRAM,
                     env=launch_env(fake_sglang=True))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    document = json.loads(result.stdout)
    assert document["exit_code"] == 2 and document["error"].startswith(f"--host {BAD_HOSTS[0]} does not resolve")


@pytest.mark.parametrize("host", BAD_HOSTS)
def test_a_host_that_does_not_resolve_stops_a_live_launch_with_one_line(host: str) -> None:
    result = run_cli("launch", *args(free_port(), "--host", host), env=launch_env(fake_sglang=True), timeout=120)
    assert result.returncode == 2
    assert f"--host {host} does not resolve" in one_error_line(result.stderr)
    assert "starting" not in result.stderr


def test_the_launchers_host_gets_the_same_exposure_warning_as_a_server_arg() -> None:
    env = launch_env(fake_sglang=True)
    own = run_cli("launch", *SGLANG, "--dry-run", "--format", "json", "--host", "0.0.0.0", "--", *NGRAM, env=env)
    server_arg = run_cli("launch", *SGLANG, "--dry-run", "--format", "json", "--", *NGRAM, "--host", "0.0.0.0", env=env)
    codes = []
    for result in (own, server_arg):
        assert result.returncode == 0, result.stderr
        document = json.loads(result.stdout)
        assert document["launch"]["host"] == "0.0.0.0"
        codes.append(sorted(f["code"] for f in document["findings"]))
    assert "SV001" in codes[1]
    assert codes[0] == codes[1]


def test_the_launchers_host_and_api_key_together_are_not_warned_about() -> None:
    result = run_cli("launch", *SGLANG, "--dry-run", "--format", "json", "--host", "0.0.0.0", "--", *NGRAM, "--api-key", "sk-x",
                     env=launch_env(fake_sglang=True))
    assert result.returncode == 0, result.stderr
    assert "SV001" not in [f["code"] for f in json.loads(result.stdout)["findings"]]


@pytest.mark.parametrize("flag", ["--stop-timeout", "--ready-timeout", "--health-interval"])
@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_a_timeout_that_is_not_a_finite_non_negative_number_is_refused(flag: str, value: str) -> None:
    result = run_cli("launch", *SGLANG, "--dry-run", f"{flag}={value}", "--", *NGRAM, env=launch_env(fake_sglang=True))
    assert result.returncode == 2
    assert f"argument {flag}: {value} is not" in one_error_line(result.stderr)
