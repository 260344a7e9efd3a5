"""`specguard check` must not import torch, sglang or the runtime: it has to start fast anywhere."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import HF_CONFIGS

PROBE = """
import sys
from specguard.cli.main import main
main(["check", "--format", "json", "--", "--model-path", {target!r}, "--speculative-algorithm", "NGRAM"])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "sglang", "transformers", "safetensors", "fastapi", "uvicorn") or m.startswith("specguard.runtime"))
print("HEAVY:", heavy, file=sys.stderr)
"""


def test_check_path_imports_no_heavy_module() -> None:
    target = str(HF_CONFIGS / "Qwen" / "Qwen2.5-7B-Instruct")
    result = subprocess.run([sys.executable, "-c", PROBE.format(target=target)], capture_output=True, text=True, timeout=60)
    assert "HEAVY: []" in result.stderr, result.stderr


# The console script's own path (specguard.cli.main.run, what `specguard check` and
# `python -m specguard check` run), with what it imported printed after it exits.
CONSOLE_PROBE = """
import sys
from specguard.cli.main import run
sys.argv = ["specguard", *sys.argv[1:]]
try:
    run()
except SystemExit as exit:
    code = exit.code
loaded = sorted({m.split(".")[0] for m in sys.modules})
print("EXIT:", code, file=sys.stderr)
print("LOADED:", " ".join(loaded), file=sys.stderr)
"""

# What a plain-flags check has no use for: pydantic (only a preset is read with it; the records
# are msgspec structs, records.py), typer and click (the CLI is argparse, cli/parsing.py),
# dataclasses (~1 ms a class), difflib (only for a misspelling, spelling.py), the runtime's stack,
# SGLang, and what only the human report (rich) or presets (yaml) need. (inspect comes with
# msgspec's typing_extensions: the cost of the records library, benchmarks/bench_records.py.)
NOT_ON_THE_CHECK_PATH = (
    "pydantic", "pydantic_core", "typer", "click", "dataclasses", "difflib",
    "torch", "sglang", "transformers", "safetensors", "rich", "yaml", "huggingface_hub",
)


def _loaded_by_check(*args: str) -> tuple[int, set[str]]:
    result = subprocess.run([sys.executable, "-c", CONSOLE_PROBE, "check", *args], capture_output=True, text=True, timeout=60)
    exit_line = next(line for line in result.stderr.splitlines() if line.startswith("EXIT:"))
    loaded_line = next(line for line in result.stderr.splitlines() if line.startswith("LOADED:"))
    return int(exit_line.split()[1]), set(loaded_line.split()[1:])


def test_plain_flags_check_imports_neither_pydantic_nor_torch_nor_sglang() -> None:
    target = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
    draft = str(HF_CONFIGS / "yuhuili" / "EAGLE-llama2-chat-7B")
    code, loaded = _loaded_by_check(
        "--format", "json", "--offline", "--gpu-count", "2", "--env", "SGLANG_ENABLE_SPEC_V2=1", "--",
        "--model-path", target, "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", draft, "--tp", "2",
    )
    assert code in (0, 1)  # it ran the rules (findings or none), not an input error
    assert "specguard" in loaded
    assert loaded.isdisjoint(NOT_ON_THE_CHECK_PATH), sorted(loaded & set(NOT_ON_THE_CHECK_PATH))


def test_a_bad_option_value_is_one_line_naming_the_option() -> None:
    result = subprocess.run(
        [sys.executable, "-c", CONSOLE_PROBE, "check", "--gpu-count", "0", "--", "--model-path", str(HF_CONFIGS / "Qwen" / "Qwen2.5-7B-Instruct")],
        capture_output=True, text=True, timeout=60,
    )
    assert "EXIT: 2" in result.stderr
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("specguard: error:")]
    assert error_lines == ["specguard: error: argument --gpu-count: 0 is not between 1 and 1024 (see specguard check --help)"]
    assert "Traceback" not in result.stderr


def test_a_preset_check_imports_pydantic_and_nothing_heavy() -> None:
    """A preset is read by pydantic models (specguard/presets/model.py), imported with the preset
    only: the plain check above has none."""
    code, loaded = _loaded_by_check("--preset", "eagle3-llama3.1-8b", "--offline", "--format", "json")
    assert code in (0, 1)
    assert {"yaml", "pydantic", "pydantic_core"} <= loaded
    assert loaded.isdisjoint({"torch", "sglang", "rich", "transformers", "fastapi"}), sorted(loaded & {"torch", "sglang", "rich", "transformers", "fastapi"})
