"""The parity suite's environment, required; and its agreement figures at the end of the run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import differential
from differential import PARITY_REPORT

# The local opt-out (scripts/test.sh honours it too, and refuses it on CI): without it, a parity
# test whose environment is missing fails, so that a broken parity claim cannot pass as a skip.
OPT_OUT = "SPECGUARD_SKIP_SGLANG_ENV"


def missing_parity_environment() -> str | None:
    """What a test marked ``sglang`` lacks to run, or None."""
    if differential.peer_client.find_sglang_python() is None:
        return ("SGLang's parser environment is missing: run scripts/sglang_env/setup.sh "
                "(or set SPECGUARD_SGLANG_PYTHON / SPECGUARD_SGLANG_VENV)")
    if not differential.make_models.FIXTURES.is_dir():
        return f"the model fixtures are missing at {differential.make_models.FIXTURES} (set SPECGUARD_FIXTURES)"
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("sglang") is None:
        return
    missing = missing_parity_environment()
    if missing is None:
        return
    if os.environ.get(OPT_OUT) == "1":
        pytest.skip(f"{missing} ({OPT_OUT}=1)")
    pytest.fail(f"{missing}; {OPT_OUT}=1 skips the parity suite in a local run", pytrace=False)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    report = config.stash.get(PARITY_REPORT, None)
    if report is None:
        return
    terminalreporter.section("specguard vs SGLang 0.5.23 argument resolution")
    terminalreporter.write_line(json.dumps(report["figures"], indent=1))
    for key in ("missed", "not_accepted", "mismatches"):
        items = report[key]
        terminalreporter.write_line(f"{key}: {len(items)}")
        for item in items[:10]:
            terminalreporter.write_line("  " + json.dumps(item, default=str)[:600])
