"""`specguard check` as a cold process, against SGLang's own validation of the same flags.

Both sides run cold, in fresh processes, on the same local pair (config.json-only directories
copied from the fixtures), in the same run, alternating so that machine load affects both alike:

- specguard: ``python -m specguard check --format json -- ARGS``
- specguard with a preset: ``python -m specguard check --format json --offline --preset
  eagle3-llama3.1-8b`` (the shipped preset: YAML, pydantic's schema, its snapshot configs)
- peer:      SGLang 0.5.23 in ``.venv-sglang``: ``prepare_server_args(ARGS)``, then
             ``resolve_once()`` and ``check_server_args()`` (what ``launch_server`` runs before
             any worker starts), with ``--device cuda``.

Reports the median wall time of each and the ratio. Bytecode is compiled first for both sides
(as ``pip install`` does), and PYTHONDONTWRITEBYTECODE is dropped so that neither side recompiles.

    python benchmarks/bench_check.py [--runs 7] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures"

PRESET = "eagle3-llama3.1-8b"
PEER_SCRIPT = """
import sys
from sglang.srt.server_args import prepare_server_args
args = prepare_server_args(sys.argv[1:])
args.resolve_once()
args.check_server_args()
"""


def make_pair(root: Path) -> tuple[Path, Path]:
    target = root / "llama31-8b"
    draft = root / "eagle3-draft"
    target.mkdir()
    draft.mkdir()
    shutil.copy(FIXTURES / "hf-configs" / "meta-llama" / "Llama-3.1-8B-Instruct" / "config.json", target / "config.json")
    shutil.copy(FIXTURES / "draft-templates" / "sgl-project-SpecForge" / "llama3-8B-eagle3.json", draft / "config.json")
    return target, draft


def sglang_python() -> Path | None:
    for candidate in (os.environ.get("SPECGUARD_SGLANG_PYTHON"), str(REPO / ".venv-sglang" / "bin" / "python")):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    start = time.perf_counter()
    result = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=REPO)
    elapsed = time.perf_counter() - start
    return elapsed, result.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    options = parser.parse_args()

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    peer_python = sglang_python()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "specguard")], check=True, env=env)
    with tempfile.TemporaryDirectory() as tmp:
        target, draft = make_pair(Path(tmp))
        server_args = [
            "--model-path", str(target), "--speculative-algorithm", "EAGLE3",
            "--speculative-draft-model-path", str(draft), "--speculative-num-steps", "5",
            "--speculative-eagle-topk", "8", "--speculative-num-draft-tokens", "32",
            "--dtype", "float16", "--context-length", "2048", "--device", "cuda",
        ]
        ours_cmd = [sys.executable, "-m", "specguard", "check", "--format", "json", "--", *server_args]
        preset_cmd = [sys.executable, "-m", "specguard", "check", "--format", "json", "--offline", "--preset", PRESET]
        peer_cmd = [str(peer_python), "-c", PEER_SCRIPT, *server_args] if peer_python else None
        # One warm-up each: the OS file cache and any first-import bytecode writing.
        timed(ours_cmd, env)
        timed(preset_cmd, env)
        if peer_cmd:
            timed(peer_cmd, env)
        ours: list[float] = []
        preset: list[float] = []
        peer: list[float] = []
        for _ in range(options.runs):
            elapsed, code = timed(ours_cmd, env)
            if code not in (0, 1):
                raise SystemExit(f"specguard check failed with exit code {code}")
            ours.append(elapsed)
            elapsed, code = timed(preset_cmd, env)
            if code not in (0, 1):
                raise SystemExit(f"specguard check --preset failed with exit code {code}")
            preset.append(elapsed)
            if peer_cmd:
                elapsed, code = timed(peer_cmd, env)
                if code != 0:
                    raise SystemExit(f"the SGLang peer failed with exit code {code}")
                peer.append(elapsed)
    figures = {
        "runs": options.runs,
        "specguard_check_median_s": round(statistics.median(ours), 3),
        "specguard_check_min_s": round(min(ours), 3),
        "specguard_preset_check_median_s": round(statistics.median(preset), 3),
        "specguard_preset_check_min_s": round(min(preset), 3),
        "sglang_validation_median_s": round(statistics.median(peer), 3) if peer else None,
        "sglang_validation_min_s": round(min(peer), 3) if peer else None,
        "speedup_median": round(statistics.median(peer) / statistics.median(ours), 1) if peer else None,
        "load_average": os.getloadavg(),
    }
    print(f"specguard check (cold process):          median {figures['specguard_check_median_s']:.3f} s  min {figures['specguard_check_min_s']:.3f} s")
    print(f"specguard check --preset (cold process): median {figures['specguard_preset_check_median_s']:.3f} s  min {figures['specguard_preset_check_min_s']:.3f} s")
    if peer:
        print(f"SGLang prepare+resolve+check (cold):     median {figures['sglang_validation_median_s']:.3f} s  min {figures['sglang_validation_min_s']:.3f} s")
        print(f"ratio specguard / SGLang: {1 / figures['speedup_median']:.3f}  ({figures['speedup_median']}x faster)")
    else:
        print("SGLang peer not installed (bash scripts/sglang_env/setup.sh): no ratio")
    print(f"load average during the run: {figures['load_average']}")
    if options.json:
        options.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
