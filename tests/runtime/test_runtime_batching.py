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
    """Ordered by the server's own counters, never by the clock: the short request is sent once
    the server counts the three long ones running; when its answer is back the server still counts
    them running, and it ran in iterations that advanced all four together (stuck behind them, it
    would have run alone, after them)."""
    server = request.getfixturevalue(server_name)

    def running(c) -> int:
        return int(float(re.search(r"sglang:num_running_reqs\{[^}]*\} (\S+)", c.get("/metrics").text).group(1)))

    def iterations_of_four(c) -> int:
        stats = c.get("/server_info").json()["internal_states"][0]["batching_stats"]
        return stats["batch_size_histogram"].get("4", 0)

    def run_long(prompt: str) -> dict:
        with server.client() as own:
            return generate(own, prompt, 1500, ignore_eos=True)

    with server.client() as c, ThreadPoolExecutor(max_workers=3) as pool:
        before = iterations_of_four(c)
        longs = [pool.submit(run_long, PROMPTS[i]) for i in range(3)]
        while running(c) < 3:
            assert not any(future.done() for future in longs), "a long request ended before the three ran together"
            time.sleep(0.02)
        short = generate(c, PROMPTS[3], 4, ignore_eos=True)
        still_running = running(c)
        for future in longs:
            assert future.result()["meta_info"]["finish_reason"] == {"type": "length", "length": 1500}
        together = iterations_of_four(c) - before
    assert short["meta_info"]["finish_reason"] == {"type": "length", "length": 4}
    # 4 while the scheduler has not yet recounted after the short one left: the long ones still run
    assert still_running >= 3, "the long requests were done before the short one"
    assert together >= 1, "the short request never ran beside the long ones"


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


@pytest.fixture(scope="module")
def eagle3_server(tiny_eagle3):
    srv = _start(
        [
            "--model-path",
            str(tiny_eagle3.target),
            "--speculative-algorithm",
            "EAGLE3",
            "--speculative-draft-model-path",
            str(tiny_eagle3.draft),
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
        ]
    )
    yield srv
    srv.stop()


@pytest.mark.parametrize("server_name", ["standalone_server", "eagle3_server"])
def test_speculative_requests_advance_together_and_the_counters_say_so(request, server_name, plain_greedy):  # noqa: F811
    """Concurrent speculative requests run in shared rounds (batch sizes above 1 in the server's
    own counters), each gives plain greedy output, and /server_info and /metrics report the batch
    sizes and the accept lengths, aggregate and per request."""
    server = request.getfixturevalue(server_name)
    cases = [(PROMPTS[i % len(PROMPTS)], 24 + 4 * i) for i in range(8)]
    with server.client() as c:
        with ThreadPoolExecutor(max_workers=len(cases)) as pool:
            results = list(pool.map(lambda case: generate(c, *case, ignore_eos=True), cases))
        stats = c.get("/server_info").json()["internal_states"][0]["batching_stats"]
        metrics = c.get("/metrics").text
    for (prompt, n), result in zip(cases, results, strict=True):
        assert result["output_ids"] == plain_greedy(prompt, n)
        assert result["meta_info"]["spec_accept_length"] > 1.0
    sizes = {int(k): v for k, v in stats["batch_size_histogram"].items()}
    assert max(sizes) > 1, sizes  # rounds really were shared
    assert stats["decode_iterations"] == sum(sizes.values()) and stats["avg_batch_size"] >= 1.0
    assert stats["recent_batch_sizes"] and max(stats["recent_batch_sizes"]) <= 8 + 1
    assert stats["spec_accept_length_since_start"] > 1.0 and stats["spec_verify_rounds_total"] > 0
    rids = {r["meta_info"]["id"] for r in results}
    per_request = {r["rid"]: r for r in stats["recent_request_accept_lengths"]}
    for result in results:
        mine = per_request[result["meta_info"]["id"]]
        assert mine["spec_accept_length"] == pytest.approx(result["meta_info"]["spec_accept_length"])
    assert rids <= set(per_request)
    assert "specguard:batch_size_bucket{" in metrics and "specguard:request_spec_accept_length_count{" in metrics
    total = float(re.search(r"specguard:spec_accept_length_since_start\{[^}]*\} (\S+)", metrics).group(1))
    assert total > 1.0
