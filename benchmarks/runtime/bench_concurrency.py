"""Benchmark: aggregate tokens/s and p50/p99 latency of the reference runtime's server under
concurrency 1, 4 and 16, for plain decoding and each speculative mode (STANDALONE chain and tree,
EAGLE3 chain, NGRAM; tiny pair and tiny EAGLE3 head), for the batched scheduler (iteration-level:
plain decode steps and speculative rounds of every running request batched together) against the
queued one (first-in first-out, batch size 1) in the same run.

    python benchmarks/runtime/bench_concurrency.py [--new-tokens 64] [--requests-per-client 8] [--repeats 1]
        [--modes plain,eagle3,standalone,...]

Every mode's two servers (``--scheduler batched|queued``) run side by side, each a real
``python -m specguard.runtime`` on 127.0.0.1 with one torch thread, and are measured in turn at
each level (only one is loaded at a time, the order reversed every other of ``--repeats``), so
machine-load drift hits every mode and both schedulers alike. At concurrency ``c``, ``c``
clients each send ``--requests-per-client`` greedy ``/generate`` requests of ``--new-tokens``
tokens (``ignore_eos``) one after another (8 by default: a concurrency-16 level of 2 requests per
client lasted about 0.3 s, shorter than this 2-core machine's scheduling noise, and a fifth of
its EAGLE3 iterations ran below 16 rows, in the tail where the last requests finish at different
rounds: bench_server_overhead.py); aggregate tokens/s is all tokens over the wall-clock time of
the whole level, latency is per request (p99 of a few dozen requests is close to the
maximum). Every response's tokens, of every mode, are checked against plain greedy decoding
(the plain queued server's answer for the same prompt); a mismatch is reported and fails the run
(exit 1). The run ends with the issue's targets (EAGLE3 at concurrency 16 against concurrency 1
and against plain decoding at 16; STANDALONE at 16 against 1), measured on the batched scheduler.
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
MODE_LABELS = {
    "plain": "plain",
    "eagle3": "EAGLE3 chain k=3",
    "standalone": "STANDALONE chain k=3",
    "standalone-tree": "STANDALONE tree 3/2/6",
    "ngram": "NGRAM (defaults)",
}
MODE_KEYS = tuple(MODE_LABELS)


def mode_args(target: str, draft: str, head: str) -> dict[str, list[str]]:
    """Each mode's server flags (the presets tiny-cpu and tiny-cpu-eagle3 for the chains)."""

    def spec(algorithm: str, path: str | None, steps: int, topk: int, tokens: int | None = None) -> list[str]:
        out = ["--model-path", target, "--speculative-algorithm", algorithm]
        if path is not None:
            out += ["--speculative-draft-model-path", path]
        out += ["--speculative-num-steps", str(steps), "--speculative-eagle-topk", str(topk)]
        if tokens is not None:
            out += ["--speculative-num-draft-tokens", str(tokens)]
        return out

    return {
        "plain": ["--model-path", target],
        "eagle3": spec("EAGLE3", head, 3, 1),
        "standalone": spec("STANDALONE", draft, 3, 1),
        "standalone-tree": spec("STANDALONE", draft, 3, 2, 6),
        "ngram": ["--model-path", target, "--speculative-algorithm", "NGRAM"],
    }


def start_server(args: list[str], code: Path = REPO) -> tuple[subprocess.Popen, str]:
    """``python -m specguard.runtime ARGS`` from the checkout ``code``, once it answers /health."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "specguard.runtime", "--port", str(port), "--log-level", "warning", *args],
        cwd=code,
        env={**os.environ, "PYTHONPATH": str(code)},
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
    parser.add_argument("--requests-per-client", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=1, help="timed rounds per level and scheduler (best kept)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--modes", default=",".join(MODE_KEYS), help=f"comma-separated, of {', '.join(MODE_KEYS)}")
    opts = parser.parse_args()

    from specguard.runtime.tiny import ensure_tiny_eagle3, ensure_tiny_pair

    pair = ensure_tiny_pair()
    head = ensure_tiny_eagle3().draft
    all_modes = mode_args(str(pair.target), str(pair.draft), str(head))
    wanted = [key.strip() for key in opts.modes.split(",") if key.strip()]
    unknown = [key for key in wanted if key not in all_modes]
    if unknown:
        parser.error(f"unknown mode(s) {unknown}; choose from {', '.join(MODE_KEYS)}")
    modes = {MODE_LABELS[key]: all_modes[key] for key in ["plain", *[k for k in wanted if k != "plain"]]}
    figures: dict[str, dict[str, dict[int, dict]]] = {mode: {name: {} for name in SCHEDULERS} for mode in modes}
    mismatches = checked = 0
    servers: dict[tuple[str, str], tuple[subprocess.Popen, str]] = {}
    try:
        for mode, args in modes.items():
            for name in SCHEDULERS:
                servers[(mode, name)] = start_server([*args, "--scheduler", name])
        # plain greedy decoding, one request at a time: what every mode must give
        reference = {p: generate(servers[("plain", "queued")][1], p, opts.new_tokens)[1] for p in PROMPTS}
        order = [(mode, name) for mode in modes for name in SCHEDULERS]
        for concurrency in CONCURRENCY:
            for repeat in range(opts.repeats):
                # every server measured in turn (the order reversed every other repeat), so load
                # drift on a shared machine hits the modes and the schedulers alike
                for mode, name in order if repeat % 2 == 0 else order[::-1]:
                    got = measure(servers[(mode, name)][1], concurrency, opts.requests_per_client, opts.new_tokens)
                    outputs = got.pop("outputs")
                    bad = sum(ids != reference[prompt] for prompt, ids in outputs)
                    mismatches += bad
                    checked += len(outputs)
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
    print(f"greedy outputs differing from plain greedy decoding: {mismatches} of {checked}")
    batched = {mode: by_name["batched"] for mode, by_name in figures.items()}
    plain16 = batched[MODE_LABELS["plain"]][16]["tokens_per_s"]
    for key, label in MODE_LABELS.items():
        if key == "plain" or label not in batched:
            continue
        own = batched[label]
        print(
            f"target check, {label} (batched): c16 / c1 = {own[16]['tokens_per_s'] / own[1]['tokens_per_s']:.2f}x, "
            f"c16 / plain c16 = {own[16]['tokens_per_s'] / plain16:.2f}x"
        )
    if opts.json:
        opts.json.write_text(json.dumps(figures, indent=2))
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
