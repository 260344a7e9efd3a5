"""SP rules where data cannot say it: a fix checked by every rule, the tree a fix builds, the CLI.
Edges, versions, dialects and unknown facts are cases in tests/rules/cases/SP*.yaml."""

from __future__ import annotations

from specguard import engine
from specguard.models import Applicability
from specguard.rules import ALL_RULES
from specguard.rules.base import Example
from specguard.rules.spec_params import (
    SP001_spec_params_partially_set as SP001,
)
from specguard.rules.spec_params import (
    SP004_spec_v2_env_with_tree as SP004,
)
from specguard.rules.spec_params._shared import tree_capacity
from tests.conftest import HF_CONFIGS, run_cli_json

BASE = ("--model-path", "m", "--speculative-draft-model-path", "d")
V2 = {"SGLANG_ENABLE_SPEC_V2": "1"}


def findings(module, *argv: str, **kwargs):
    ctx = Example(argv=argv, **kwargs).context()
    if not module.RULE.applies_to(ctx):
        return []
    return list(module.RULE.check(ctx))


def eagle(*extra: str, algorithm: str = "EAGLE") -> tuple[str, ...]:
    return (*BASE, "--speculative-algorithm", algorithm, *extra)


def params(steps, topk, tokens) -> tuple[str, ...]:
    out: list[str] = []
    for flag, value in (("--speculative-num-steps", steps), ("--speculative-eagle-topk", topk),
                        ("--speculative-num-draft-tokens", tokens)):
        if value is not None:
            out += [flag, str(value)]
    return tuple(out)


def test_sp001_fix_for_tree_gives_a_fillable_tree() -> None:
    (finding,) = findings(SP001, *eagle(*params(None, 4, 64)))
    values = {e.name: e.value for e in finding.fix.edits}
    assert tree_capacity(values["--speculative-num-steps"], 4) >= 63


def test_sp004_fix_makes_a_chain_and_ignored_var_is_dropped_safely() -> None:
    ctx = Example(argv=eagle(*params(3, 4, 8)), env=V2, sglang_version="0.5.8").context()
    outcome = engine.check(ALL_RULES, ctx, fix_level=Applicability.UNSAFE)
    corrected = outcome.corrected
    assert corrected.get("speculative_eagle_topk") == 1 and corrected.get("speculative_num_draft_tokens") == 4
    (info,) = findings(SP004, *eagle(*params(3, 1, 4)), env=V2)
    assert info.fix.applicability is Applicability.SAFE and info.fix.edits[0].target == "env"


def test_cli_reports_and_fixes_partial_params() -> None:
    llama = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
    args = ("--", "--model-path", llama, "--speculative-algorithm", "NGRAM", "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "3")
    code, doc = run_cli_json("check", "--fix", "--offline", *args)
    sp007 = [f for f in doc["findings"] if f["code"] == "SP007"]
    assert sp007 and sp007[0]["applied"]
    assert "--speculative-eagle-topk" not in doc["argv"]
    args = ("--", "--model-path", llama, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3")
    code, doc = run_cli_json("check", "--offline", *args)
    assert code == 1 and any(f["code"] == "SP001" and f["severity"] == "error" for f in doc["findings"])
