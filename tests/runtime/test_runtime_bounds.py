"""Every bad request value is a 400 (or 413) with the OpenAI error object, never a 500, and the
server stays healthy and lossless after each; health is answered while the queue is busy.

A real server on 127.0.0.1 (the module-scoped ``server`` of test_runtime_server.py).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from test_runtime_server import PROMPTS, generate, plain_greedy, server  # noqa: F401 - fixtures

JSON = {"Content-Type": "application/json"}
HUGE_INT = "9" * 5000

# (name, route, raw body bytes, status)
BAD_BODIES = [
    ("temperature NaN", "/v1/completions", b'{"prompt": "x", "temperature": NaN}', 400),
    ("temperature Infinity", "/v1/completions", b'{"prompt": "x", "temperature": Infinity}', 400),
    ("temperature negative", "/v1/completions", b'{"prompt": "x", "temperature": -0.5}', 400),
    ("top_p zero", "/v1/completions", b'{"prompt": "x", "top_p": 0}', 400),
    ("min_p above 1", "/v1/completions", b'{"prompt": "x", "min_p": 1.5}', 400),
    ("min_p negative", "/v1/chat/completions", b'{"messages": [{"role": "user", "content": "x"}], "min_p": -0.1}', 400),
    ("top_k zero", "/v1/completions", b'{"prompt": "x", "top_k": 0}', 400),
    ("seed past 64 bits", "/v1/completions", b'{"prompt": "x", "seed": 18446744073709551616}', 400),
    ("seed past int64", "/generate", b'{"text": "x", "sampling_params": {"seed": 9223372036854775808}}', 400),
    ("non-UTF-8 body", "/v1/completions", b'{"prompt": "\xff\xfe"}', 400),
    ("deeply nested JSON", "/v1/completions", b'{"prompt": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 400),
    ("5000-digit integer", "/v1/completions", b'{"prompt": "x", "max_tokens": ' + HUGE_INT.encode() + b"}", 400),
    ("5000-digit seed", "/generate", b'{"text": "x", "sampling_params": {"seed": ' + HUGE_INT.encode() + b"}}", 400),
    ("body an array", "/generate", b"[1, 2]", 400),
]


@pytest.mark.parametrize(("name", "route", "body", "status"), BAD_BODIES, ids=[case[0] for case in BAD_BODIES])
def test_bad_value_is_a_clean_error_and_the_server_stays_lossless(server, plain_greedy, name, route, body, status):  # noqa: F811
    with server.client() as c:
        reply = c.post(route, content=body, headers=JSON)
        assert reply.status_code == status, f"{name}: {reply.status_code} {reply.text[:300]}"
        error = reply.json()
        assert error["object"] == "error" and error["code"] == status and error["message"], error
        assert c.get("/health").status_code == 200
        assert generate(c, PROMPTS[1], 8, ignore_eos=True)["output_ids"] == plain_greedy(PROMPTS[1], 8)


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc")


def test_chunked_body_over_the_limit_is_413_and_never_buffered(server):  # noqa: F811
    """No Content-Length for the middleware to check: the body is counted as it streams in, and
    the server's peak memory does not grow by the 64 MiB the client offers."""

    def chunks():
        for _ in range(64):
            yield b" " * (1 << 20)

    before = peak_rss_mib(server.proc.pid)
    with server.client() as c:
        try:
            reply = c.post("/v1/completions", content=chunks(), headers=JSON)
            assert reply.status_code == 413, reply.text[:300]
            assert "exceeds the limit" in reply.json()["message"]
        except (httpx.WriteError, httpx.RemoteProtocolError):
            pass  # the server answered 413 and closed while the client was still sending
        assert c.get("/health").status_code == 200
    grown = peak_rss_mib(server.proc.pid) - before
    assert grown < 32, f"the server's peak memory grew {grown:.0f} MiB: it buffered the chunked body"


def test_health_answers_at_once_and_health_generate_goes_ahead_of_the_queue(server):  # noqa: F811
    finished: list[tuple[str, float]] = []

    def long_request(prompt: str) -> None:
        with server.client() as c:
            generate(c, prompt, 200, ignore_eos=True)
        finished.append(("request", time.monotonic()))

    def running(c) -> int:
        text = c.get("/metrics").text
        return int(float(re.search(r"sglang:num_running_reqs\{[^}]*\} (\S+)", text).group(1)))

    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(long_request, p) for p in PROMPTS]
        with server.client() as c:
            # Once the server counts the requests running (its counter, not a sleep: batched
            # speculative rounds may finish all of them within a fixed sleep).
            while running(c) == 0:
                assert not all(future.done() for future in futures), "the requests ended before they were seen running"
                time.sleep(0.01)
            began = time.monotonic()
            assert c.get("/health").status_code == 200
            assert time.monotonic() - began < 1.0, "/health waited behind the queued requests"
            assert c.get("/health_generate").status_code == 200
            finished.append(("health_generate", time.monotonic()))
        for future in futures:
            future.result()
    order = [kind for kind, _ in sorted(finished, key=lambda item: item[1])]
    assert order.index("health_generate") < len(order) - 1, f"health_generate waited for every queued request: {order}"


OUT_OF_RANGE_FLAGS = [
    (["--port", "99999"], "--port 99999"),
    (["--port", "0"], "--port 0"),
    (["--context-length", "0"], "--context-length 0"),
    (["--context-length", "-5"], "--context-length -5"),
    (["--random-seed", str(1 << 64)], "--random-seed"),
    (["--random-seed", "-1"], "--random-seed -1"),
    (["--max-running-requests", "0"], "--max-running-requests 0"),
    (["--speculative-algorithm", "NGRAM", "--speculative-ngram-capacity", "-1"], "--speculative-ngram-capacity -1"),
    (["--context-length", "4096", "--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", "d",
      "--speculative-num-steps", "100000", "--speculative-eagle-topk", "1"], "--speculative-num-steps 100000"),
    (["--context-length", "512", "--speculative-algorithm", "NGRAM", "--speculative-num-steps", "2",
      "--speculative-eagle-topk", "8", "--speculative-num-draft-tokens", "600"], "does not fit the context length 512"),
]


@pytest.mark.parametrize(("argv", "named"), OUT_OF_RANGE_FLAGS, ids=[" ".join(a) for a, _ in OUT_OF_RANGE_FLAGS])
def test_out_of_range_runtime_flag_is_one_line_before_anything_loads(tmp_path, argv, named):
    # The model path does not exist: the flag must be refused before the runtime looks for it.
    result = subprocess.run(
        [sys.executable, "-m", "specguard.runtime", "--model-path", str(tmp_path / "absent"), *argv],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and named in errors[0] and "does not exist" not in errors[0], result.stderr


def test_topk_wider_than_the_vocabulary_is_refused_before_weights_load(tmp_path):
    target = tmp_path / "target"
    target.mkdir()  # config.json only: the refusal must come before the loader looks for weights
    (target / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 512, "max_position_embeddings": 2048,
        "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
    }))
    argv = ["--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", str(target),
            "--speculative-num-steps", "2", "--speculative-eagle-topk", "100000", "--speculative-num-draft-tokens", "8"]
    result = subprocess.run([sys.executable, "-m", "specguard.runtime", "--model-path", str(target), *argv],
                            capture_output=True, text=True, timeout=120)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(errors) == 1 and "--speculative-eagle-topk 100000: more than the target's 512 tokens" in errors[0], result.stderr


def test_a_context_length_no_memory_holds_is_refused_with_the_limit(tiny_pair):
    """Before: an allocator traceback ("you tried to allocate 2560000000512 bytes")."""
    result = subprocess.run(
        [sys.executable, "-m", "specguard.runtime", "--model-path", str(tiny_pair.target), "--context-length", "10000000000",
         "--port", "1"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith("error: --context-length 10000000000: the KV cache for 2 request(s)")
    largest = int(errors[0].split("at most ")[1].split()[0])
    assert 2048 <= largest < 10_000_000_000  # the limit names a length this machine can hold


def test_an_aborted_upload_is_one_log_line_not_a_traceback(server):  # noqa: F811
    """A client that announces more body than it sends, then closes: nobody is left to answer."""
    import socket

    first = len(server.lines)
    routes = ("/generate", "/v1/completions", "/v1/chat/completions")
    for route in routes:
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            head = f"POST {route} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            sock.sendall(head.encode() + b'{"text": ')
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        said = [line for line in server.lines[first:] if "the client closed the connection after" in line]
        if len(said) == len(routes):
            break
        time.sleep(0.1)
    log = "\n".join(server.lines[first:])
    assert len(said) == len(routes), log
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log
    with server.client() as c:
        assert c.get("/health").status_code == 200
