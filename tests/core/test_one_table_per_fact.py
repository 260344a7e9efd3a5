"""One table per fact: no module spells a set of algorithm names or the newest known release that
the tables already hold (read with ``ast``, as ``test_sglang_facts`` reads version literals).

- An algorithm set (two or more of SGLang's algorithm names in one tuple, list or set) lives in
  ``specguard/sglang_facts/algorithms.py`` as a column of the table, or is one of the few tables
  of other programs named in ``OTHER_TABLES``.
- The newest known release is ``sglang_facts.releases.NEWEST_KNOWN_SGLANG``; anywhere else it is
  written only as a release a rule example is pinned to (``sglang_version=``) or inside prose
  that cites a source.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from specguard.sglang_facts import algorithms
from specguard.sglang_facts.algorithms import BY_NAME
from specguard.sglang_facts.releases import NEWEST_KNOWN_SGLANG

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "specguard"
FACTS = PACKAGE / "sglang_facts"

# (module, name) -> why the set is a table of its own and not a column of SGLang's.
OTHER_TABLES: dict[tuple[str, str], str] = {
    ("specguard/runtime/flags.py", "SUPPORTED_ALGORITHMS"): "what specguard's reference runtime implements",
    ("specguard/rules/sgl_jax/_jax.py", "ALGORITHMS"): "the algorithms sgl-jax accepts, another program's parser",
}


def _exempt_values(tree: ast.Module, module: str) -> set[int]:
    """The ids of every node inside the value of an assignment ``OTHER_TABLES`` names."""
    exempt: set[int] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if node_value := getattr(node, "value", None):
            if any(isinstance(t, ast.Name) and (module, t.id) in OTHER_TABLES for t in targets):
                exempt.update(id(inner) for inner in ast.walk(node_value))
    return exempt


def algorithm_sets(source: str, module: str = "") -> list[tuple[int, list[str]]]:
    """(line, names) of every tuple, list or set literal holding two or more algorithm names."""
    tree = ast.parse(source)
    exempt = _exempt_values(tree, module)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and id(node) not in exempt:
            names = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in BY_NAME]
            if len(names) >= 2:
                found.append((node.lineno, names))
    return found


# The release itself, not a longer one it begins (0.5.231, 0.5.23.post1, 0.5.23rc1).
NEWEST_AS_A_WORD = re.compile(rf"(?<![\d.]){re.escape(NEWEST_KNOWN_SGLANG)}(?!\d|\.\d|\.post|rc)")


def newest_release_spellings(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string that is, or names a file of, the newest release: text with no
    space that holds it as a whole version. Docstrings, the ``sglang_version=`` of an example (a
    release the example is pinned to, not the newest), a rule's ``sglang_versions=`` window and the
    release of a ``Change(...)`` (a boundary read in the code: ">=0.5.23" stays true when a newer
    release is added) are not spellings of the constant."""
    tree = ast.parse(source)
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            skipped.add(id(body[0].value))
        if isinstance(node, ast.keyword) and node.arg in ("sglang_version", "sglang_versions"):
            skipped.add(id(node.value))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Change" and node.args:
            skipped.add(id(node.args[0]))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped
        and not re.search(r"\s", node.value) and NEWEST_AS_A_WORD.search(node.value)
    ]


def _package_modules() -> list[tuple[str, str]]:
    return [
        (path.relative_to(REPO).as_posix(), path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
        if FACTS not in path.parents
    ]


def test_no_literal_algorithm_set_outside_the_table() -> None:
    found = {module: sets for module, source in _package_modules() if (sets := algorithm_sets(source, module))}
    assert not found, f"algorithm sets outside specguard/sglang_facts/algorithms.py (make them a column): {found}"


def test_no_second_spelling_of_the_newest_release() -> None:
    found = {module: hits for module, source in _package_modules() if (hits := newest_release_spellings(source))}
    assert not found, f"the newest release written outside sglang_facts (use NEWEST_KNOWN_SGLANG): {found}"


def test_the_exempt_tables_exist() -> None:
    """A renamed or removed table must leave OTHER_TABLES, or it would exempt nothing forever."""
    for module, name in OTHER_TABLES:
        tree = ast.parse((REPO / module).read_text(encoding="utf-8"))
        assigned = {t.id for node in tree.body if isinstance(node, ast.Assign | ast.AnnAssign)
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}
        assert name in assigned, (module, name)


def test_the_scanners_see_what_they_look_for() -> None:
    """Neither scan is vacuous: each finds its literal in every form, and leaves what it should."""
    probe = (
        'A = ("EAGLE", "EAGLE3")\n'
        'B = frozenset({"NGRAM", "DFLASH", "x"})\n'
        'if algo in ["STANDALONE", "EAGLE"]:\n    pass\n'
        'C = ("EAGLE",)\n'
        'D = ("eagle", "eagle3")\n'
    )
    assert algorithm_sets(probe) == [(1, ["EAGLE", "EAGLE3"]), (2, ["NGRAM", "DFLASH"]), (3, ["STANDALONE", "EAGLE"])]
    assert algorithm_sets('SUPPORTED_ALGORITHMS = frozenset({"EAGLE", "NGRAM"})\n', "specguard/runtime/flags.py") == []
    newest = NEWEST_KNOWN_SGLANG
    probe = (
        f'"""Read in sglang {newest}."""\n'
        f'VERSION = "{newest}"\n'
        f'PATH = "sglang-{newest}-flags.json"\n'
        f'WHY = "sglang {newest}: arg_groups/speculative_hook.py:1"\n'
        f'OLDER = "{newest}1"\n'
        f'PATCH = "{newest}.post1"\n'
        f'EXAMPLE = Example(argv=(), sglang_version="{newest}")\n'
        f'def f(version="{newest}"):\n    """Since {newest}."""\n'
        f'RULE = Rule(sglang_versions=">={newest}")\n'
        f'BOUNDARY = Change("{newest}", "read there")\n'
    )
    assert newest_release_spellings(probe) == [(2, newest), (3, f"sglang-{newest}-flags.json"), (8, newest)]


def test_the_columns_give_sglang_s_own_sets() -> None:
    """Each set a rule or the resolution took from the table, as the release's source spells it
    (PROPERTY_SOURCES), written out here so that a changed row shows up as a changed set."""
    assert algorithms.SEPARATE_DRAFT_ALGORITHMS == {"EAGLE3", "STANDALONE", "DFLASH"}
    assert algorithms.MTP_DRAFT_SPELLINGS == {"EAGLE", "NEXTN"}
    assert algorithms.DP_ATTENTION_REFUSED_ALGORITHMS == {"STANDALONE", "NGRAM"}
    assert algorithms.DP_ATTENTION_CONDITIONAL_ALGORITHMS == {"DFLASH"}
    assert algorithms.WATERMARK_ALGORITHMS == {"NGRAM", "EAGLE", "EAGLE3"}
    assert algorithms.BLOCK_VERIFICATION_ALGORITHMS == {"EAGLE", "EAGLE3", "DFLASH", "DSPARK"}
    assert algorithms.DRAFT_WINDOW_ALGORITHMS == {"EAGLE", "EAGLE3", "DFLASH"}
    assert algorithms.ADAPTIVE_ALGORITHMS == {"EAGLE", "EAGLE3"}
    assert set(algorithms.LORA_ALGORITHMS) == {"NGRAM", "EAGLE", "EAGLE3", "DFLASH", "DSPARK"}
    assert algorithms.MAX_RUNNING_REQUESTS_RESET_SPELLINGS == set(algorithms.BY_NAME) - {"UNO"}


def test_an_alias_has_every_property_of_its_target() -> None:
    own = {"name", "documented", "alias_of"}
    for row in algorithms.ALGORITHMS:
        if row.alias_of is not None:
            target = algorithms.BY_NAME[row.alias_of]
            differing = [f for f in algorithms.PROPERTY_SOURCES if f not in own and getattr(row, f) != getattr(target, f)]
            assert differing == [], (row.name, differing)


def test_the_package_version_is_written_once() -> None:
    # specguard.__version__ is the one place: pyproject.toml reads it (setuptools' dynamic attr).
    import importlib.metadata
    import tomllib

    import specguard

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "specguard.__version__"}
    assert importlib.metadata.version("specguard") == specguard.__version__
