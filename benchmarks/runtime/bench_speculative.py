"""Benchmark: greedy tokens/s of the reference runtime with and without speculation, and of the
Hugging Face transformers peer (assisted generation and prompt lookup) on the same tiny pair.

    python benchmarks/runtime/bench_speculative.py [--new-tokens 128] [--repeats 3] [--no-peer]

Batch size 1, greedy, one CPU thread for every contender, best of N interleaved rounds (tiny models are per-op-overhead
bound; more threads only add synchronisation). The runtime is measured in process through its
decoder (the server adds a constant HTTP cost per request, measured separately under
concurrency at the end). The peer runs in a virtual environment with transformers, created on
first use at ``.venv-bench`` (``--system-site-packages`` so it shares this torch 2.13, and
``pip install --no-deps transformers`` so nothing else changes); pass ``--peer-python`` to use
another interpreter. Every contender's output is checked against the runtime's plain greedy
output; a mismatch is reported in the table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

PROMPTS = [
    "def scale_3(x):\n    value = x + 3\n    return scale(value)\n\n",
    "def merge_all(items):\n    result = []\n    for item in items:\n"
    "        result.append(merge_4(item))\n    return result\n\n",
    "class Parse7:\n    def __init__(self, key):\n        self.key = key\n\n",
    "def fetch_12(node):\n    value = node * 12\n    return fetch(value)\n\ndef fetch_13(node):\n",
    "def count_5(size):\n    value = size + 5\n    return count(value)\n\ndef count_all(sizes):\n    result = []\n",
    "def load_9(data):\n    value = data - 9\n    return load(value)\n\nclass Load9:\n",
]
PEER_VERSION = "5.23.0"


def runtime_modes():  # type: ignore[no-untyped-def]
    from specguard.runtime.speculative import SpecConfig

    return {
        "plain": SpecConfig(),
        "STANDALONE chain k=3": SpecConfig("STANDALONE", num_steps=3, topk=1, num_draft_tokens=4),
        "STANDALONE chain k=4": SpecConfig("STANDALONE", num_steps=4, topk=1, num_draft_tokens=5),
        "STANDALONE chain k=6": SpecConfig("STANDALONE", num_steps=6, topk=1, num_draft_tokens=7),
        "STANDALONE tree 3/2/6": SpecConfig("STANDALONE", num_steps=3, topk=2, num_draft_tokens=6),
        "NGRAM (defaults: breadth 10, 12 tokens)": SpecConfig("NGRAM", num_steps=1, topk=10, num_draft_tokens=12),
        "NGRAM breadth 1, 8 tokens": SpecConfig(
            "NGRAM", num_steps=8, topk=1, num_draft_tokens=8, ngram_max_bfs_breadth=1
        ),
    }


def bench_runtime(pair, new_tokens: int, repeats: int) -> tuple[dict, dict]:  # type: ignore[no-untyped-def]
    import torch

    from specguard.runtime.loader import load_model
    from specguard.runtime.speculative import Decoder, SamplingParams
    from specguard.runtime.tokenizer import Tokenizer

    torch.set_num_threads(1)
    tok = Tokenizer(pair.target)
    target = load_model(pair.target)
    draft = load_model(pair.draft)
    target.setup_cache(1024)
    draft.setup_cache(1024)
    prompts = [tok.encode(p) for p in PROMPTS]
    modes = runtime_modes()
    best: dict[str, float] = dict.fromkeys(modes, float("inf"))
    best_cpu: dict[str, float] = dict.fromkeys(modes, float("inf"))
    accept: dict[str, float | None] = {}
    outputs: dict[str, list[list[int]]] = {}
    # Modes are interleaved round by round and the best round is kept, so that load from
    # other processes on a shared machine hits every contender alike and is filtered out.
    for rep in range(repeats + 1):
        for name, spec in modes.items():
            decoder = Decoder(target, spec, draft if spec.algorithm == "STANDALONE" else None)
            outs = []
            rounds = drafts = 0
            began, began_cpu = time.perf_counter(), time.process_time()
            for ids in prompts:
                out: list[int] = []
                for r in decoder.decode(ids, SamplingParams(temperature=0.0)):
                    out += r.tokens
                    if r.accepted_drafts is not None:
                        rounds += 1
                        drafts += r.accepted_drafts
                    if len(out) >= new_tokens:
                        break
                outs.append(out[:new_tokens])
            elapsed, cpu = time.perf_counter() - began, time.process_time() - began_cpu
            if rep == 0:  # warm-up round: gives the outputs and the accept length, not timed
                outputs[name] = outs
                accept[name] = (drafts + rounds) / rounds if rounds else None
            else:
                best[name] = min(best[name], elapsed)
                best_cpu[name] = min(best_cpu[name], cpu)
    total = new_tokens * len(prompts)
    results = {
        name: {"tok_per_s": total / best[name], "cpu_tok_per_s": total / best_cpu[name], "accept_length": accept[name]}
        for name in modes
    }
    return results, outputs


def bench_peer(pair, new_tokens: int, repeats: int) -> dict:  # type: ignore[no-untyped-def]
    """Runs inside an interpreter that has transformers."""
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(1)
    tok = Tokenizer.from_file(str(pair["target"] / "tokenizer.json"))
    target = AutoModelForCausalLM.from_pretrained(pair["target"], dtype=torch.float32).eval()
    draft = AutoModelForCausalLM.from_pretrained(pair["draft"], dtype=torch.float32).eval()
    modes = {
        "transformers plain": {},
        "transformers assisted (draft, defaults)": {"assistant_model": draft},
        "transformers assisted (draft, 4 constant)": {
            "assistant_model": draft,
            "num_assistant_tokens": 4,
            "num_assistant_tokens_schedule": "constant",
            "assistant_confidence_threshold": 0.0,
        },
        "transformers prompt lookup (10 tokens)": {"prompt_lookup_num_tokens": 10},
    }
    best = dict.fromkeys(modes, float("inf"))
    best_cpu = dict.fromkeys(modes, float("inf"))
    outputs: dict[str, list[list[int]]] = {}
    for rep in range(repeats + 1):
        for name, extra in modes.items():
            outs = []
            began, began_cpu = time.perf_counter(), time.process_time()
            for prompt in PROMPTS:
                ids = torch.tensor([tok.encode(prompt).ids])
                with torch.inference_mode():
                    out = target.generate(
                        ids,
                        attention_mask=torch.ones_like(ids),
                        max_new_tokens=new_tokens,
                        min_new_tokens=new_tokens,
                        do_sample=False,
                        pad_token_id=1,
                        **extra,
                    )
                outs.append(out[0, ids.shape[1] :].tolist())
            if rep == 0:
                outputs[name] = outs
            else:
                best[name] = min(best[name], time.perf_counter() - began)
                best_cpu[name] = min(best_cpu[name], time.process_time() - began_cpu)
    total = new_tokens * len(PROMPTS)
    return {
        name: {"tok_per_s": total / best[name], "cpu_tok_per_s": total / best_cpu[name], "outputs": outputs[name]}
        for name in modes
    }


def ensure_peer_python(requested: str | None) -> str | None:
    if requested:
        return requested
    venv = REPO / ".venv-bench"
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv} with transformers=={PEER_VERSION} (--no-deps, sharing this torch)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--no-deps", f"transformers=={PEER_VERSION}"], check=True
        )
    check = subprocess.run(
        [str(python), "-c", "import transformers, torch; print(torch.__version__)"], capture_output=True, text=True
    )
    if check.returncode != 0:
        print(f"peer unavailable: {check.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return str(python)


def bench_server_concurrency(pair, new_tokens: int) -> list[tuple[int, float, float]]:  # type: ignore[no-untyped-def]
    """Aggregate tokens/s and mean latency through the real server at concurrency 1 and 4."""
    import signal
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "specguard.runtime",
            "--model-path",
            str(pair.target),
            "--port",
            str(port),
            "--speculative-algorithm",
            "STANDALONE",
            "--speculative-draft-model-path",
            str(pair.draft),
            "--speculative-num-steps",
            "4",
            "--speculative-eagle-topk",
            "1",
            "--log-level",
            "warning",
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if urllib.request.urlopen(url + "/health", timeout=5).status == 200:
                    break
            except OSError:
                time.sleep(0.2)

        def one(prompt: str) -> float:
            body = json.dumps(
                {
                    "text": prompt,
                    "sampling_params": {"temperature": 0, "max_new_tokens": new_tokens, "ignore_eos": True},
                }
            ).encode()
            began = time.perf_counter()
            urllib.request.urlopen(
                urllib.request.Request(url + "/generate", data=body, headers={"Content-Type": "application/json"}),
                timeout=300,
            ).read()
            return time.perf_counter() - began

        rows = []
        for concurrency in (1, 4):
            work = PROMPTS * 2
            began = time.perf_counter()
            with ThreadPoolExecutor(max_workers=concurrency) as pool:
                latencies = list(pool.map(one, work))
            elapsed = time.perf_counter() - began
            rows.append((concurrency, new_tokens * len(work) / elapsed, statistics.mean(latencies)))
        return rows
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds per contender (best kept)")
    parser.add_argument("--no-peer", action="store_true", help="skip the transformers peer")
    parser.add_argument("--peer-python", help="interpreter with transformers installed")
    parser.add_argument("--no-server", action="store_true", help="skip the concurrency measurement through the server")
    parser.add_argument("--peer-only", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.peer_only:
        pair = json.loads(args.peer_only)
        print(json.dumps(bench_peer({k: Path(v) for k, v in pair.items()}, args.new_tokens, args.repeats)))
        return 0

    from specguard.runtime.tiny import ensure_tiny_pair

    pair = ensure_tiny_pair()
    print(f"tiny pair: {pair.target.parent}; load average before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    results, outputs = bench_runtime(pair, args.new_tokens, args.repeats)
    reference = outputs["plain"]
    peer: dict = {}
    if not args.no_peer:
        python = ensure_peer_python(args.peer_python)
        if python:
            proc = subprocess.run(
                [
                    python,
                    __file__,
                    "--peer-only",
                    json.dumps({"target": str(pair.target), "draft": str(pair.draft)}),
                    "--new-tokens",
                    str(args.new_tokens),
                    "--repeats",
                    str(args.repeats),
                ],
                capture_output=True,
                text=True,
                cwd=REPO,
            )
            if proc.returncode == 0:
                peer = json.loads(proc.stdout.strip().splitlines()[-1])
            else:
                print(f"peer failed:\n{proc.stderr[-2000:]}", file=sys.stderr)

    load = os.getloadavg()[0]
    print(
        f"\nbatch size 1, greedy, {len(PROMPTS)} prompts x {args.new_tokens} new tokens, "
        f"best of {args.repeats} interleaved rounds, 1 CPU thread, load average {load:.2f}\n"
        "tok/s is wall clock; cpu tok/s divides by the process's own CPU time, which other load on a\n"
        "shared machine does not inflate. Ratios are given for both (wall / cpu).\n"
    )
    hf_assisted = max((k for k in peer if "assisted" in k), key=lambda k: peer[k]["cpu_tok_per_s"], default=None)
    hf_lookup = "transformers prompt lookup (10 tokens)" if "transformers prompt lookup (10 tokens)" in peer else None
    hf_plain = "transformers plain" if "transformers plain" in peer else None
    header = (
        f"{'contender':42} {'tok/s':>7} {'cpu tok/s':>9} {'accept len':>10} {'x plain':>11} {'x HF peer':>11} "
        f"{'== plain':>8}"
    )
    print(header)
    print("-" * len(header))

    def ratio(a: dict, b: dict | None) -> str:
        if not b:
            return "-"
        return f"{a['tok_per_s'] / b['tok_per_s']:.2f}/{a['cpu_tok_per_s'] / b['cpu_tok_per_s']:.2f}"

    for name, r in results.items():
        peer_key = hf_plain
        if name.startswith("NGRAM"):
            peer_key = hf_lookup
        elif name.startswith("STANDALONE"):
            peer_key = hf_assisted
        accept = f"{r['accept_length']:.2f}" if r["accept_length"] else "-"
        same = "yes" if outputs[name] == reference else "NO"
        print(
            f"{name:42} {r['tok_per_s']:7.1f} {r['cpu_tok_per_s']:9.1f} {accept:>10} "
            f"{ratio(r, results['plain']):>11} {ratio(r, peer.get(peer_key) if peer_key else None):>11} {same:>8}"
        )
    for name, r in peer.items():
        same = "yes" if r["outputs"] == reference else "NO"
        print(
            f"{name:42} {r['tok_per_s']:7.1f} {r['cpu_tok_per_s']:9.1f} {'-':>10} "
            f"{ratio(r, results['plain']):>11} {'':>11} {same:>8}"
        )
    if peer:
        print(
            f"\n'x HF peer': STANDALONE rows against the best transformers assisted row ({hf_assisted}), "
            "NGRAM rows against prompt lookup, plain against transformers plain."
        )
    if not args.no_server:
        print("\nthrough the server (STANDALONE chain k=4, requests queued, one at a time):")
        for concurrency, tps, latency in bench_server_concurrency(pair, args.new_tokens):
            print(f"  concurrency {concurrency}: {tps:7.1f} tok/s aggregate, mean latency {latency:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
