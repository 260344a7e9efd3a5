"""Benchmark: what specguard's records cost a cold check, msgspec.Struct (specguard/records.py)
against the standard library's dataclasses (frozen, slots, keyword-only), the two choices issue
#26 weighs.

Each contender runs in a fresh interpreter, as a cold ``specguard check`` does: import the
library, define ``--classes`` record classes of six fields (a check defines about fifty), make
``--instances`` instances and copy each with one field replaced. Median of ``--repeats`` runs,
milliseconds, and each contender's time over msgspec's.

    python benchmarks/bench_records.py [--classes 50] [--instances 3000] [--repeats 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

FIELDS = "    a: int\n    b: str = 'x'\n    c: tuple[str, ...] = ()\n    d: float = 1.0\n    e: bool = False\n    f: str | None = None\n"

CONTENDERS = {
    # msgspec as specguard.records uses it (its Record adds only the defaults frozen, kw_only).
    "msgspec.Struct (frozen, kw_only)": (
        "import msgspec\nfrom msgspec.structs import replace\n",
        "class C{i}(msgspec.Struct, frozen=True, kw_only=True):\n" + FIELDS,
        "replace(x, a=1)",
    ),
    "dataclasses (frozen, slots, kw_only)": (
        "from dataclasses import dataclass, replace\n",
        "@dataclass(frozen=True, slots=True, kw_only=True)\nclass C{i}:\n" + FIELDS,
        "replace(x, a=1)",
    ),
}


def program(imports: str, template: str, copy: str, classes: int, instances: int) -> str:
    body = "".join(template.format(i=i) for i in range(classes))
    return (
        "import time\nbegan = time.perf_counter()\n"
        + imports
        + "imported = time.perf_counter()\n"
        + body
        + "defined = time.perf_counter()\n"
        + f"for n in range({instances}):\n    x = C{classes - 1}(a=n, b='y')\n    {copy}\n"
        + "done = time.perf_counter()\n"
        + "print((imported - began) * 1e3, (defined - imported) * 1e3, (done - defined) * 1e3)\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--classes", type=int, default=50)
    parser.add_argument("--instances", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    results = {}
    for name, (imports, template, copy) in CONTENDERS.items():
        code = program(imports, template, copy, args.classes, args.instances)
        runs = []
        for _ in range(args.repeats):
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True).stdout
            runs.append(tuple(float(v) for v in out.split()))
        results[name] = tuple(statistics.median(run[k] for run in runs) for k in range(3))
    base = sum(results["msgspec.Struct (frozen, kw_only)"])
    print(f"{args.classes} classes, {args.instances} instances (each copied once), median of {args.repeats} fresh interpreters, ms")
    print(f"{'contender':<38} {'import':>8} {'classes':>8} {'instances':>10} {'total':>8} {'vs msgspec':>10}")
    for name, (imported, defined, made) in results.items():
        total = imported + defined + made
        print(f"{name:<38} {imported:>8.1f} {defined:>8.1f} {made:>10.1f} {total:>8.1f} {total / base:>9.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
