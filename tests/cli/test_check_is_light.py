"""`specguard check` must not import torch, sglang or the runtime: it has to start fast anywhere."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import HF_CONFIGS

PROBE = """
import sys
from specguard.cli.main import app
try:
    app(["check", "--format", "json", "--", "--model-path", {target!r}, "--speculative-algorithm", "NGRAM"], standalone_mode=False)
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "sglang", "transformers", "safetensors", "fastapi", "uvicorn") or m.startswith("specguard.runtime"))
print("HEAVY:", heavy, file=sys.stderr)
"""


def test_check_path_imports_no_heavy_module() -> None:
    target = str(HF_CONFIGS / "Qwen" / "Qwen2.5-7B-Instruct")
    result = subprocess.run([sys.executable, "-c", PROBE.format(target=target)], capture_output=True, text=True, timeout=60)
    assert "HEAVY: []" in result.stderr, result.stderr
