"""One finding per cause: when two rules report the same cause on the same flags, only the more
specific rule's finding is shown (``Rule.supersedes``), end to end, and the other still speaks
when the specific one is not run."""

from __future__ import annotations

import json

import pytest

from specguard.dialects import parse
from specguard.engine import run_rules
from specguard.environment import build_environment
from specguard.rules import ALL_RULES, RULES_BY_CODE
from specguard.rules.base import CheckContext
from tests.conftest import HF_CONFIGS, run_cli

LLAMA = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")

PAIRS = [
    # (kept, superseded, check options, launch)
    ("DM005", "PL003", ("--sglang-version", "0.5.23"), ("--model-path", LLAMA, "--speculative-algorithm", "DFLASH")),
    ("VB003", "SL003", ("--sglang-version", "0.5.23", "--dialect", "slime"), ("--hf-checkpoint", LLAMA, "--sglang-cuda-graph-max-bs", "64")),
]


def test_every_superseded_code_is_a_rule() -> None:
    assert all(code in RULES_BY_CODE for rule in ALL_RULES for code in rule.supersedes)


@pytest.mark.parametrize(("kept", "superseded", "options", "launch"), PAIRS, ids=[f"{p[0]}-{p[1]}" for p in PAIRS])
def test_one_finding_per_cause(kept: str, superseded: str, options: tuple[str, ...], launch: tuple[str, ...]) -> None:
    result = run_cli("check", "--offline", "--gpu", "H100", "--format", "json", *options, "--", *launch)
    codes = [f["code"] for f in json.loads(result.stdout)["findings"]]
    assert kept in codes and superseded not in codes, codes
    assert codes.count(kept) == 1


@pytest.mark.parametrize(("kept", "superseded", "options", "launch"), PAIRS, ids=[f"{p[0]}-{p[1]}" for p in PAIRS])
def test_the_superseded_rule_speaks_alone(kept: str, superseded: str, options: tuple[str, ...], launch: tuple[str, ...]) -> None:
    spec = parse(launch)
    env = build_environment(sglang_version=options[1], gpu="H100", detect=False)
    ctx = CheckContext.build(spec, None, None, env)
    assert superseded in {f.code for f in run_rules([RULES_BY_CODE[superseded]], ctx)}
    assert superseded not in {f.code for f in run_rules([RULES_BY_CODE[kept], RULES_BY_CODE[superseded]], ctx)}
