"""Every real-world case through the real CLI; the README's figures are the runner's own.

A failure case must be caught by one of the rules it names (``expect.rules``), on a flag it says
must change: as an error for a reject case, else as a warning or error, or as info where the
severity policy quiets that rule by default (counted apart). A good case must get no warning and
no error: a warning means the launch fails or degrades for you. A case the rules cannot catch yet is
marked ``xfail`` in its YAML with the reason, strictly: if it starts passing, the test says so
and the mark must go.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import HF_FIXTURES, all_results, load_cases

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import realworld_figures

CASES = load_cases()


def _param(case):
    marks = [pytest.mark.xfail(reason=case.xfail, strict=True)] if case.xfail else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES if c.is_failure])
def test_failure_case_is_caught(case):
    result = all_results()[case.id]
    assert result.error is None, result.describe()
    assert result.caught, f"{case.source.report}: expected a finding naming one of {list(case.expect.flags)} ({case.expect.verdict.value}); {result.describe()}"


@pytest.mark.parametrize("case", [_param(c) for c in CASES if not c.is_failure])
def test_good_case_gets_no_warning(case):
    result = all_results()[case.id]
    assert not result.false_alarm, f"{case.source.report}: a documented-good launch got an error; {result.describe()}"
    assert not result.warned, f"{case.source.report}: a documented-good launch got a warning; {result.describe()}"


# The failure cases that name no rule, and why: no rule can catch them yet (each is xfail).
NAMES_NO_RULE = {
    "sglang-20148-npu-qwen3-14b-eagle3-xgrammar-crash": "an open NPU report with no diagnosis",
    "sglang-34239-qwen35-397b-nextn-context-boundary-h800": "an open bug about traffic near the context limit",
    "sglang-19081-dsv32-nvfp4-specv2-nsa-decode-trtllm-crash": "no established cause or fix release",
    "sglang-19712-dsv32-specv1-dp-attention-eagle-b200": "the crash's cause is not in the thread",
    "slime-693-mimo-7b-rl-mtp-flashinfer-ima": "no rule knows this FlashInfer crash on 0.5.4.post1",
}


def test_failure_cases_naming_no_rule_are_listed_and_xfail():
    unnamed = {c.id: c for c in CASES if c.is_failure and not c.expect.rules}
    assert set(unnamed) == set(NAMES_NO_RULE)
    assert all(case.xfail for case in unnamed.values()), "a failure case no rule is named for cannot be caught"


def test_no_launch_is_counted_twice():
    # Cases may share an argv (a placeholder model path, a recipe run on two releases), but not
    # the whole launch: the same launch twice would count one catch or one false alarm twice.
    from corpus import launch_key

    seen: dict[object, str] = {}
    for case in CASES:
        assert seen.setdefault(launch_key(case), case.id) == case.id, f"{case.id} repeats {seen[launch_key(case)]}"


def _result(verdict, rules, *findings):
    from corpus import Case, Expect, Result

    case = Case.model_validate({
        "id": "x", "title": "t", "domain": "cache", "sglang_version": "0.5.23", "version_basis": "test", "argv": ["--model-path", "m"],
        "symptom": "s", "source": {"report": "r", "url": "https://example.org", "quote": "q"},
        "expect": Expect(verdict=verdict, flags=("--grammar-backend",) if verdict != "ok" else (), rules=rules),
    })
    return Result(case, 0, tuple({"code": c, "severity": sev, "flags": ["--grammar-backend"], "message": ""} for c, sev in findings), None)


def test_only_the_named_rules_catch():
    assert not _result("warn", ("FX086",), ("SV001", "warning")).caught
    assert _result("warn", ("FX086",), ("FX086", "warning")).caught
    assert not _result("reject", ("FX086",), ("FX086", "warning")).caught


def test_info_catches_only_where_the_policy_quiets_the_rule():
    # FX086 needs structured output (info unless the launch enables it); DM040 is loud.
    quiet = _result("warn", ("FX086",), ("FX086", "info"))
    assert quiet.caught and quiet.caught_quietly
    assert not _result("warn", ("DM040",), ("DM040", "info")).caught


def test_a_warning_on_a_good_case_counts():
    assert _result("ok", (), ("SV001", "warning")).warned
    assert not _result("ok", (), ("SV001", "info")).warned


def test_fixtures_named_by_cases_exist():
    for case in CASES:
        for model in (case.target, case.draft):
            if model is not None and model.fixture:
                assert (HF_FIXTURES / model.fixture / "config.json").is_file(), f"{case.id}: no fixture {model.fixture}"


def test_readme_figures_are_the_runners():
    readme = (REPO / "README.md").read_text()
    assert realworld_figures.current_block(readme) == realworld_figures.block(all_results().values()), (
        "README's real-world figures are stale: run `python scripts/realworld_figures.py --write`"
    )


@pytest.mark.parametrize("verdict", ["reject", "fix", "warn"])
def test_failure_case_must_name_the_flags_to_change(verdict):
    # Without flags, any unrelated warning (an open --host, say) would count as catching the case.
    from corpus import Expect

    with pytest.raises(ValueError, match="expect.flags"):
        Expect(verdict=verdict)
    assert Expect(verdict=verdict, flags=("--page-size",)).flags == ("--page-size",)


LOGGED = [c for c in CASES if c.log is not None]


def test_every_log_is_quoted_text_with_its_source():
    # issue #24: the error text a case's source quotes, kept verbatim with the URL it was copied from.
    assert LOGGED, "no case keeps its source's error text"
    for case in LOGGED:
        assert case.is_failure, f"{case.id}: only a failure case quotes an error"
        assert case.log and case.log.strip(), f"{case.id}: empty log"
        assert case.log_source and case.log_source.startswith("https://"), f"{case.id}: log_source must be a public https URL"
        assert len(case.log.splitlines()) <= 60, f"{case.id}: keep the error line and the last frames, not the whole log"


@pytest.mark.parametrize("fields", [{"log": "ValueError: x"}, {"log_source": "https://example.org"},
                                    {"log": "  \n", "log_source": "https://example.org"},
                                    {"log": "ValueError: x", "log_source": "http://example.org"}])
def test_a_log_needs_its_source_and_text(fields):
    from corpus import Case

    with pytest.raises(ValueError, match="log"):
        Case.model_validate({
            "id": "x", "title": "t", "domain": "cache", "sglang_version": "0.5.23", "version_basis": "test", "argv": ["--model-path", "m"],
            "symptom": "s", "source": {"report": "r", "url": "https://example.org", "quote": "q"},
            "expect": {"verdict": "warn", "flags": ["--grammar-backend"], "rules": ["FX086"]}, **fields,
        })


def test_launch_echo_by_hand_reads_like_sglangs():
    from corpus import echo_by_hand

    assert echo_by_hand(["--speculative-algorithm", "EAGLE", "--tp", "2", "--enable-dp-attention", "--cuda-graph-bs", "1", "2"]) == (
        "server_args=ServerArgs(speculative_algorithm='EAGLE', tp=2, enable_dp_attention=True, cuda_graph_bs=[1, 2])"
    )


def test_explain_figures_run():
    # Either `specguard explain` ran on every logged case, or the figures say why they are unavailable.
    from corpus import explain_results, explain_table

    explained = explain_results()
    table = explain_table(explained, CASES)
    assert f"| **all** | {sum(c.is_failure for c in CASES)} | {len(LOGGED)} |" in table
    if isinstance(explained, str):
        assert "unavailable" in table
    else:
        assert {e.case.id for e in explained} == {c.id for c in LOGGED}
        assert all(e.echo_by in ("sglang", "by hand") for e in explained)
