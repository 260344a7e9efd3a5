"""``specguard.check``: the Python API returns the records ``specguard check --format json`` writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import specguard
from specguard.errors import InputError
from tests.conftest import REPO, run_cli_json

LLAMA = str(REPO.parent / "shared" / "fixtures" / "hf-configs" / "meta-llama" / "Llama-3.1-8B-Instruct")


@pytest.fixture(autouse=True)
def _as_the_cli_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment run_cli gives the CLI, so both read the same launch env."""
    import os

    for name in list(os.environ):
        if name.startswith(("SGLANG_", "SGL_", "HF_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.mark.parametrize(
    ("argv", "options", "cli_options"),
    [
        # Catalog facts, findings with a fix, the default release.
        (["--model-path", "Qwen/Qwen3-235B-A22B", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "lmsys/Qwen3-235B-A22B-EAGLE3"],
         {"offline": True}, ["--offline"]),
        # A local target, a named release and GPU, an error finding.
        (["--model-path", LLAMA, "--speculative-algorithm", "EAGLE3", "--dtype", "float16"],
         {"version": "0.5.10", "gpu": "H100", "offline": True}, ["--sglang-version", "0.5.10", "--gpu", "H100", "--offline"]),
        # --target/--draft given apart from the launch.
        (["--speculative-algorithm", "NGRAM"], {"target": LLAMA, "gpu": "A100", "offline": True}, ["--target", LLAMA, "--gpu", "A100", "--offline"]),
        # Rule selection as the CLI reads it.
        (["--model-path", LLAMA, "--speculative-algorithm", "EAGLE3", "--dtype", "float16"],
         {"version": "0.5.10", "gpu": "H100", "offline": True, "ignore": ["DM005"], "extend_select": ["perf"]},
         ["--sglang-version", "0.5.10", "--gpu", "H100", "--offline", "--ignore", "DM005", "--extend-select", "perf"]),
        (["--model-path", LLAMA, "--speculative-algorithm", "EAGLE3"], {"gpu": "H100", "offline": True, "select": ["start"]},
         ["--gpu", "H100", "--offline", "--select", "start"]),
    ],
)
def test_the_result_is_what_check_format_json_prints(argv: list[str], options: dict, cli_options: list[str]) -> None:
    result = specguard.check(argv, **options)
    code, printed = run_cli_json("check", *cli_options, "--", *argv)
    assert result.to_json() == printed
    assert result.exit_code == code and result.ok is (code == 0)
    assert [f.code for f in result.findings] == [f["code"] for f in printed["findings"]]


def test_the_result_is_typed_records() -> None:
    result = specguard.check(["--model-path", LLAMA, "--speculative-algorithm", "EAGLE3"], gpu="H100", offline=True)
    assert isinstance(result, specguard.CheckResult)
    assert result.context.target is not None and result.context.target.source == LLAMA
    assert all(f.severity.value in ("error", "warning", "info") for f in result.findings)
    assert json.loads(json.dumps(result.to_json())) == result.to_json()


def test_a_bad_input_raises_the_clis_error() -> None:
    with pytest.raises(InputError):
        specguard.check(["--model-path", "/nonexistent/model"], draft="/nonexistent/draft", offline=True)


def test_importing_specguard_imports_no_check_machinery() -> None:
    """Every CLI run imports the package; the API is imported only when called."""
    probe = "import sys, specguard; print(sorted(m for m in sys.modules if m.startswith('specguard')))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=Path(REPO), timeout=60)
    assert loaded.stdout.strip() == "['specguard']", loaded.stdout + loaded.stderr


def test_the_readme_example_runs() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## In your tools", 1)[1].split("\n## ", 1)[0]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)  # noqa: S102  # the README's own example
    assert namespace["result"].exit_code in (0, 1) and namespace["document"]["schema_version"] == 1
