"""specguard against SGLang 0.5.23's own argument resolution, over generated configurations.

For each case (see ``differential.generate``), SGLang runs ``prepare_server_args`` ->
``resolve_once`` -> ``check_server_args`` in the SGLang venv (scripts/sglang_env/setup.sh) on
config.json-only model directories built from the fixtures, with the GPU simulated through
SGLang's own platform override. specguard runs in-process. The asserts are one-directional:

- whenever SGLang raises, specguard reports an error finding;
- after specguard's fixes (fix level unsafe), the corrected argv passes SGLang's resolution and
  checks (cases where specguard leaves an error it cannot fix are excluded and counted);
- for every case SGLang accepts, specguard's predicted values equal SGLang's resolved ones.

Sized by $SPECGUARD_PARITY_CASES (default 2000) and $SPECGUARD_PARITY_SEED; SGLang's verdicts
are cached by case content under .cache/parity/, so a rerun only runs new cases. The figures
are printed at the end of the pytest run (tests/parity/conftest.py) and written to
.cache/parity/report.json.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import differential
from differential import PARITY_REPORT

SGLANG_PY = differential.peer_client.find_sglang_python()
CASES = int(os.environ.get("SPECGUARD_PARITY_CASES", "2000"))
SEED = int(os.environ.get("SPECGUARD_PARITY_SEED", "20261122"))

# Without SGLang's environment these fail (tests/parity/conftest.py), unless opted out.
pytestmark = pytest.mark.sglang

# Fields where specguard's prediction may differ from SGLang's, each with the reason; a
# mismatch is accepted only when its (field, reason) is listed here.
KNOWN_MISMATCHES: dict[str, str] = {}


@pytest.fixture(scope="module")
def report(request) -> dict:
    cache_root = differential.REPO / ".cache" / "parity"
    models = differential.models_dir(cache_root)
    result = differential.compare(differential.generate(CASES, SEED), models, SGLANG_PY, cache_root / "peer-cache.tsv")
    (cache_root / "report.json").write_text(json.dumps(result, indent=1, default=str))
    request.config.stash[PARITY_REPORT] = result
    return result


def test_every_sglang_rejection_is_an_error_finding(report):
    figures = report["figures"]
    assert figures["cases"] >= CASES
    assert figures["sglang_rejections"] > 0
    assert report["missed"] == [], f"{len(report['missed'])} SGLang rejections without a specguard error"


def test_corrected_argv_passes_sglang(report):
    assert report["figures"]["corrected_checked"] > 0
    assert report["not_accepted"] == [], f"{len(report['not_accepted'])} corrected argvs SGLang still rejects"


def test_predictions_equal_sglang_resolution(report):
    unexplained = [m for m in report["mismatches"] if m["field"] not in KNOWN_MISMATCHES]
    assert unexplained == [], f"{len(unexplained)} predictions differ from SGLang's resolved values"
