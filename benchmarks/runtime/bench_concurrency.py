"""Benchmark: aggregate tokens/s and p50/p99 latency of the reference runtime's server under
concurrency 1, 4 and 16, plain decoding and speculative (STANDALONE chain, tiny pair), for the
batched scheduler (iteration-level) against the queued one (first-in first-out, batch size 1)
in the same run.

    python benchmarks/runtime/bench_concurrency.py [--new-tokens 64] [--requests-per-client 2] [--repeats 1]

Both schedulers' servers (``--scheduler batched|queued``) run side by side, each a real
``python -m specguard.runtime`` on 127.0.0.1 with one torch thread, and are measured in turn
(only one is loaded at a time, in alternating order over ``--repeats``), so machine-load drift
hits both. At concurrency ``c``, ``c``
clients each send ``--requests-per-client`` greedy ``/generate`` requests of ``--new-tokens``
tokens (``ignore_eos``) one after another; aggregate tokens/s is all tokens over the wall-clock
time of the whole level, latency is per request (p99 of a few dozen requests is close to the
maximum). Every response's tokens are checked against the queued server's answer at
concurrency 1 for the same prompt; a mismatch is reported and fails the run (exit 1).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench_speculative import PROMPTS

CONCURRENCY = (1, 4, 16)
SCHEDULERS = ("queued", "batched")


def start_server(args: list[str]) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "specguard.runtime", "--port", str(port), "--log-level", "warning", *args],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server {args} exited with {proc.returncode}")
        try:
            if urllib.request.urlopen(url + "/health", timeout=5).status == 200:
                return proc, url
        except OSError:
            time.sleep(0.2)
    stop_server(proc)
    raise TimeoutError(f"server {args} not ready")


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def generate(url: str, prompt: str, new_tokens: int) -> tuple[float, list[int]]:
    body = json.dumps(
        {"text": prompt, "sampling_params": {"temperature": 0, "max_new_tokens": new_tokens, "ignore_eos": True}}
    ).encode()
    began = time.perf_counter()
    with urllib.request.urlopen(
        urllib.request.Request(url + "/generate", data=body, headers={"Content-Type": "application/json"}),
        timeout=600,
    ) as resp:
        result = json.loads(resp.read())
    return time.perf_counter() - began, result["output_ids"]


def measure(url: str, concurrency: int, per_client: int, new_tokens: int) -> dict:
    """One level: ``concurrency`` clients, ``per_client`` requests each, back to back."""
    work = [PROMPTS[i % len(PROMPTS)] for i in range(concurrency * per_client)]

    def client(index: int) -> list[tuple[str, float, list[int]]]:
        mine = work[index::concurrency]
        return [(prompt, *generate(url, prompt, new_tokens)) for prompt in mine]

    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        done = [item for items in pool.map(client, range(concurrency)) for item in items]
    elapsed = time.perf_counter() - began
    latencies = sorted(lat for _, lat, _ in done)
    return {
        "tokens_per_s": sum(len(ids) for _, _, ids in done) / elapsed,
        "p50_s": statistics.median(latencies),
        "p99_s": latencies[min(len(latencies) - 1, round(0.99 * (len(latencies) - 1)))],
        "outputs": [(prompt, ids) for prompt, _, ids in done],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--requests-per-client", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1, help="timed rounds per level and scheduler (best kept)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    opts = parser.parse_args()

    from specguard.runtime.tiny import ensure_tiny_pair

    pair = ensure_tiny_pair()
    modes = {
        "plain": ["--model-path", str(pair.target)],
        "STANDALONE chain k=3": [
            "--model-path",
            str(pair.target),
            "--speculative-algorithm",
            "STANDALONE",
            "--speculative-draft-model-path",
            str(pair.draft),
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
        ],
    }
    figures: dict[str, dict[str, dict[int, dict]]] = {}
    mismatches = 0
    for mode, args in modes.items():
        servers = {name: start_server([*args, "--scheduler", name]) for name in SCHEDULERS}
        try:
            reference = {p: generate(servers["queued"][1], p, opts.new_tokens)[1] for p in PROMPTS}
            figures[mode] = {name: {} for name in SCHEDULERS}
            for concurrency in CONCURRENCY:
                for repeat in range(opts.repeats):
                    # interleaved, first one then the other, so load drift hits both alike
                    for name in SCHEDULERS if repeat % 2 == 0 else SCHEDULERS[::-1]:
                        got = measure(servers[name][1], concurrency, opts.requests_per_client, opts.new_tokens)
                        bad = sum(ids != reference[prompt] for prompt, ids in got.pop("outputs"))
                        mismatches += bad
                        best = figures[mode][name].get(concurrency)
                        if best is None or got["tokens_per_s"] > best["tokens_per_s"]:
                            figures[mode][name][concurrency] = {**got, "mismatches": bad}
                        print(f"{mode:22} {name:8} c={concurrency:<3} {got['tokens_per_s']:8.1f} tok/s", file=sys.stderr)
        finally:
            for proc, _ in servers.values():
                stop_server(proc)

    print(
        f"\n{opts.new_tokens} new tokens per request, {opts.requests_per_client} requests per client, "
        f"greedy, tiny pair, one torch thread per server, best of {opts.repeats}\n"
    )
    print("| mode | concurrency | queued tok/s | batched tok/s | batched / queued | batched p50 / p99 s | queued p50 / p99 s |")
    print("|---|---|---|---|---|---|---|")
    for mode, by_name in figures.items():
        for c in CONCURRENCY:
            q, b = by_name["queued"][c], by_name["batched"][c]
            print(
                f"| {mode} | {c} | {q['tokens_per_s']:.1f} | {b['tokens_per_s']:.1f} | "
                f"{b['tokens_per_s'] / q['tokens_per_s']:.2f} | {b['p50_s']:.2f} / {b['p99_s']:.2f} | "
                f"{q['p50_s']:.2f} / {q['p99_s']:.2f} |"
            )
    print()
    for mode, by_name in figures.items():
        for name in SCHEDULERS:
            scale = by_name[name][16]["tokens_per_s"] / by_name[name][1]["tokens_per_s"]
            print(f"{mode}, {name}: concurrency 16 / concurrency 1 aggregate = {scale:.2f}x")
    print(f"greedy outputs differing from the queued server's at concurrency 1: {mismatches}")
    if opts.json:
        opts.json.write_text(json.dumps(figures, indent=2))
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
