"""The scheduler in a process of its own (``specguard.runtime.scheduler_process``), through a real
server: it is a child of the server, it leaves with it, and its death takes the server down with a
clear line instead of leaving a server that answers nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from runtime_helpers import Server

from specguard.runtime.flags import parse_flags
from specguard.runtime.generate_input import (
    PRIORITY_REQUEST,
    GenerateInput,
    SamplingParams,
)
from specguard.runtime.scheduler_process import _Bridge, build_engine
from tests.launch.conftest import children_of, process_gone


def _scheduler_pid(server_pid: int) -> int:
    """The server's scheduler process: its child started by multiprocessing's spawn (not the
    resource tracker, which multiprocessing starts beside it)."""
    found = []
    for kid in children_of(server_pid):
        cmdline = Path(f"/proc/{kid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        if "spawn_main" in cmdline:
            found.append(kid)
    assert len(found) == 1, f"expected one scheduler process under {server_pid}, found {found}"
    return found[0]


@pytest.fixture
def plain_server(tiny_pair):
    srv = Server(["--model-path", str(tiny_pair.target), "--context-length", "512"])
    try:
        srv.wait_ready()
        yield srv
    finally:
        srv.stop()


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_the_scheduler_is_a_child_process_and_leaves_on_a_stop_signal_to_the_group(plain_server, stop_signal):
    scheduler = _scheduler_pid(plain_server.proc.pid)
    # torch lives in the scheduler's process only: the server's serves HTTP and tokenises
    assert "libtorch" in Path(f"/proc/{scheduler}/maps").read_text()
    assert "libtorch" not in Path(f"/proc/{plain_server.proc.pid}/maps").read_text()
    with plain_server.client() as client:
        answer = client.post("/generate", json={"text": "def f(x):", "sampling_params": {"max_new_tokens": 4}})
        assert answer.status_code == 200 and len(answer.json()["output_ids"]) == 4
        stats = client.get("/server_info").json()["internal_states"][0]["batching_stats"]
        assert stats["decode_iterations"] >= 3  # the scheduler's own counters, read across the pipe
    assert os.getpgid(scheduler) == plain_server.proc.pid  # in the server's group, which was started as its own
    # Ctrl-C, or a supervisor's stop: the whole group gets it, and the server stops the scheduler
    os.killpg(plain_server.proc.pid, stop_signal)
    # uvicorn re-raises the signal it caught once it has shut down: SIGINT as KeyboardInterrupt
    # (exit 130), SIGTERM with its default action (the process ends by the signal)
    expected = 130 if stop_signal == signal.SIGINT else -stop_signal
    assert plain_server.proc.wait(timeout=30) == expected, plain_server.log
    assert process_gone(scheduler), "the scheduler process outlived the server"
    assert "Traceback" not in plain_server.log
    assert "the scheduler process exited" not in plain_server.log  # stopped in order, not lost


def test_a_dead_scheduler_takes_the_server_down_and_fails_its_requests(plain_server):
    scheduler = _scheduler_pid(plain_server.proc.pid)
    streamed: list[str] = []
    first_chunk = threading.Event()

    def stream() -> None:
        body = {"text": "def f(x):", "stream": True, "sampling_params": {"max_new_tokens": 400, "ignore_eos": True}}
        with plain_server.client() as client, client.stream("POST", "/generate", json=body) as response:
            for line in response.iter_lines():
                streamed.append(line)
                first_chunk.set()

    reader = threading.Thread(target=stream)
    reader.start()
    assert first_chunk.wait(30), plain_server.log
    os.kill(scheduler, signal.SIGKILL)
    reader.join(timeout=30)
    assert not reader.is_alive(), "a request in flight hung after its scheduler died"
    code = plain_server.proc.wait(timeout=30)
    assert code == 1, plain_server.log
    assert any("the scheduler process exited while serving (exit code -9)" in line for line in plain_server.lines), (
        plain_server.log
    )
    # the stream ended with an error (or was cut when the server went down), never with 400 tokens' worth
    assert not any('"finish_reason": {"type": "length", "length": 400}' in line for line in streamed)


def test_the_scheduler_dies_with_a_killed_server(plain_server):
    """SIGKILL gives the server no chance to stop its scheduler: the kernel does (PR_SET_PDEATHSIG)."""
    scheduler = _scheduler_pid(plain_server.proc.pid)
    plain_server.proc.kill()  # the server alone, not its group
    plain_server.proc.wait(timeout=30)
    assert process_gone(scheduler), "the scheduler process outlived a killed server"


def test_a_refused_checkpoint_is_one_line_from_the_scheduler_process(tmp_path):
    """The scheduler loads the checkpoint: its refusal still reaches the user as one line, exit 2."""
    result = subprocess.run(
        [sys.executable, "-m", "specguard.runtime", "--model-path", str(tmp_path / "nowhere")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [f"error: model directory {tmp_path / 'nowhere'} does not exist"], result.stderr


def test_the_bridge_answers_aborts_and_forgets_every_finished_request(tiny_pair):
    """The scheduler's end of the pipe, in this process with a real engine: results for every
    request (some finish at admission, before submit returns), an abort that stops a long one,
    counters between iterations, and no request left behind."""
    import multiprocessing

    args = parse_flags(["--model-path", str(tiny_pair.target), "--context-length", "256"]).args
    engine, ready = build_engine(args)
    assert ready.context_length == 256 and ready.max_running_requests == engine.max_running_requests
    server_end, scheduler_end = multiprocessing.Pipe()
    bridge = _Bridge(engine, scheduler_end)
    engine.start()
    serving = threading.Thread(target=bridge.serve)
    serving.start()
    try:
        prompt = [5, 6, 7]
        long = GenerateInput(input_ids=prompt, sampling=SamplingParams(max_new_tokens=200, temperature=0.0), rid="long",
                             ignore_eos=True, stream=True)
        server_end.send(("submit", long, PRIORITY_REQUEST, time.perf_counter()))
        for i in range(12):
            inp = GenerateInput(input_ids=prompt, sampling=SamplingParams(max_new_tokens=i % 3, temperature=0.0), rid=f"r{i}")
            server_end.send(("submit", inp, PRIORITY_REQUEST, time.perf_counter()))
        done: dict[str, dict] = {}
        aborted = False
        while len(done) < 13:
            assert server_end.poll(60), f"no answer; done so far: {sorted(done)}"
            message = server_end.recv()
            assert message[0] == "result" and message[2] != "error", message
            _, rid, kind, payload = message
            if kind == "chunk" and rid == "long" and not aborted:
                server_end.send(("abort", "long"))
                aborted = True
            if kind == "done":
                done[rid] = payload
        assert [len(done[f"r{i}"]["output_ids"]) for i in range(12)] == [i % 3 for i in range(12)]
        assert done["long"]["meta_info"]["finish_reason"]["type"] == "abort"
        assert len(done["long"]["output_ids"]) < 200
        server_end.send(("call", 7, "stats"))
        assert server_end.poll(30)
        kind, call_id, stats = server_end.recv()
        assert (kind, call_id, stats["alive"]) == ("reply", 7, True)
        assert stats["batching_stats"]["decode_iterations"] >= 1
        assert bridge.open_requests == 0
    finally:
        server_end.send(("stop",))
        serving.join(timeout=30)
    assert not serving.is_alive() and not engine.alive
