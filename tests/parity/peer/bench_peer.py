#!/usr/bin/env python3
"""Time the SGLang peer (run under the normal interpreter; no sglang import here).

    python tests/parity/peer/bench_peer.py [--repeat 3] [--batch 40]

1. cold: a fresh `venv python -c` that imports prepare_server_args, then runs
   prepare_server_args -> resolve_once -> check_server_args on one case (the catalogue's
   A01: Llama-3.1-8B + EAGLE draft, --device cuda). This is the per-invocation cost of
   asking SGLang itself.
2. batch: sglang_peer.py with N cases in one process (import once, fork per case).
Prints one JSON object. Wall-clock numbers depend on machine load; user CPU is reported too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import client
import make_models

COLD = r"""
import os, sys, time
os.environ["HF_HUB_OFFLINE"] = "1"; os.environ["TRANSFORMERS_OFFLINE"] = "1"
t0 = time.perf_counter()
from sglang.srt.server_args import prepare_server_args
t1 = time.perf_counter()
sa = prepare_server_args(sys.argv[1:])
sa.resolve_once()
sa.check_server_args()
t2 = time.perf_counter()
print(f"{t1 - t0:.3f} {t2 - t1:.3f}", file=sys.__stderr__)
"""


def _child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--batch", type=int, default=40)
    a = ap.parse_args()
    py = client.find_sglang_python()
    if py is None:
        print("no SGLang venv (scripts/sglang_env/setup.sh)", file=sys.stderr)
        return 2
    m = Path(tempfile.mkdtemp(prefix="peer-models-"))
    make_models.write_models(m)
    argv = ["--model-path", f"{m}/llama31-8b-bf16", "--device", "cuda", "--speculative-algorithm", "EAGLE",
            "--speculative-draft-model-path", f"{m}/eagle-llama31-draft-fp16-2k"]
    cold = []
    for _ in range(a.repeat):
        c0, w0 = _child_cpu(), time.perf_counter()
        p = subprocess.run([str(py), "-c", COLD, *argv], capture_output=True, text=True)
        w, c = time.perf_counter() - w0, _child_cpu() - c0
        imp, res = (float(x) for x in p.stderr.strip().splitlines()[-1].split())
        cold.append({"wall_s": round(w, 2), "cpu_s": round(c, 2), "import_s": imp, "resolve_check_s": res,
                     "rc": p.returncode})
    cases = [{"name": f"c{i}", "argv": argv + (["--speculative-num-steps", "3", "--speculative-eagle-topk", "1"]
                                                 if i % 2 else [])} for i in range(a.batch)]
    c0, w0 = _child_cpu(), time.perf_counter()
    res = client.run_cases(cases, py)
    w, c = time.perf_counter() - w0, _child_cpu() - c0
    per = [r["seconds"] for r in res]
    out = {
        "loadavg": os.getloadavg(),
        "cold_single_case": cold,
        "batch": {"cases": len(cases), "wall_s": round(w, 2), "cpu_s": round(c, 2),
                  "cases_per_s_incl_import": round(len(cases) / w, 2),
                  "per_case_child_s_median": sorted(per)[len(per) // 2],
                  "all_accepted": all(r["accepted"] for r in res)},
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
