"""The crash-signature table against real SGLang log lines quoted from issue threads (fixtures)."""

from __future__ import annotations

import json

import pytest
from packaging.version import Version

from specguard.diagnosis import any_signature, diagnose, match
from specguard.launch.signatures import SIGNATURES
from specguard.models import Applicability, Edit, Finding, Fix, Severity
from specguard.rules import ALL_RULES, RULES_BY_CODE
from tests.launch.conftest import FIXTURES

EXCERPTS = json.loads((FIXTURES / "sglang_log_excerpts.json").read_text(encoding="utf-8"))
BY_KEY = {s.key: s for s in SIGNATURES}


@pytest.mark.parametrize("case", EXCERPTS, ids=lambda c: f"{c['signature']}@{c['source'].rsplit('/', 2)[-2]}-{c['source'].rsplit('/', 1)[-1]}")
def test_each_quoted_line_is_recognised(case: dict) -> None:
    keys = [signature.key for signature, _ in match([case["excerpt"]])]
    assert case["signature"] in keys


def test_every_signature_has_a_quoted_line_from_its_own_source() -> None:
    for signature in SIGNATURES:
        quoted = [c for c in EXCERPTS if c["signature"] == signature.key and c["source"] == signature.source]
        assert quoted, f"{signature.key}: no excerpt from {signature.source} in the fixtures"


def test_every_rule_in_the_table_exists() -> None:
    for signature in SIGNATURES:
        for code in signature.rules:
            assert code in RULES_BY_CODE, f"{signature.key} names {code}, which is not a rule"


def test_sources_are_issue_or_pull_request_threads() -> None:
    for signature in SIGNATURES:
        assert signature.source.startswith("https://github.com/") and ("/issues/" in signature.source or "/pull/" in signature.source)


def test_healthy_log_lines_match_nothing() -> None:
    healthy = [
        "[2026-11-22 02:30:00] Load weight end. elapsed=3.10 s, type=LlamaForCausalLM, avail mem=60.00 GB, mem usage=15.00 GB.",
        "[2026-11-22 02:30:05] Capture cuda graph end. Time elapsed: 12.11 s. mem usage=0.54 GB. avail mem=16.74 GB.",
        "[2026-11-22 02:30:09] Decode batch, #running-req: 1, #token: 97, token usage: 0.00, accept len: 3.12, accept rate: 0.71, cuda graph: True, gen throughput (token/s): 41.27, #queue-req: 0",
        "[2026-11-22 02:30:06] The server is fired up and ready to roll!",
    ]
    assert match(healthy) == []


def test_a_fired_rule_gives_its_own_fix() -> None:
    dm001 = Finding(
        code="DM001", name="draft-dtype-differs-from-target", severity=Severity.ERROR, message="float16 draft, bfloat16 target",
        fix=Fix(title="--dtype float16", applicability=Applicability.UNSAFE, edits=(Edit(name="--dtype", value="float16"),)),
    )
    log = ["Capture cuda graph failed: mat1 and mat2 must have the same dtype, but got Float and Half"]
    first = diagnose(log, [dm001])[0]
    assert (first.signature.key, first.rule, first.edits) == ("dtype-mismatch", "DM001", (Edit(name="--dtype", value="float16"),))


def test_without_a_fired_rule_the_fallback_is_offered() -> None:
    diagnosis = diagnose(["[2025-02-09 TP0] Capture cuda graph failed: out of resources"])[0]
    assert diagnosis.signature is BY_KEY["cuda-graph-capture-failed"]
    assert diagnosis.edits == (Edit(name="--disable-cuda-graph", value=True),)
    assert diagnosis.fix_title == "--disable-cuda-graph"


def test_illegal_memory_access_prefers_the_rule_that_fired() -> None:
    vb001 = Finding(code="VB001", name="flashinfer-draft-graph-padding-crash", severity=Severity.WARNING, message="...")
    diagnosis = diagnose(["RuntimeError: CUDA error: an illegal memory access was encountered"], [vb001])[0]
    assert diagnosis.rule == "VB001"


def test_each_rule_log_signature_matches_the_message_its_rule_quotes() -> None:
    import inspect
    import re

    declaring = [rule for rule in ALL_RULES if rule.log_signatures]
    assert len(declaring) >= 5
    for rule in declaring:
        source = inspect.getsource(inspect.getmodule(rule.check))  # type: ignore[arg-type]
        # The module's text with implicitly joined string literals joined and f-string fields
        # filled with a number, as SGLang would print them.
        text = re.sub(r"\{[^{}]*\}", "131072", re.sub(r"[\"']\s*\n\s*f?[\"']", "", source))
        for pattern in rule.log_signatures:
            assert re.search(pattern, text, re.IGNORECASE), (rule.code, pattern)


def test_a_rule_signature_on_a_line_its_table_signature_explains_adds_nothing() -> None:
    log = ["RuntimeError: expected mat1 and mat2 to have the same dtype, but got: float != c10::Half"]
    assert [signature.key for signature, _ in match(log)] == ["dtype-mismatch"]


def test_the_rule_that_fired_ranks_first() -> None:
    dm012 = Finding(code="DM012", name="context-length-above-target", severity=Severity.ERROR, message="...")
    log = ["ValueError: User-specified context_length (131072) is greater than the derived context_length (2048)."]
    assert [d.rule for d in diagnose(log)] == ["DM002", "DM012"]  # table order
    assert [d.rule for d in diagnose(log, [dm012])] == ["DM012", "DM002"]


def test_the_first_pass_lets_every_quoted_line_through_and_healthy_ones_not() -> None:
    assert all(any_signature().search(case["excerpt"]) for case in EXCERPTS)
    assert not any_signature().search("[2026-11-22 02:30:05] Capture cuda graph end. Time elapsed: 12.11 s.")


def test_a_rule_whose_releases_hold_the_launch_ranks_before_one_fixed_earlier() -> None:
    log = [
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "TypeError: 'NoneType' object has no attribute 'prepare_for_decode'",  # PL063: before 0.5.20
    ]
    assert diagnose(log, version=Version("0.5.19"))[0].signature.key == "dflash-pd-decode-no-draft-input"
    assert diagnose(log, version=Version("0.5.23"))[0].signature.key == "illegal-memory-access"


def test_a_specific_message_ranks_before_a_common_one() -> None:
    log = [
        "AttributeError: 'NoneType' object has no attribute 'shape'",  # AB007's, and many other bugs'
        "AttributeError: 'AiterAttnBackend' object has no attribute 'max_split_per_batch'",
    ]
    ranked = diagnose(log)
    assert [(d.rule, d.common) for d in ranked] == [("AB061", False), ("AB007", True)]


def test_a_launch_dated_to_a_range_ranks_a_rule_whose_window_meets_it() -> None:
    log = [
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "TypeError: 'NoneType' object has no attribute 'prepare_for_decode'",  # PL063: before 0.5.20
    ]
    first = {
        releases: diagnose(log, releases=tuple(Version(r) for r in releases))[0].signature.key
        for releases in (("0.5.19", "0.5.23"), ("0.5.21", "0.5.23"), ())
    }
    assert first == {
        ("0.5.19", "0.5.23"): "dflash-pd-decode-no-draft-input",
        ("0.5.21", "0.5.23"): "illegal-memory-access",
        (): "dflash-pd-decode-no-draft-input",  # undated: table order
    }
