"""No function in the core is longer than a screen: a longer one is split into named steps.

The core is what every ``specguard check`` runs through: argument resolution, the memory
estimate, the rule engine, model facts, the launch dialects, the input readers, launch-text
extraction and the release tables. Lengths are measured with ``ast`` from a function's ``def``
line to its last line, docstring and comments included, nested functions counted in their parent.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "specguard"
CORE = ("resolution", "memory", "engine.py", "facts.py", "dialects.py", "inputs.py", "launch_text.py", "versions.py")
MAX_LINES = 60
# Functions allowed to be longer, each with the reason it reads better whole: none today.
ALLOWED: dict[str, str] = {}


def _core_files() -> list[Path]:
    files: list[Path] = []
    for name in CORE:
        path = PACKAGE / name
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return files


def function_lengths(path: Path) -> list[tuple[str, int]]:
    """(qualified name, lines) of every function and method in the file, outermost first."""
    lengths: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                lengths.append((name, (child.end_lineno or child.lineno) - child.lineno + 1))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return lengths


def test_the_core_modules_exist() -> None:
    """A renamed module must be renamed here too, or the length check silently skips it."""
    missing = [name for name in CORE if not (PACKAGE / name).exists()]
    assert not missing


@pytest.mark.parametrize("path", _core_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_core_function_over_60_lines(path: Path) -> None:
    module = str(path.relative_to(PACKAGE))
    too_long = [
        f"{module}:{name} is {lines} lines"
        for name, lines in function_lengths(path)
        if lines > MAX_LINES and f"{module}:{name}" not in ALLOWED
    ]
    assert not too_long, f"split into named steps (at most {MAX_LINES} lines each): {too_long}"


def test_the_measure_counts_a_long_function(tmp_path: Path) -> None:
    """The measure itself: a 61-line function is over the limit, a method is named with its class."""
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    path = tmp_path / "probe.py"
    path.write_text(f"def long():\n{body}\n\nclass C:\n    def short(self):\n        return 1\n", encoding="utf-8")
    assert function_lengths(path) == [("long", 61), ("C.short", 2)]
