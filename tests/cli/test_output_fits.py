"""What a user meets at a terminal: catalog provenance in one line per model (the detail under -v),
tables that fit 80 columns, each rule's real severities, and --format sarif refused where no SARIF
is written."""

from __future__ import annotations

import json

import pytest

from specguard.models import Severity
from specguard.rules import ALL_RULES
from tests.conftest import run_cli

QWEN_FROM_CATALOG = (
    "check", "--offline", "--", "--model-path", "Qwen/Qwen3-235B-A22B", "--speculative-algorithm", "EAGLE3",
    "--speculative-draft-model-path", "lmsys/Qwen3-235B-A22B-EAGLE3",
)
NARROW = {"COLUMNS": "80"}


def _header(stdout: str) -> list[str]:
    """The lines before the findings table."""
    return stdout.split("┏", 1)[0].splitlines()


def test_catalog_provenance_is_one_line_per_model() -> None:
    result = run_cli(*QWEN_FROM_CATALOG, env=NARROW)
    assert result.returncode == 0, result.stderr
    facts_lines = [line for line in _header(result.stdout) if "facts:" in line]
    assert [line.split(":")[0] for line in facts_lines] == ["target facts", "draft facts"]
    assert all(line.startswith(f"{role} facts: specguard catalog snapshot ") and line.endswith("(-v: its source)") for line, role in zip(facts_lines, ("target", "draft")))
    assert len(_header(result.stdout)) <= 4  # the launch line (2 at 80 columns) and one per model
    assert "aiconfigurator" not in result.stdout and "SOURCES.md" not in result.stdout


@pytest.mark.parametrize("flag", ["-v", "--verbose"])
def test_verbose_shows_where_the_catalog_copied_from(flag: str) -> None:
    result = run_cli(QWEN_FROM_CATALOG[0], flag, *QWEN_FROM_CATALOG[1:], env=NARROW)
    assert result.returncode == 0, result.stderr
    assert "ai-dynamo/aiconfigurator@" in result.stdout and "used because" in result.stdout


def test_models_show_names_the_catalog_in_one_line_and_the_detail_under_verbose() -> None:
    brief = run_cli("models", "show", "Qwen/Qwen3-235B-A22B", "--offline", env=NARROW)
    assert brief.returncode == 0, brief.stderr
    first = brief.stdout.splitlines()[0]
    assert first.startswith("Qwen/Qwen3-235B-A22B: specguard catalog snapshot ") and len(first) <= 80
    assert "aiconfigurator" not in brief.stdout
    verbose = run_cli("models", "show", "-v", "Qwen/Qwen3-235B-A22B", "--offline", env=NARROW)
    assert "ai-dynamo/aiconfigurator@" in verbose.stdout
    # JSON keeps the whole provenance whatever the verbosity.
    document = json.loads(run_cli("models", "show", "Qwen/Qwen3-235B-A22B", "--offline", "--format", "json").stdout)
    assert "aiconfigurator" in document["facts"][0]["from"]


@pytest.mark.parametrize("args", [("models",), ("models", "list"), ("presets", "list"), ("models", "show", "Qwen/Qwen3-235B-A22B", "--offline")])
def test_tables_fit_80_columns(args: tuple[str, ...]) -> None:
    result = run_cli(*args, env=NARROW)
    assert result.returncode == 0, result.stderr
    too_wide = [line for line in result.stdout.splitlines() if len(line) > 80]
    assert not too_wide, too_wide[:3]


def test_a_narrow_table_drops_its_least_needed_columns_and_a_wide_one_keeps_them() -> None:
    narrow = run_cli("models", env=NARROW).stdout
    assert "architecture" in narrow and "kind" not in narrow
    wide = run_cli("models", env={"COLUMNS": "200"}).stdout
    assert "kind" in wide and "source date" in wide
    assert "runtime" in run_cli("presets", "list", env={"COLUMNS": "200"}).stdout


def test_rules_shows_every_severity_a_rules_findings_carry() -> None:
    rows = {row["code"]: row for row in json.loads(run_cli("rules", "--format", "json").stdout)}
    # DM002 is declared an error, and warns where SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 lets SGLang start.
    assert rows["DM002"]["severity"] == "error" and rows["DM002"]["severities"] == ["error", "warning"]
    assert rows["DM001"]["severities"] == ["error"]
    table = run_cli("rules", env={"COLUMNS": "250"}).stdout
    dm002 = next(line for line in table.splitlines() if "DM002" in line)
    assert "error/warning" in dm002


def test_the_severities_shown_cover_every_rule_cases_findings() -> None:
    """Every finding the rule cases (tests/rules/cases) produce carries a severity `rules` shows."""
    from specguard.cli.rules_cmd import finding_severities
    from specguard.rules import RULES_BY_CODE
    from tests.rules.test_rule_cases import CASES, _context

    shown = {rule.code: set(finding_severities(rule)) for rule in ALL_RULES}
    seen: dict[str, set[Severity]] = {}
    for param in CASES:
        code, argv, case = param.values
        ctx = _context(argv, case)
        rule = RULES_BY_CODE[code]
        for finding in rule.check(ctx) if rule.applies_to(ctx) else ():
            seen.setdefault(finding.code, set()).add(finding.severity)
    assert seen and all(severities <= shown[code] for code, severities in seen.items())


@pytest.mark.parametrize(
    "args",
    [("rules",), ("models",), ("models", "list"), ("models", "show", "Qwen/Qwen3-235B-A22B"), ("presets", "list"), ("presets", "show", "sglang-oom-recovery"), ("launch", "--dry-run"),
     ("accept", "--target", "tiny:target")],
)
def test_format_sarif_is_refused_where_no_sarif_is_written(args: tuple[str, ...]) -> None:
    result = run_cli(*args, "--format", "sarif")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "'sarif'" in result.stderr and "json" in result.stderr


def test_check_still_writes_sarif() -> None:
    result = run_cli(*QWEN_FROM_CATALOG[:2], "--format", "sarif", *QWEN_FROM_CATALOG[2:])
    assert result.returncode == 0 and json.loads(result.stdout)["version"] == "2.1.0"
