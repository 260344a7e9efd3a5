"""The argv ``specguard launch`` builds for every shipped preset is accepted by SGLang 0.5.23's own parser.

Runs ``prepare_server_args`` (argparse) in the SGLang venv through tests/parity/peer; a case
passes when it gets past the parse stage (resolution needs the real checkpoints, which are
not here). Skipped when the venv is absent (scripts/sglang_env/setup.sh creates it).
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from specguard.cli.check import build_inputs, run_check
from specguard.dialects import render
from specguard.launch.runtimes import plan_launch
from specguard.models import Applicability, Dialect
from specguard.presets import load, shipped_names
from tests.conftest import REPO

PEER = REPO / "tests" / "parity" / "peer" / "client.py"


def _client():
    spec = importlib.util.spec_from_file_location("_specguard_peer_client_launch", PEER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


client = _client()
SGLANG_PY = client.find_sglang_python()
pytestmark = [
    pytest.mark.sglang,
    pytest.mark.skipif(SGLANG_PY is None, reason="SGLang peer venv not found: run scripts/sglang_env/setup.sh"),
]


def launch_argv(name: str) -> list[str] | None:
    """The server args the launcher hands SGLang for preset ``name`` (None: SGLang's parser is not the one)."""
    preset = load(name).preset
    inputs = build_inputs([], preset=name, target=None, draft=None, dialect=None, sglang_version=None, gpu=None,
                          gpu_count=None, env=None, offline=True)
    ctx, outcome = run_check(inputs, Applicability.SAFE)
    spec = outcome.corrected
    if spec.dialect is Dialect.SLIME:
        return render(spec, Dialect.SGLANG)  # slime hands these to SGLang's ServerArgs
    if spec.dialect is Dialect.SGL_JAX or preset.runtime.value == "sgl-jax":
        return None
    plan = plan_launch(spec, requested="sglang", preset_runtime=preset.runtime.value, gpu_platform=ctx.env.platform, strict=False)
    assert plan.runtime == "sglang"
    return list(plan.server_args)


def test_every_preset_argv_passes_sglang_parser() -> None:
    cases = []
    for name in shipped_names():
        argv = launch_argv(name)
        if argv is not None:
            cases.append({"name": name, "argv": argv})
    assert len(cases) >= 10
    results = client.run_cases(cases, SGLANG_PY, timeout_per_case=120.0)
    refused = {r["name"]: (r["message"], c["argv"]) for r, c in zip(results, cases) if r["stage"] == "parse"}
    assert refused == {}
