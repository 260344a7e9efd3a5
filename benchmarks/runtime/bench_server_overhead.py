"""Where a concurrency-16 level's time goes through the server: for plain decoding and EAGLE3
(chain k=3, the preset), the server's CPU seconds per level, split between its HTTP process and
its scheduler process (read from /proc, so a busy shared machine inflates them far less than
wall-clock time), the CPU of one minimal request (one
new token: the HTTP path and one prefill), and the scheduler's iterations per level with the share
that ran below 16 rows (from /server_info's batch-size histogram).

    python benchmarks/runtime/bench_server_overhead.py [--levels 6] [--requests-per-client 2] [--code CHECKOUT]

The levels are bench_concurrency.py's (16 clients, ``--requests-per-client`` requests each (2),
64 greedy tokens), on the same batched servers, measured in turn (the order reversed every other
level). ``--code CHECKOUT`` runs another checkout's servers beside this one's, in the same
alternation, so a change is measured against the code before it on the same machine at the same
time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_concurrency import (
    REPO,
    generate,
    measure,
    mode_args,
    start_server,
    stop_server,
)

MODES = ("plain", "eagle3")


def _stat(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name (which may hold spaces)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _own_cpu(pid: int) -> float:
    """User plus system CPU time of one process (its threads together)."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> tuple[float, float]:
    """CPU seconds of the server's HTTP process and of its live children (the scheduler process,
    and multiprocessing's resource tracker, which sleeps)."""
    children = 0.0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int(_stat(int(entry.name))[1]) == pid:
                    children += _own_cpu(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue  # a process that ended while we looked
    return _own_cpu(pid), children


def iterations(url: str) -> tuple[int, int]:
    """Scheduler iterations so far, and how many of them advanced fewer than 16 requests."""
    with urllib.request.urlopen(url + "/server_info", timeout=30) as resp:
        info = json.loads(resp.read())
    histogram = {
        int(k): v
        for k, v in info["internal_states"][0]["batching_stats"][
            "batch_size_histogram"
        ].items()
    }
    return sum(histogram.values()), sum(v for k, v in histogram.items() if k < 16)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, default=6)
    parser.add_argument("--requests-per-client", type=int, default=2)
    parser.add_argument(
        "--code", type=Path, help="another checkout of specguard: its servers run beside this one's, levels alternating"
    )
    opts = parser.parse_args()
    if opts.code is not None and not (opts.code / "specguard" / "runtime" / "__main__.py").is_file():
        parser.error(f"--code {opts.code}: not a checkout of specguard (no specguard/runtime/__main__.py there)")

    from specguard.runtime.tiny import ensure_tiny_eagle3, ensure_tiny_pair

    pair = ensure_tiny_pair()
    args = mode_args(str(pair.target), str(pair.draft), str(ensure_tiny_eagle3().draft))
    checkouts = {"this": REPO, **({"peer": opts.code.resolve()} if opts.code else {})}
    contenders = [(name, mode) for name in checkouts for mode in MODES]
    servers = {}
    per_client = opts.requests_per_client
    totals = {
        key: {"cpu": 0.0, "http_cpu": 0.0, "wall": 0.0, "iters": 0, "ragged": 0, "tiny_cpu": 0.0, "tiny": 0}
        for key in contenders
    }
    try:
        for name, mode in contenders:
            servers[name, mode] = start_server([*args[mode], "--scheduler", "batched"], checkouts[name])
        for proc, url in servers.values():
            measure(url, 16, per_client, 64)  # warm-up
        for level in range(opts.levels):
            for key in contenders if level % 2 == 0 else contenders[::-1]:
                proc, url = servers[key]
                iters0, ragged0 = iterations(url)
                (http0, sched0), began = cpu_seconds(proc.pid), time.perf_counter()
                measure(url, 16, per_client, 64)
                wall, (http1, sched1) = time.perf_counter() - began, cpu_seconds(proc.pid)
                iters1, ragged1 = iterations(url)
                got = totals[key]
                got["cpu"] += (http1 - http0) + (sched1 - sched0)
                got["http_cpu"] += http1 - http0
                got["wall"] += wall
                got["iters"] += iters1 - iters0
                got["ragged"] += ragged1 - ragged0
                cpu0 = sum(cpu_seconds(proc.pid))
                for _ in range(20):
                    generate(url, "hello", 1)
                got["tiny_cpu"] += sum(cpu_seconds(proc.pid)) - cpu0
                got["tiny"] += 20
    finally:
        for proc, _ in servers.values():
            stop_server(proc)
    n = opts.levels
    print(
        "| checkout | mode | wall s / level | server CPU s / level | of it HTTP process | iterations / level "
        "| below 16 rows | CPU ms / 1-token request |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for (name, mode), got in totals.items():
        print(
            f"| {name} | {mode} | {got['wall'] / n:.3f} | {got['cpu'] / n:.3f} | {got['http_cpu'] / n:.3f} | "
            f"{got['iters'] / n:.1f} | {got['ragged'] / max(got['iters'], 1):.0%} | "
            f"{1e3 * got['tiny_cpu'] / got['tiny']:.2f} |"
        )
    for name in checkouts:
        plain, eagle = totals[name, "plain"], totals[name, "eagle3"]
        print(
            f"{name}: EAGLE3 / plain: wall {plain['wall'] / eagle['wall']:.2f}x, "
            f"server CPU {plain['cpu'] / eagle['cpu']:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
