"""`specguard render --to DIALECT` prints what the destination's launcher can run, judges it
there, and refuses the options it would not act on."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.conftest import run_cli

SGLANG_PRESET = "sglang-eagle3-llama3.1-8b"  # CUDA graphs and a topk-4 tree: nothing sgl-jax runs


def _flags(text: str) -> set[str]:
    return {word for word in shlex.split(text.replace("\\\n", " ")) if word.startswith("--")}


def test_render_to_sgl_jax_leaves_out_flags_sgl_jax_lacks_and_says_so() -> None:
    known = set(json.loads((Path(__file__).parents[2] / "specguard" / "data" / "sgl-jax-flags.json").read_text())["flags"])
    result = run_cli("render", "--preset", SGLANG_PRESET, "--to", "sgl-jax")
    assert result.stdout.startswith("python -m sgl_jax.launch_server")
    assert _flags(result.stdout) <= known
    assert "--cuda-graph-max-bs-decode left out: sgl-jax has no such flag" in result.stderr


def test_render_to_sgl_jax_is_judged_as_sgl_jax() -> None:
    result = run_cli("render", "--preset", SGLANG_PRESET, "--to", "sgl-jax")
    assert result.returncode == 1
    assert "as sgl-jax: JX006 topk 4 asks sgl-jax for a draft tree" in result.stderr
    # The same preset in its own dialect renders clean: the error is the destination's.
    assert run_cli("render", "--preset", SGLANG_PRESET, "--to", "sglang").returncode == 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--offline"], "--offline changes nothing here"),
        (["--no-fix", "--unsafe-fixes"], "--unsafe-fixes changes nothing with --no-fix"),
    ],
)
def test_render_refuses_options_it_would_ignore(args: list[str], needle: str) -> None:
    result = run_cli("render", "--preset", SGLANG_PRESET, "--to", "sglang", *args)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0]
