"""docs/rules.md is generated from the rules: it must match them."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def test_generated_rule_docs_are_current() -> None:
    result = subprocess.run([sys.executable, "scripts/gen_rule_docs.py", "--check"], cwd=REPO)
    assert result.returncode == 0, "docs/rules.md is stale: run python scripts/gen_rule_docs.py"
