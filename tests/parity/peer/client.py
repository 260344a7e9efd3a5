"""Client for the SGLang peer harness (sglang_peer.py), for the normal test interpreter.

No sglang import here: the cases run in a subprocess under the SGLang venv's python
(created by scripts/sglang_env/setup.sh).

    from tests.parity.peer.client import find_sglang_python, run_cases
    py = find_sglang_python()
    if py:
        results = run_cases([{"name": "x", "argv": [...]}], py)
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
HARNESS = Path(__file__).resolve().with_name("sglang_peer.py")

# Platform facts for the simulated machines (same as the catalogue, section 1 legend).
H100 = {
    "platform": {
        "is_cuda": True,
        "is_sm90": True,
        "is_hopper_with_cuda_12_3": True,
        "has_flashinfer": True,
        "device_capability": [9, 0],
    },
    "gpu_memory_mb": 81559,
}
B200 = {
    "platform": {
        "is_cuda": True,
        "is_sm100": True,
        "is_sm100_or_sm110": True,
        "is_blackwell": True,
        "has_flashinfer": True,
        "device_capability": [10, 0],
    },
    "gpu_memory_mb": 183359,
}


def find_sglang_python() -> Path | None:
    """$SPECGUARD_SGLANG_PYTHON, else $SPECGUARD_SGLANG_VENV/bin/python, else
    <repo>/.venv-sglang/bin/python; None when none of them is an executable file."""
    cands = []
    env_py = os.environ.get("SPECGUARD_SGLANG_PYTHON")
    if env_py:
        cands.append(Path(env_py))
    env_venv = os.environ.get("SPECGUARD_SGLANG_VENV")
    if env_venv:
        cands.append(Path(env_venv) / "bin" / "python")
    cands.append(REPO_ROOT / ".venv-sglang" / "bin" / "python")
    for c in cands:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    return None


class PeerError(RuntimeError):
    pass


def run_cases(
    cases: list[dict],
    venv_python: Path,
    *,
    timeout_per_case: float = 120.0,
    startup_timeout: float = 300.0,
    fork: bool = True,
) -> list[dict]:
    """Run `cases` through SGLang's prepare_server_args -> resolve_once -> check_server_args
    in ONE subprocess (SGLang is imported once; each case runs in a forked child).

    Returns one result dict per case, in order (see sglang_peer.py for the shape).
    Raises PeerError when the harness itself fails.
    """
    if not cases:
        return []
    names = [c.get("name") for c in cases]
    cmd = [str(venv_python), str(HARNESS), "-", "--timeout", str(timeout_per_case)]
    if not fork:
        cmd.append("--no-fork")
    env = dict(os.environ)
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    proc = subprocess.run(
        cmd,
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        env=env,
        timeout=startup_timeout + timeout_per_case * len(cases),
    )
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or len(results) != len(cases):
        raise PeerError(
            f"sglang_peer.py exited {proc.returncode} with {len(results)}/{len(cases)} results;"
            f" stderr tail:\n{proc.stderr[-3000:]}"
        )
    for n, r in zip(names, results):
        if r.get("name") != n:
            raise PeerError(f"result order mismatch: expected {n!r}, got {r.get('name')!r}")
    return results
