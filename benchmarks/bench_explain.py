"""Time and peak memory of `specguard explain` on a ~300 MB synthetic log (not a test).

The log is what a long-running server writes: a ServerArgs line, then millions of decode-batch
lines from eight ranks with colours and timestamps, then a traceback. Run it with
``python benchmarks/bench_explain.py [--mb 300]``; it reports wall time and the child's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAD = (
    "sglang==0.5.3\n"
    "[2026-01-02 10:11:02] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', speculative_algorithm='EAGLE3', "
    "speculative_draft_model_path='lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B', speculative_num_steps=3, "
    "speculative_eagle_topk=1, speculative_num_draft_tokens=4, tp_size=8)\n"
)
BODY = "".join(
    f"\x1b[32m[2026-01-02 10:11:{second:02d} TP{rank}]\x1b[0m Decode batch, #running-req: {rank + 3}, #token: 9{second}7, "
    f"token usage: 0.0{rank}, accept len: 3.12, gen throughput (token/s): 41.27, #queue-req: 0\n"
    for second in range(60) for rank in range(8)
)
TAIL = (
    "[2026-01-02 10:12:00 TP0] Traceback (most recent call last):\n"
    '[2026-01-02 10:12:00 TP0]   File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 301, in capture\n'
    "[2026-01-02 10:12:00 TP0] RuntimeError: Capture cuda graph failed: mat1 and mat2 must have the same dtype, but got Float and Half\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=300, help="size of the synthetic log in MB")
    size = parser.parse_args().mb * 1_000_000
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "server.log"
        with log.open("w", encoding="utf-8") as out:
            out.write(HEAD)
            written = len(HEAD)
            while written < size:
                out.write(BODY)
                written += len(BODY)
            out.write(TAIL)
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "specguard", "explain", str(log), "--format", "json"], capture_output=True, text=True)
        elapsed = time.perf_counter() - started
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
        causes = [c["signature"] for c in json.loads(result.stdout)["causes"]] if result.stdout else result.stderr.strip()
        print(f"log {log.stat().st_size / 1e6:.0f} MB: {elapsed:.1f} s, peak RSS {peak_mib:.0f} MiB, exit {result.returncode}, causes {causes}")


if __name__ == "__main__":
    main()
