"""Issue #15 item 2 end to end: ``specguard launch --health-interval 2`` keeps supervising a
reference runtime busy with 60 concurrent long requests, and every request completes.

Real processes throughout: the CLI in a subprocess, the runtime as its child on 127.0.0.1.
"""

from __future__ import annotations

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from specguard.launch.probe import free_port
from tests.launch.conftest import assert_no_process_left, launch_env
from tests.launch.test_launch_reference import START_TIMEOUT

pytest.importorskip("torch")
pytest.importorskip("uvicorn")

CONCURRENT = 60
# The issue asks for 2000-token requests; that is not feasible in a bounded test on this CPU.
# 60 batched rows decode at ~2000 tokens/s near the start, but attention over 60 rows of 1500
# slots costs ~0.15 s a step (2 shared cores), so 60 x 2000 tokens take about 6 minutes. Measured
# here: 60 x 256 tokens took 4.6 s on an idle machine (too short for several 2 s supervision
# intervals) and ~25 s at load average 13; 60 x 512 tokens took 68.5 s at load average 13, of a
# 135 s test whose ~65 s is the launcher's start-up. On a faster machine 60 x 512 tokens took
# 5.9 s, so the load is sent in waves until it has outlasted several supervision intervals.
NEW_TOKENS = 512
HEALTH_INTERVAL_S = 2
LOAD_AT_LEAST_S = 4 * HEALTH_INTERVAL_S
MAX_WAVES = 8


def test_busy_runtime_is_never_declared_dead_and_every_request_completes(tiny_root: Path, launcher_factory) -> None:
    import httpx

    from specguard.runtime.tiny import ensure_tiny_pair

    target = ensure_tiny_pair(tiny_root).target
    port = free_port()
    launcher = launcher_factory(
        [
            "--runtime",
            "reference",
            "--gpu",
            "cpu",
            "--port",
            str(port),
            "--health-interval",
            str(HEALTH_INTERVAL_S),
            "--",
            "--model-path",
            str(target),
            "--context-length",
            "1024",
            "--max-running-requests",
            str(CONCURRENT),
        ],
        launch_env({"SPECGUARD_CACHE_DIR": str(tiny_root)}),
    )
    launcher.wait_for("serving at", timeout=START_TIMEOUT)
    base = f"http://127.0.0.1:{port}"
    prompts = [f"def scale_{i}(x):\n    value = x + {i}\n" for i in range(CONCURRENT)]
    body = lambda p: {"text": p, "sampling_params": {"temperature": 0, "max_new_tokens": NEW_TOKENS, "ignore_eos": True}}
    load_done = threading.Event()
    health_latencies: list[float] = []
    health_generate: list[int] = []

    def one(prompt: str) -> dict:
        reply = httpx.post(f"{base}/generate", json=body(prompt), timeout=600)
        assert reply.status_code == 200, reply.text
        return reply.json()

    def watch_health() -> None:
        """What a supervisor sees while the runtime is busy: /health at once, /health_generate soon."""
        with httpx.Client(base_url=base, timeout=20) as c:
            while not load_done.wait(HEALTH_INTERVAL_S):
                began = time.monotonic()
                assert c.get("/health", timeout=HEALTH_INTERVAL_S).status_code == 200
                health_latencies.append(time.monotonic() - began)
                health_generate.append(c.get("/health_generate").status_code)

    began = time.monotonic()
    results: list[dict] = []
    waves = 0
    with ThreadPoolExecutor(max_workers=CONCURRENT + 1) as pool:
        watcher = pool.submit(watch_health)
        try:
            while waves < MAX_WAVES and (waves == 0 or time.monotonic() - began < LOAD_AT_LEAST_S):
                results += pool.map(one, prompts)
                waves += 1
        finally:
            load_done.set()
        watcher.result()
    elapsed = time.monotonic() - began
    print(f"{waves} x {CONCURRENT} x {NEW_TOKENS} tokens in {elapsed:.1f} s, {len(health_latencies)} health checks by the test")

    assert [r["meta_info"]["completion_tokens"] for r in results] == [NEW_TOKENS] * CONCURRENT * waves
    assert all(r["meta_info"]["finish_reason"] == {"type": "length", "length": NEW_TOKENS} for r in results)
    # The load outlasted several supervision intervals, and the supervisor never saw a failure.
    assert elapsed > 3 * HEALTH_INTERVAL_S, f"the load took only {elapsed:.1f} s: too short to test supervision"
    assert len(health_latencies) >= 2 and max(health_latencies) < HEALTH_INTERVAL_S
    assert health_generate and set(health_generate) == {200}, health_generate
    assert launcher.process.poll() is None, launcher.err[-3000:]
    err = launcher.err
    assert "/health answered" not in err and "unhealthy" not in err, err[-3000:]
    launcher.interrupt(signal.SIGINT)
    assert launcher.wait(timeout=120) == 130
    assert_no_process_left(launcher.runtime_pgid)
