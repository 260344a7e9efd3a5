"""Iteration-level scheduling through a real server on 127.0.0.1: concurrent requests give the
text each gives alone, a short request overtakes long ones, and a non-streaming request whose
client closes its socket stops being generated."""

from __future__ import annotations

import json
import re
import socket
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from runtime_helpers import Server
from test_runtime_server import PROMPTS, generate, plain_greedy  # noqa: F401 - fixture

# Different lengths, so requests join and leave the running batch at different steps.
LENGTHS = [40, 17, 33, 8, 25, 40, 3, 29]


def _start(args: list[str]) -> Server:
    srv = Server([*args, "--context-length", "2048", "--enable-metrics"])
    try:
        srv.wait_ready()
    except BaseException:
        srv.stop()
        raise
    return srv


@pytest.fixture(scope="module")
def plain_server(tiny_pair):
    srv = _start(["--model-path", str(tiny_pair.target)])
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def standalone_server(tiny_pair):
    srv = _start(
        [
            "--model-path",
            str(tiny_pair.target),
            "--speculative-algorithm",
            "STANDALONE",
            "--speculative-draft-model-path",
            str(tiny_pair.draft),
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
        ]
    )
    yield srv
    srv.stop()


def _streamed(client, prompt: str, n: int) -> dict:
    body = {"text": prompt, "stream": True, "sampling_params": {"temperature": 0, "max_new_tokens": n, "ignore_eos": True}}
    last = None
    with client.stream("POST", "/generate", json=body) as resp:
        assert resp.status_code == 200
        for line in resp.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                last = json.loads(line[len("data: ") :])
    assert last is not None
    return last


@pytest.mark.parametrize("server_name", ["plain_server", "standalone_server"])
def test_concurrent_requests_give_the_text_each_gives_alone(request, server_name, plain_greedy):  # noqa: F811
    server = request.getfixturevalue(server_name)
    cases = [(PROMPTS[i % len(PROMPTS)], n) for i, n in enumerate(LENGTHS)]
    with server.client() as c:
        alone = [generate(c, p, n, ignore_eos=True) for p, n in cases]
        with ThreadPoolExecutor(max_workers=len(cases) + 1) as pool:
            together = list(pool.map(lambda case: generate(c, *case, ignore_eos=True), cases))
            streamed = pool.submit(_streamed, c, PROMPTS[1], 30)
            alongside = list(pool.map(lambda case: generate(c, *case, ignore_eos=True), cases))
            streamed_result = streamed.result()
        peak = max(int(float(v)) for v in re.findall(r"sglang:num_running_reqs\{[^}]*\} (\S+)", c.get("/metrics").text))
    for (prompt, n), one, many, more in zip(cases, alone, together, alongside, strict=True):
        assert one["output_ids"] == plain_greedy(prompt, n)
        assert many["output_ids"] == one["output_ids"] and many["text"] == one["text"]
        assert more["output_ids"] == one["output_ids"]
        assert many["meta_info"]["finish_reason"] == {"type": "length", "length": n}
    assert streamed_result["output_ids"] == plain_greedy(PROMPTS[1], 30)
    assert peak == 0  # every request finished and left the running batch


@pytest.mark.parametrize("server_name", ["plain_server", "standalone_server"])
def test_a_short_request_is_not_stuck_behind_long_ones(request, server_name):
    server = request.getfixturevalue(server_name)
    finished: dict[str, float] = {}

    def run(name: str, prompt: str, n: int) -> None:
        with server.client() as c:
            generate(c, prompt, n, ignore_eos=True)
        finished[name] = time.monotonic()

    def running() -> int:
        with server.client() as c:
            text = c.get("/metrics").text
        return int(float(re.search(r"sglang:num_running_reqs\{[^}]*\} (\S+)", text).group(1)))

    with ThreadPoolExecutor(max_workers=4) as pool:
        longs = [pool.submit(run, f"long{i}", PROMPTS[i], 1500) for i in range(3)]
        # The short request is sent once the server itself counts the long ones as running (its
        # counter, not a sleep: under load a fixed sleep may outlast them).
        deadline = time.monotonic() + 60
        while running() < 3 and not any(future.done() for future in longs):
            assert time.monotonic() < deadline, "the long requests never ran"
            time.sleep(0.02)
        run("short", PROMPTS[3], 4)
        for future in longs:
            future.result()
    # Stuck behind them, it would finish after them: 4 tokens against 1500 each.
    assert finished["short"] < min(finished[f"long{i}"] for i in range(3)), finished


def test_abandoned_non_streaming_request_is_cancelled(plain_server):
    """A client sends a long non-streaming request, then closes its socket: the engine stops."""
    body = json.dumps(
        {"text": PROMPTS[0], "sampling_params": {"temperature": 0, "max_new_tokens": 1800, "ignore_eos": True}}
    ).encode()
    head = (
        f"POST /generate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()

    def running(c) -> int:
        text = c.get("/metrics").text
        return int(float(re.search(r"sglang:num_running_reqs\{[^}]*\} (\S+)", text).group(1)))

    with plain_server.client() as c:
        with socket.create_connection(("127.0.0.1", plain_server.port)) as sock:
            sock.sendall(head + body)
            deadline = time.monotonic() + 10
            while running(c) == 0:  # wait until the engine serves it
                assert time.monotonic() < deadline, "the request never started"
                time.sleep(0.05)
        closed = time.monotonic()
        while running(c) != 0:
            assert time.monotonic() - closed < 5.0, "the engine kept generating for a client that left"
            time.sleep(0.05)
    assert any("abandoned by its client: cancelled" in line for line in plain_server.lines), plain_server.log[-2000:]
    made = [re.search(r"cancelled \(client disconnected\) after (\d+) of 1800", line) for line in plain_server.lines]
    made = [int(m.group(1)) for m in made if m]
    assert len(made) == 1 and made[0] < 1800, plain_server.log[-2000:]
