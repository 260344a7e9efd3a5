"""The resolution package and memory, held to their layering: SGLang's version boundaries are
named changes (``sglang_facts.changes``), and memory imports resolution one way only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "specguard"
RESOLUTION_AND_MEMORY = sorted([*(PACKAGE / "resolution").rglob("*.py"), *(PACKAGE / "memory").rglob("*.py")])


def _ids(path: Path) -> str:
    return str(path.relative_to(PACKAGE))


def _version_literals(tree: ast.AST) -> list[str]:
    """Every ``Version("...")`` call with a string literal argument."""
    return [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Version"
        and any(isinstance(arg, ast.Constant) and isinstance(arg.value, str) for arg in node.args)
    ]


def _imported_modules(tree: ast.AST) -> list[tuple[str, bool]]:
    """(module, imported inside a function) for every import in the file."""
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ImportFrom) and child.module:
                found.append((child.module, in_function))
            elif isinstance(child, ast.Import):
                found.extend((alias.name, in_function) for alias in child.names)
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return found


@pytest.mark.parametrize("path", RESOLUTION_AND_MEMORY, ids=_ids)
def test_no_version_literal_outside_sglang_facts(path: Path) -> None:
    literals = _version_literals(ast.parse(path.read_text(encoding="utf-8")))
    assert not literals, f"name these boundaries in specguard/sglang_facts/changes.py: {literals}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "resolution").rglob("*.py")), ids=_ids)
def test_resolution_never_imports_memory(path: Path) -> None:
    imports = [module for module, _ in _imported_modules(ast.parse(path.read_text(encoding="utf-8")))]
    assert not [m for m in imports if m.startswith("specguard.memory")]


@pytest.mark.parametrize("path", RESOLUTION_AND_MEMORY, ids=_ids)
def test_no_function_level_import_of_specguard(path: Path) -> None:
    """A function-level import is how a cycle hides; both packages import at the top."""
    hidden = [module for module, in_function in _imported_modules(ast.parse(path.read_text(encoding="utf-8"))) if in_function]
    assert not [m for m in hidden if m.startswith("specguard")], hidden


def test_the_checks_see_what_they_look_for() -> None:
    """The detectors themselves, on a snippet with one of each."""
    tree = ast.parse('from packaging.version import Version\nX = Version("0.5.14")\ndef f():\n    from specguard.memory import estimate\n')
    assert _version_literals(tree) == ["Version('0.5.14')"]
    assert ("specguard.memory", True) in _imported_modules(tree)
