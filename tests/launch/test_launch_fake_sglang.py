"""``specguard launch --runtime sglang`` end to end against a stand-in SGLang (fixtures/fake_sglang).

The stand-in is a real process serving SGLang's endpoints on 127.0.0.1 (stdlib http.server),
put first on PYTHONPATH so that ``python -m sglang.launch_server`` runs it. It fails on demand,
which the real runtimes cannot be made to do on this machine: crash lines, a server that never
gets ready, a health endpoint that fails after start, a runtime that ignores SIGTERM.
"""

from __future__ import annotations

import re
import signal
import socket
import time

import pytest

from specguard.launch.probe import free_port
from tests.conftest import HF_CONFIGS
from tests.launch.conftest import assert_no_process_left, launch_env

TARGET = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")


def args(port: int, *extra: str, server: tuple[str, ...] = ()) -> list[str]:
    return [
        "--runtime", "sglang", "--gpu", "H100", "--health-interval", "0.5", "--stop-timeout", "5", *extra,
        "--", "--model-path", TARGET, "--speculative-algorithm", "NGRAM", "--port", str(port), *server,
    ]


def test_ready_verified_served_and_ctrl_c_leaves_nothing(launcher_factory) -> None:
    port = free_port()
    launcher = launcher_factory(args(port), launch_env({"FAKE_SGLANG_SPAWN_WORKER": "1"}, fake_sglang=True))
    launcher.wait_for("serving at", timeout=120)
    err = launcher.err
    assert "ready: /health_generate answered 200" in err
    assert "resolved by the runtime (/server_info)" in err and "differs" not in err
    assert "smoke request /v1/chat/completions" in err and "Paris" in err
    assert "avg_spec_accept_length (server, /server_info): 3.00" in err
    # NGRAM's 12 draft tokens can all chain (no depth cap): not steps + 1 = 12 // 10 + 1 = 2.
    assert "meaning:" in err and "12 is the most this tree can give" in err
    assert "[sglang] " in err and "The server is fired up and ready to roll!" in err  # the log streams through, prefixed
    launcher.interrupt(signal.SIGINT)
    assert launcher.wait(timeout=60) == 130
    assert_no_process_left(launcher.runtime_pgid)


def test_sigterm_is_passed_on_and_gives_143(launcher_factory) -> None:
    port = free_port()
    launcher = launcher_factory(args(port, "--no-smoke"), launch_env(fake_sglang=True))
    launcher.wait_for("serving at", timeout=120)
    launcher.interrupt(signal.SIGTERM)
    assert launcher.wait(timeout=60) == 143
    assert "Received signal 15" in launcher.err
    assert_no_process_left(launcher.runtime_pgid)


def test_a_runtime_that_ignores_the_stop_is_killed_after_the_grace(launcher_factory) -> None:
    port = free_port()
    env = launch_env({"FAKE_SGLANG_IGNORE_SIGTERM": "1", "FAKE_SGLANG_SPAWN_WORKER": "1"}, fake_sglang=True)
    launcher = launcher_factory(args(port, "--no-smoke", "--stop-timeout", "1"), env)
    launcher.wait_for("serving at", timeout=120)
    launcher.interrupt(signal.SIGINT)
    assert launcher.wait(timeout=60) == 137
    assert_no_process_left(launcher.runtime_pgid)


def test_a_difference_from_the_prediction_is_reported(launcher_factory) -> None:
    port = free_port()
    env = launch_env({"FAKE_SGLANG_OVERRIDE": "speculative_num_draft_tokens=8"}, fake_sglang=True)
    launcher = launcher_factory(args(port, "--no-smoke"), env)
    launcher.wait_for("serving at", timeout=120)
    assert "the runtime resolved speculative_num_draft_tokens=8, specguard predicted 12" in launcher.err
    launcher.interrupt()
    launcher.wait(timeout=60)


def test_speculation_off_in_the_runtime_is_reported(launcher_factory) -> None:
    port = free_port()
    env = launch_env({"FAKE_SGLANG_OVERRIDE": "speculative_algorithm="}, fake_sglang=True)
    launcher = launcher_factory(args(port), env)
    launcher.wait_for("serving at", timeout=120)
    assert "speculation is OFF in the runtime" in launcher.err
    launcher.interrupt()
    launcher.wait(timeout=60)


def test_start_up_crash_is_diagnosed_with_its_rule_and_source(launcher_factory) -> None:
    port = free_port()
    env = launch_env(
        {"FAKE_SGLANG_CRASH_LINE": "Capture cuda graph failed: mat1 and mat2 must have the same dtype, but got Float and Half",
         "FAKE_SGLANG_CRASH_CODE": "7"},
        fake_sglang=True,
    )
    launcher = launcher_factory(args(port), env)
    assert launcher.wait(timeout=120) == 7
    err = launcher.err
    assert "the runtime exited during start-up (exit code 7)" in err
    assert "dtype-mismatch (DM001:" in err
    assert "cuda-graph-capture-failed" in err
    assert "https://github.com/sgl-project/sglang/pull/3431" in err
    assert "--retry-with-fix" in err
    assert_no_process_left(launcher.runtime_pgid)


def test_retry_with_fix_applies_the_fallback_once_and_serves(launcher_factory) -> None:
    port = free_port()
    env = launch_env(
        {"FAKE_SGLANG_CRASH_LINE": "[2025-02-09 10:00:00 TP0] Capture cuda graph failed: out of resources",
         "FAKE_SGLANG_CRASH_UNLESS": "--disable-cuda-graph"},
        fake_sglang=True,
    )
    launcher = launcher_factory(args(port, "--retry-with-fix", "--no-smoke"), env)
    launcher.wait_for("serving at", timeout=180)
    err = launcher.err
    assert "retrying once with the fix for cuda-graph-capture-failed: --disable-cuda-graph" in err
    assert err.count("starting") == 2 and "--disable-cuda-graph" in err.split("retrying once")[1]
    launcher.interrupt()
    assert launcher.wait(timeout=60) == 130
    assert_no_process_left(launcher.runtime_pgid)


def test_retry_after_oom_uses_the_flag_name_the_release_accepts(launcher_factory) -> None:
    """The OOM fallback caps the decode CUDA-graph batch; SGLang 0.5.20+ rejects the old
    --cuda-graph-max-bs name, so the re-checked retry writes --cuda-graph-max-bs-decode (VB003)."""
    port = free_port()
    env = launch_env(
        {"FAKE_SGLANG_CRASH_LINE": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
         "FAKE_SGLANG_CRASH_UNLESS": "--cuda-graph-max-bs-decode"},
        fake_sglang=True,
    )
    launcher = launcher_factory(args(port, "--retry-with-fix", "--no-smoke", "--sglang-version", "0.5.23"), env)
    launcher.wait_for("serving at", timeout=180)
    retried = next(line for line in launcher.err.split("retrying once")[1].splitlines() if line.startswith("starting"))
    assert retried.endswith("--cuda-graph-max-bs-decode 8")
    assert "--cuda-graph-max-bs 8" not in retried
    # What the user reads names the flag of the release launched too, not the removed one.
    assert "try: --cuda-graph-max-bs-decode 8" in launcher.err
    assert "retrying once with the fix for cuda-out-of-memory: --cuda-graph-max-bs-decode 8" in launcher.err
    assert not re.search(r"--cuda-graph-max-bs(?![\w-])", launcher.err.split("retrying once")[0])
    launcher.interrupt()
    assert launcher.wait(timeout=60) == 130
    assert_no_process_left(launcher.runtime_pgid)


def test_port_in_use_before_start_is_a_clear_input_error(launcher_factory) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        launcher = launcher_factory(args(port), launch_env(fake_sglang=True))
        assert launcher.wait(timeout=120) == 2
    assert f"port {port} on 127.0.0.1 is already in use" in launcher.err
    assert "Traceback" not in launcher.err
    assert launcher.runtime_pgid is None


def test_port_in_use_in_the_runtime_log_is_diagnosed(launcher_factory) -> None:
    port = free_port()
    line = f"ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', {port}): address already in use"
    launcher = launcher_factory(args(port), launch_env({"FAKE_SGLANG_CRASH_LINE": line}, fake_sglang=True))
    assert launcher.wait(timeout=120) == 1
    assert "port-in-use" in launcher.err and "choose another --port" in launcher.err


def test_readiness_timeout_stops_the_runtime_and_exits_3(launcher_factory) -> None:
    port = free_port()
    env = launch_env({"FAKE_SGLANG_NEVER_READY": "1", "FAKE_SGLANG_SPAWN_WORKER": "1"}, fake_sglang=True)
    launcher = launcher_factory(args(port, "--ready-timeout", "3"), env)
    assert launcher.wait(timeout=120) == 3
    assert "not ready within --ready-timeout 3 s" in launcher.err
    assert_no_process_left(launcher.runtime_pgid)


def test_health_failing_after_start_stops_the_runtime_and_exits_4(launcher_factory) -> None:
    port = free_port()
    env = launch_env({"FAKE_SGLANG_HEALTH_FAIL_AFTER": "1"}, fake_sglang=True)
    launcher = launcher_factory(args(port, "--no-smoke"), env)
    assert launcher.wait(timeout=120) == 4
    assert "the health endpoint failed 3 times in a row" in launcher.err
    assert_no_process_left(launcher.runtime_pgid)


def test_failing_smoke_request_exits_4(launcher_factory) -> None:
    port = free_port()
    launcher = launcher_factory(args(port), launch_env({"FAKE_SGLANG_SMOKE_FAIL": "1"}, fake_sglang=True))
    assert launcher.wait(timeout=120) == 4
    assert "smoke request failed" in launcher.err and "HTTP 500" in launcher.err
    assert_no_process_left(launcher.runtime_pgid)


def test_log_file_takes_the_runtime_log(launcher_factory, tmp_path) -> None:
    port = free_port()
    log_file = tmp_path / "runtime.log"
    launcher = launcher_factory(args(port, "--no-smoke", "--log-file", str(log_file)), launch_env(fake_sglang=True))
    launcher.wait_for("serving at", timeout=120)
    launcher.interrupt()
    launcher.wait(timeout=60)
    assert "The server is fired up and ready to roll!" in log_file.read_text()
    assert "[sglang] " not in launcher.err


@pytest.mark.parametrize("runtime", ["sglang"])
def test_runtime_not_installed_is_a_clear_error(runtime: str, launcher_factory) -> None:
    launcher = launcher_factory(args(free_port()), launch_env())  # no stand-in on the path: no sglang here
    assert launcher.wait(timeout=120) == 2
    assert "SGLang is not installed" in launcher.err and "pip install" in launcher.err
    assert "Traceback" not in launcher.err


def test_a_second_ctrl_c_does_not_wait_for_the_grace(launcher_factory) -> None:
    port = free_port()
    env = launch_env({"FAKE_SGLANG_IGNORE_SIGTERM": "1"}, fake_sglang=True)
    launcher = launcher_factory(args(port, "--no-smoke", "--stop-timeout", "300"), env)
    launcher.wait_for("serving at", timeout=120)
    launcher.interrupt(signal.SIGINT)
    time.sleep(1)  # the stand-in ignores the first one
    launcher.interrupt(signal.SIGINT)
    assert launcher.wait(timeout=60) == 137
    assert_no_process_left(launcher.runtime_pgid)
