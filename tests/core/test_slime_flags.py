"""slime's own flags per commit (specguard/data/slime-flags.json) against its generator and
against points read by hand in slime's history."""

from __future__ import annotations

import subprocess
import sys

import pytest

from specguard.slime_flags import newest_slime_flags, slime_flags
from tests.conftest import NO_SLIME_CLONE, REPO, SLIME_CLONE

SCRIPT = REPO / "scripts" / "extract_slime_flags.py"
# The generator reads the same history as scripts/extract_slime_pins.py, up to the same commit.


@pytest.mark.skipif(SLIME_CLONE is None, reason=NO_SLIME_CLONE)
def test_slime_flags_match_the_generator():
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(SLIME_CLONE), "--ref", "624b824a8", "--check"],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_known_history_points():
    newest = newest_slime_flags()
    assert newest.commit == "624b824a8" and newest.named == "newest known (624b824a8)"
    # 624b824a8: megatron_parse_args calls _megatron_parse_args(..., ignore_unknown_args=True) at line 195.
    assert newest.ignores_unknown == "slime/backends/megatron_utils/arguments.py:195"
    assert {"--rollout-max-response-len", "--colocate", "--prefill-num-servers", "--sglang-config"} <= newest.flags
    # --offload-rollout is a BooleanOptionalAction: argparse adds --no-offload-rollout.
    assert {"--offload-rollout", "--no-offload-rollout"} <= newest.flags
    assert newest.prefixes == ("--router-",)  # RouterArgs.add_cli_args(parser, use_router_prefix=True)
    v031 = slime_flags("v0.3.1")
    assert v031 is not None and v031.commit == "a6272da0d" and slime_flags("0.3.1") == v031
    assert v031.ignores_unknown == "slime/backends/megatron_utils/arguments.py:186"
    assert "--freeze-indexer" in newest.flags and "--freeze-indexer" not in v031.flags
    # Before 96118d0c2 (2026-02-20) Megatron's parser still stopped on an unknown flag.
    v022 = slime_flags("v0.2.2")
    assert v022 is not None and v022.ignores_unknown is None
    assert slime_flags("96118d0c2").ignores_unknown == "slime/backends/megatron_utils/arguments.py:94"


def test_unknown_refs():
    assert slime_flags("a6272da").commit == "a6272da0d"  # seven digits suffice
    assert slime_flags("0000000") is None and slime_flags("a6272d") is None and slime_flags("v9.9.9") is None
