"""Print the differential suite's agreement figures at the end of the run (any -q/-s/-r)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from differential import PARITY_REPORT


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
