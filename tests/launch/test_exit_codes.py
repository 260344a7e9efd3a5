"""launch's exit codes are one table: --help and docs/launch.md are rendered from it."""

from __future__ import annotations

from pathlib import Path

from specguard.launch.exit_codes import (
    EXIT_CODE_TABLE,
    LaunchExit,
    help_text,
    markdown_table,
)
from tests.conftest import run_cli

DOCS = Path(__file__).resolve().parents[2] / "docs" / "launch.md"


def test_docs_table_is_the_enum_table() -> None:
    assert markdown_table() in DOCS.read_text(encoding="utf-8")


def test_every_exit_code_has_a_row() -> None:
    assert [row[0] for row in EXIT_CODE_TABLE[: len(LaunchExit)]] == [str(code.value) for code in LaunchExit]


def test_help_shows_the_table() -> None:
    result = run_cli("launch", "--help", env={"COLUMNS": "400"})
    assert result.returncode == 0
    flat = " ".join(result.stdout.split())
    assert " ".join(help_text().split()) in flat
