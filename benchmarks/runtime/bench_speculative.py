"""Benchmark: greedy tokens/s of the reference runtime with and without speculation (STANDALONE,
EAGLE3, NGRAM), each speculative mode next to its analytic bound, and of the Hugging Face
transformers peer (assisted generation and prompt lookup) on the same tiny pair.

The analytic bound of a mode is the speedup its own measured accept length allows at its own
measured per-forward costs (CPU time of one target verify, one draft extend and one draft step,
timed in isolation, best of many): ``accept_length * t_plain / (t_verify + t_extend +
(num_steps - 1) * t_step)``; NGRAM's CPU drafting counts as free. The share of the bound the
runtime reaches is what host-side bookkeeping (tree building, verification, cache moves) costs.

    python benchmarks/runtime/bench_speculative.py [--new-tokens 128] [--repeats 3] [--no-peer]

Batch size 1, greedy, one CPU thread for every contender, best of N interleaved rounds (tiny models are per-op-overhead
bound; more threads only add synchronisation). The runtime is measured in process through its
decoder (the server adds a constant HTTP cost per request, measured separately under
concurrency at the end). The peer runs in a virtual environment with transformers, created on
first use at ``.venv-bench``: a ``.pth`` file puts this interpreter's site-packages (torch,
tokenizers, safetensors, huggingface-hub) on its path, and ``pip install transformers`` adds
transformers and only the dependencies still missing; pass ``--peer-python`` to use another
interpreter. Every contender's output is checked against the runtime's plain greedy
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
    ("def merge_all(items):\n    result = []\n    for item in items:\n"
    "        result.append(merge_4(item))\n    return result\n\n"),
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
        "EAGLE3 chain k=3": SpecConfig("EAGLE3", num_steps=3, topk=1, num_draft_tokens=4),
        "EAGLE3 chain k=5": SpecConfig("EAGLE3", num_steps=5, topk=1, num_draft_tokens=6),
        "EAGLE3 chain k=6": SpecConfig("EAGLE3", num_steps=6, topk=1, num_draft_tokens=7),
        "EAGLE3 tree 5/4/8 (SGLang's Llama default)": SpecConfig("EAGLE3", num_steps=5, topk=4, num_draft_tokens=8),
        "NGRAM (defaults: breadth 10, 12 tokens)": SpecConfig("NGRAM", num_steps=1, topk=10, num_draft_tokens=12),
        "NGRAM breadth 1, 8 tokens": SpecConfig(
            "NGRAM", num_steps=8, topk=1, num_draft_tokens=8, ngram_max_bfs_breadth=1
        ),
    }


def forward_costs(target, drafter, spec, accept_length: float, context: list[int], reps: int = 60) -> dict:  # type: ignore[no-untyped-def]
    """CPU seconds of one target verify, one draft extend and one draft step for ``spec`` (best of ``reps``)."""
    import torch

    from specguard.runtime.model import causal_mask

    device = target.device
    ids = torch.tensor(context, device=device)
    n = len(context)
    eagle = spec.algorithm in ("EAGLE", "EAGLE3")

    def best(fn) -> float:  # type: ignore[no-untyped-def]
        fn()
        times = []
        for _ in range(reps):
            began = time.process_time()
            fn()
            times.append(time.process_time() - began)
        return min(times)

    with torch.inference_mode():
        target(ids, None, 0)
        width = spec.num_draft_tokens
        tree_mask = None
        if spec.topk > 1 or spec.algorithm == "NGRAM":  # a tree: explicit positions and mask, as the decoder passes
            tree_mask = torch.ones(width, n + width, dtype=torch.bool, device=device)
        positions = None if tree_mask is None else torch.arange(width, device=device) + n
        costs = {
            "plain": best(lambda: target(ids[:1], None, n)),
            "verify": best(lambda: target(ids[:width], positions, n, tree_mask, return_hidden=eagle)),
            "extend": 0.0,
            "step": 0.0,
        }
        if drafter is None:
            return costs
        extend = max(1, round(accept_length)) if eagle else 2  # STANDALONE catches up about 2 tokens a round
        step_width = spec.topk
        step_mask = None if step_width == 1 else causal_mask(n, step_width, device)
        step_positions = None if step_width == 1 else torch.full((step_width,), n, device=device)
        if eagle:
            aux = torch.zeros(extend, drafter.fc.weight.shape[1], dtype=drafter.dtype, device=device)
            own = torch.zeros(step_width, drafter.cfg.model.hidden_size, dtype=drafter.dtype, device=device)
            drafter(ids[:n], torch.zeros(n, aux.shape[1], dtype=drafter.dtype, device=device), None, 0, from_target=True)
            costs["extend"] = best(lambda: drafter(ids[:extend], aux, None, n, from_target=True))
            costs["step"] = best(lambda: drafter(ids[:step_width], own, step_positions, n, step_mask))
        else:
            drafter(ids, None, 0)
            costs["extend"] = best(lambda: drafter(ids[:extend], None, n))
            costs["step"] = best(lambda: drafter(ids[:step_width], step_positions, n, step_mask))
    return costs


def analytic_bound(spec, accept_length: float, costs: dict) -> float:  # type: ignore[no-untyped-def]
    round_cost = costs["verify"] + costs["extend"] + max(0, spec.num_steps - 1) * costs["step"]
    return accept_length * costs["plain"] / round_cost


def bench_runtime(pair, head_dir, new_tokens: int, repeats: int) -> tuple[dict, dict]:  # type: ignore[no-untyped-def]
    import torch

    from specguard.runtime.eagle import load_eagle_head
    from specguard.runtime.loader import load_model
    from specguard.runtime.speculative import Decoder, SamplingParams
    from specguard.runtime.tokenizer import Tokenizer

    torch.set_num_threads(1)
    tok = Tokenizer(pair.target)
    target = load_model(pair.target)
    draft = load_model(pair.draft)
    head = load_eagle_head(head_dir, target)
    target.setup_cache(1024)
    draft.setup_cache(1024)
    head.setup_cache(1024)
    drafters = {"STANDALONE": draft, "EAGLE3": head}
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
            decoder = Decoder(target, spec, drafters.get(spec.algorithm or ""))
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
    context = prompts[1]
    for name, spec in modes.items():
        if spec.algorithm is None or not accept[name]:
            continue
        costs = forward_costs(target, drafters.get(spec.algorithm), spec, accept[name], context)
        results[name]["bound"] = analytic_bound(spec, accept[name], costs)
        results[name]["costs_ms"] = {k: round(v * 1000, 3) for k, v in costs.items()}
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
    import sysconfig

    venv = REPO / ".venv-bench"
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv} with transformers=={PEER_VERSION} (sharing this interpreter's packages)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        # A venv made with --system-site-packages sees the base interpreter's packages, not this
        # (virtual) environment's: a fresh clone's .venv-bench then lacked huggingface_hub and torch.
        site = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        Path(site, "_specguard_parent.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"transformers=={PEER_VERSION}"], check=True)
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

    from specguard.runtime.tiny import ensure_tiny_eagle3, ensure_tiny_pair

    pair = ensure_tiny_pair()
    head_dir = ensure_tiny_eagle3().draft
    print(f"tiny pair: {pair.target.parent}; load average before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    results, outputs = bench_runtime(pair, head_dir, args.new_tokens, args.repeats)
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
        f"{'contender':44} {'tok/s':>7} {'cpu tok/s':>9} {'accept len':>10} {'x plain':>11} {'bound':>6} "
        f"{'share':>6} {'x HF peer':>11} {'== plain':>8}"
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
        elif name.startswith(("STANDALONE", "EAGLE")):
            peer_key = hf_assisted
        accept = f"{r['accept_length']:.2f}" if r["accept_length"] else "-"
        same = "yes" if outputs[name] == reference else "NO"
        bound = f"{r['bound']:.2f}" if "bound" in r else "-"
        # share of the bound: the CPU-time speedup (forward costs are CPU time too) over the bound
        share = f"{r['cpu_tok_per_s'] / results['plain']['cpu_tok_per_s'] / r['bound']:.0%}" if "bound" in r else "-"
        print(
            f"{name:44} {r['tok_per_s']:7.1f} {r['cpu_tok_per_s']:9.1f} {accept:>10} "
            f"{ratio(r, results['plain']):>11} {bound:>6} {share:>6} "
            f"{ratio(r, peer.get(peer_key) if peer_key else None):>11} {same:>8}"
        )
    for name, r in peer.items():
        same = "yes" if r["outputs"] == reference else "NO"
        print(
            f"{name:44} {r['tok_per_s']:7.1f} {r['cpu_tok_per_s']:9.1f} {'-':>10} "
            f"{ratio(r, results['plain']):>11} {'':>6} {'':>6} {'':>11} {same:>8}"
        )
    print("\nper-forward CPU costs (ms) behind the bounds:")
    for name, r in results.items():
        if "costs_ms" in r:
            print(f"  {name:44} {r['costs_ms']}")
    if peer:
        print(
            f"\n'x HF peer': STANDALONE and EAGLE3 rows against the best transformers assisted row ({hf_assisted}, "
            "with the tiny STANDALONE draft: transformers runs no EAGLE3 head), NGRAM rows against prompt lookup, "
            "plain against transformers plain."
        )
    if not args.no_server:
        print("\nthrough the server (STANDALONE chain k=4, requests queued, one at a time):")
        for concurrency, tps, latency in bench_server_concurrency(pair, args.new_tokens):
            print(f"  concurrency {concurrency}: {tps:7.1f} tok/s aggregate, mean latency {latency:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
