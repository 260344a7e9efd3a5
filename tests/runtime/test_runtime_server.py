"""The reference runtime's HTTP surface through a real server on 127.0.0.1 (a subprocess)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch
from runtime_helpers import REPO, Server, llama_config, random_model, write_checkpoint

from specguard.runtime.loader import load_model
from specguard.runtime.speculative import Decoder, SamplingParams, SpecConfig
from specguard.runtime.tokenizer import Tokenizer

PROMPTS = ["def scale_3(x):\n", "def merge_all(items):\n    result = []\n", "class Parse7:\n", "def fetch_12(node):\n"]
NDT = 5


@pytest.fixture(scope="module")
def server(tiny_pair):
    srv = Server(
        [
            "--model-path",
            str(tiny_pair.target),
            "--speculative-algorithm",
            "STANDALONE",
            "--speculative-draft-model-path",
            str(tiny_pair.draft),
            "--speculative-num-steps",
            "4",
            "--speculative-eagle-topk",
            "1",
            "--decode-log-interval",
            "4",
            "--enable-metrics",
            "--cuda-graph-max-bs",
            "8",
            "--mem-fraction-static",
            "0.8",
            "--served-model-name",
            "tiny",
            "--context-length",
            "256",
        ]
    )
    try:
        srv.wait_ready()
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def plain_greedy(tiny_pair):
    """The runtime's own non-speculative greedy output, in process."""
    target = load_model(tiny_pair.target)
    target.setup_cache(512)
    tok = Tokenizer(tiny_pair.target)
    decoder = Decoder(target, SpecConfig())

    def run(prompt: str, n: int) -> list[int]:
        out: list[int] = []
        for r in decoder.decode(tok.encode(prompt), SamplingParams(temperature=0.0)):
            out += r.tokens
            if len(out) >= n:
                return out[:n]
        raise AssertionError("unreachable")

    return run


def generate(client, prompt: str, n: int = 48, **extra) -> dict:
    body = {"text": prompt, "sampling_params": {"temperature": 0, "max_new_tokens": n, **extra}}
    resp = client.post("/generate", json=body)
    assert resp.status_code == 200, resp.text
    return resp.json()


def test_liveness_and_info(server):
    with server.client() as c:
        assert c.get("/health").status_code == 200
        assert c.get("/health_generate").status_code == 200
        assert c.get("/ready").status_code == 200
        info = c.get("/model_info").json()
        assert info["architectures"] == ["LlamaForCausalLM"] and info["model_type"] == "llama"
        assert info["served_model_name"] == "tiny" and info["is_generation"] is True
        assert c.get("/get_model_info").json() == info
        models = c.get("/v1/models").json()
        assert models["object"] == "list"
        assert models["data"][0]["id"] == "tiny" and models["data"][0]["owned_by"] == "sglang"
        sinfo = c.get("/server_info").json()
        assert sinfo["status"] == "ready" and sinfo["host"] == "127.0.0.1"
        assert (sinfo["speculative_algorithm"], sinfo["speculative_num_steps"], sinfo["speculative_eagle_topk"]) == (
            "STANDALONE",
            4,
            1,
        )
        assert sinfo["speculative_num_draft_tokens"] == NDT
        assert sinfo["batching"] == "batched" and sinfo["reference_runtime"] is True
        assert sinfo["ignored_flags"] == ["--mem-fraction-static 0.8"]
        # read as SGLang reads it; on CPU the capture plan is kept and capture skipped, saying so
        assert sinfo["cuda_graph_max_bs"] == 8
        graphs = sinfo["internal_states"][0]["batching_stats"]["cuda_graph"]
        assert graphs["batch_sizes"] == list(range(1, 9)) and not graphs["enabled"]
        assert "skipped on CPU" in graphs["note"]
        assert sinfo["internal_states"][0]["speculative_algorithm"] == "STANDALONE"
        assert set(c.get("/get_server_info").json()) == set(sinfo)


def test_generate_is_lossless_and_accounting_holds(server, plain_greedy):
    with server.client() as c:
        for prompt in PROMPTS:
            result = generate(c, prompt, ignore_eos=True)
            assert result["output_ids"] == plain_greedy(prompt, 48)
            meta = result["meta_info"]
            assert meta["finish_reason"] == {"type": "length", "length": 48}
            assert meta["completion_tokens"] == 48 and meta["cached_tokens"] == 0
            v = meta["spec_verify_ct"]
            assert meta["spec_accept_length"] == pytest.approx(meta["completion_tokens"] / v)
            assert meta["spec_num_proposed_drafts"] == v * (NDT - 1)
            assert meta["spec_accept_rate"] == pytest.approx(
                meta["spec_num_correct_drafts"] / meta["spec_num_proposed_drafts"]
            )
            hist = meta["spec_correct_drafts_histogram"]
            assert sum(hist) == v and sum(i * h for i, h in enumerate(hist)) == meta["spec_num_correct_drafts"]
            assert meta["spec_accept_length"] > 1.5


def test_stop_conditions(server):
    with server.client() as c:
        full = generate(c, PROMPTS[0], 24)
        stop_token = full["output_ids"][5]
        result = generate(c, PROMPTS[0], 24, stop_token_ids=[stop_token])
        assert result["meta_info"]["finish_reason"] == {"type": "stop", "matched": stop_token}
        assert result["output_ids"] == full["output_ids"][: full["output_ids"].index(stop_token) + 1]
        stop_text = full["text"][10:14]
        result = generate(c, PROMPTS[0], 24, stop=[stop_text])
        assert result["meta_info"]["finish_reason"] == {"type": "stop", "matched": stop_text}
        assert stop_text not in result["text"] and full["text"].startswith(result["text"])


def test_streaming_generate_is_cumulative(server):
    with server.client() as c:
        expected = generate(c, PROMPTS[1], 32)
        body = {"text": PROMPTS[1], "sampling_params": {"temperature": 0, "max_new_tokens": 32}, "stream": True}
        chunks = []
        with c.stream("POST", "/generate", json=body) as resp:
            assert resp.status_code == 200
            for line in resp.iter_lines():
                if line.startswith("data: "):
                    chunks.append(line[len("data: ") :])
        assert chunks[-1] == "[DONE]"
        payloads = [json.loads(x) for x in chunks[:-1]]
        assert len(payloads) > 1
        counts = [p["meta_info"]["completion_tokens"] for p in payloads]
        assert counts == sorted(counts)
        assert all(b["text"].startswith(a["text"]) for a, b in itertools.pairwise(payloads))
        assert payloads[-1]["text"] == expected["text"] and payloads[-1]["output_ids"] == expected["output_ids"]


def test_openai_routes(server):
    with server.client() as c:
        native = generate(c, PROMPTS[2], 20)
        resp = c.post(
            "/v1/completions",
            json={
                "model": "tiny",
                "prompt": PROMPTS[2],
                "max_tokens": 20,
                "temperature": 0,
                "return_spec_tokens_details": True,
            },
        )
        assert resp.status_code == 200, resp.text
        body = resp.json()
        assert body["object"] == "text_completion" and body["choices"][0]["text"] == native["text"]
        assert body["choices"][0]["finish_reason"] == "length"
        assert body["usage"]["completion_tokens"] == 20
        assert body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + 20
        details = body["sglext"]["spec_tokens_details"]
        assert details["spec_accept_length"] == pytest.approx(20 / details["spec_verify_ct"])
        assert "sglext" not in c.post("/v1/completions", json={"prompt": PROMPTS[2], "max_tokens": 4}).json()
        assert (
            c.post("/v1/completions", json={"prompt": PROMPTS[2], "temperature": 0}).json()["usage"][
                "completion_tokens"
            ]
            == 16
        )

        messages = [{"role": "user", "content": "List 3 countries and their capitals."}]
        chat = c.post(
            "/v1/chat/completions", json={"model": "tiny", "messages": messages, "temperature": 0, "max_tokens": 24}
        )
        assert chat.status_code == 200, chat.text
        chat_body = chat.json()
        assert chat_body["object"] == "chat.completion"
        assert chat_body["choices"][0]["message"]["role"] == "assistant"
        content = chat_body["choices"][0]["message"]["content"]
        assert chat_body["usage"]["completion_tokens"] == 24

        pieces = []
        with c.stream(
            "POST",
            "/v1/chat/completions",
            json={"messages": messages, "temperature": 0, "max_tokens": 24, "stream": True},
        ) as resp:
            for line in resp.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    chunk = json.loads(line[6:])
                    assert chunk["object"] == "chat.completion.chunk"
                    pieces.append(chunk["choices"][0]["delta"].get("content", ""))
        assert "".join(pieces) == content

        text = []
        with c.stream(
            "POST", "/v1/completions", json={"prompt": PROMPTS[2], "max_tokens": 20, "temperature": 0, "stream": True}
        ) as resp:
            lines = [line for line in resp.iter_lines() if line.startswith("data: ")]
        assert lines[-1] == "data: [DONE]"
        text = [json.loads(line[6:])["choices"][0]["text"] for line in lines[:-1]]
        assert "".join(text) == native["text"]


def test_bad_requests_get_clear_errors_and_the_server_keeps_serving(server):
    with server.client() as c:
        cases = [
            c.post("/v1/completions", content=b"{not json", headers={"Content-Type": "application/json"}),
            c.post("/v1/completions", content=b'{"prompt": "x"}', headers={"Content-Type": "text/plain"}),
            c.post("/v1/completions", json={"max_tokens": 3}),
            c.post("/v1/chat/completions", json={"messages": "hello"}),
            c.post("/v1/completions", json={"prompt": "def " * 400}),
            c.post("/generate", json={"input_ids": [1, 2, 10**6]}),
            c.post("/generate", json={"text": "x", "sampling_params": {"max_new_tokens": "many"}}),
        ]
        for resp in cases:
            assert resp.status_code == 400, resp.text
            body = resp.json()
            assert (
                body["object"] == "error"
                and body["type"] == "Bad Request"
                and body["code"] == 400
                and body["param"] is None
            )
            assert body["message"]
        assert "context length" in cases[4].json()["message"]
        huge = c.post("/v1/completions", json={"prompt": "x" * (2 << 20)})
        assert huge.status_code == 413 and "exceeds the limit" in huge.json()["message"]
        assert generate(c, PROMPTS[0], 8)["meta_info"]["completion_tokens"] == 8
        assert c.get("/health").status_code == 200


def test_logprobs_are_refused_with_a_400_that_says_so(server):
    """The reference runtime computes no log probabilities: a request for them is refused, never
    answered as if it had none (SGLang 0.5.23's fields: protocol.py:377, 926-927; io_struct.py:230, 235)."""
    with server.client() as c:
        cases = [
            c.post("/v1/completions", json={"prompt": "def ", "max_tokens": 2, "logprobs": 1}),
            c.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, "logprobs": True}),
            c.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, "top_logprobs": 3}),
            c.post("/generate", json={"text": "def ", "sampling_params": {"max_new_tokens": 2}, "return_logprob": True}),
        ]
        for resp in cases:
            assert resp.status_code == 400, resp.text
            assert "returns no log probabilities" in resp.json()["message"]
        unasked = c.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, "logprobs": False})
        assert unasked.status_code == 200, unasked.text


def test_concurrent_speculative_requests_are_correct(server, plain_greedy):
    with server.client() as c, ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda p: generate(c, p, 32, ignore_eos=True), PROMPTS * 2))
    for prompt, result in zip(PROMPTS * 2, results, strict=True):
        assert result["output_ids"] == plain_greedy(prompt, 32)


def test_server_wide_accept_length_metrics_and_log_lines(server):
    with server.client() as c:
        for prompt in PROMPTS:
            generate(c, prompt, 48)
        state = c.get("/server_info").json()["internal_states"][0]
        assert state["avg_spec_accept_length"] > 1.5
        assert state["last_gen_throughput"] > 0
        metrics = c.get("/metrics").text
    for name in [
        "sglang:spec_accept_length",
        "sglang:spec_accept_rate",
        "sglang:spec_num_steps",
        "sglang:spec_num_draft_tokens",
        "sglang:spec_verify_calls_total",
        "sglang:num_running_reqs",
        "sglang:num_queue_reqs",
        "sglang:gen_throughput",
        "sglang:prompt_tokens_total",
        "sglang:generation_tokens_total",
        "sglang:e2e_request_latency_seconds_bucket",
        "sglang:time_to_first_token_seconds_count",
    ]:
        assert f"{name}{{" in metrics, name
    assert 'tp_rank="0",pp_rank="0",moe_ep_rank="0"' in metrics
    log = server.log
    assert "Load weight end. elapsed=" in log and "type=LlamaForCausalLM" in log
    assert "The server is fired up and ready to roll!" in log
    assert "Prefill batch, #new-seq: 1, #new-token:" in log
    decode = [line for line in server.lines if "Decode batch, #running-req:" in line]
    assert decode and all("accept len: " in line and "cpu graph: False" in line for line in decode)
    assert "--mem-fraction-static 0.8: GPU-only tuning flag, ignored" in log
    assert "cuda graph: CUDA graphs are skipped on CPU" in log


def test_ngram_server_with_api_key(tiny_pair, plain_greedy):
    srv = Server(
        [
            "--model-path",
            str(tiny_pair.target),
            "--speculative-algorithm",
            "NGRAM",
            "--api-key",
            "sekret",
            "--decode-log-interval",
            "4",
        ],
        api_key="sekret",
    )
    try:
        srv.wait_ready()
        with srv.client() as c:
            prompt = "def count_5(size):\n    value = size + 5\n    return count(value)\n\ndef count_6(size):\n"
            result = generate(c, prompt, 48, ignore_eos=True)
            assert result["output_ids"] == plain_greedy(prompt, 48)
            assert result["meta_info"]["spec_num_proposed_drafts"] == result["meta_info"]["spec_verify_ct"] * 11
        import httpx

        with httpx.Client(base_url=srv.base, timeout=30) as anonymous:
            assert anonymous.post("/generate", json={"text": "x"}).status_code == 401
            assert anonymous.get("/v1/models").status_code == 401
            assert anonymous.get("/health").status_code == 200
            assert anonymous.get("/metrics").status_code == 404  # metrics are off without --enable-metrics
        with srv.client() as c:
            info = c.get("/server_info").json()
        assert "--api-key '***'" in info["launch_command"]
        assert "sekret" not in json.dumps(info)  # the key is never served back, launch_command included
        assert "Decode batch" in srv.log
        assert "sekret" not in srv.log
    finally:
        srv.stop()


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "specguard.runtime", *args], capture_output=True, text=True, cwd=REPO, timeout=120
    )


def test_cli_refusals_are_one_clear_line(tiny_pair, tmp_path):
    other_vocab = llama_config(vocab=64)
    small = write_checkpoint(tmp_path / "draft64", other_vocab, random_model(other_vocab))
    partial = write_checkpoint(
        tmp_path / "partial", other_vocab, random_model(other_vocab), drop=("model.norm.weight",)
    )
    cases = {
        "not an EAGLE head the reference runtime loads": [
            "--model-path",
            str(tiny_pair.target),
            "--speculative-algorithm",
            "EAGLE3",
            "--speculative-draft-model-path",
            str(tiny_pair.draft),
        ],
        "does not exist": ["--model-path", str(tmp_path / "missing")],
        "draft vocabulary differs": [
            "--model-path",
            str(tiny_pair.target),
            "--speculative-algorithm",
            "STANDALONE",
            "--speculative-draft-model-path",
            str(small),
        ],
        "'model.norm.weight' is missing": ["--model-path", str(partial), "--tokenizer-path", str(tiny_pair.target)],
        "--tp-size 2": ["--model-path", str(tiny_pair.target), "--tp-size", "2"],
    }
    for expected, argv in cases.items():
        result = _cli(*argv, "--port", "1")
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and expected in errors[0], result.stderr
    assert torch.get_num_threads() == 1
