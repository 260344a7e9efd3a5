"""The SGLang facts live in one place (specguard/sglang_facts), and each names a real release.

- No ``Version("<literal>")`` anywhere in ``specguard/`` outside ``sglang_facts`` (read with ``ast``).
- Every named ``Change`` (alone, in a per-architecture table or in a release ladder) is a release of
  the shipped history (``specguard/data/sglang-history.json``) and cites a source.
- Every bound of a rule's ``sglang_versions`` window is a known release.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from packaging.version import Version

from specguard.records import field_names
from specguard.rules import ALL_RULES
from specguard.rules.base import _clauses
from specguard.sglang_facts import algorithms, changes
from specguard.sglang_facts.changes import Change, as_of

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "specguard"
FACTS = PACKAGE / "sglang_facts"
RELEASES = frozenset(json.loads((PACKAGE / "data" / "sglang-history.json").read_text())["releases"])

VERSION_TEXT = re.compile(r"^\d+\.\d+(\.\d+)*((rc|\.post)\d+)?$")


def _version_literals(path: Path) -> list[tuple[int, str]]:
    """(line, literal) of every ``Version("...")`` / ``packaging.version.Version("...")`` call, and of
    every ``Version(NAME)`` whose NAME is a module-level string that reads as a release."""
    tree = ast.parse(path.read_text(), filename=str(path))
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        and VERSION_TEXT.match(node.value.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        first = node.args[0]
        if name != "Version":
            continue
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            found.append((node.lineno, first.value))
        elif isinstance(first, ast.Name) and first.id in constants:
            found.append((node.lineno, constants[first.id]))
    return found


def _literals_by_file() -> dict[str, list[tuple[int, str]]]:
    result = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if FACTS in path.parents:
            continue
        found = _version_literals(path)
        if found:
            result[path.relative_to(REPO).as_posix()] = found
    return result


def test_no_version_literal_outside_sglang_facts() -> None:
    found = _literals_by_file()
    assert not found, f"Version literals outside specguard/sglang_facts (name them in changes.py): {found}"


def test_the_scanner_sees_a_literal(tmp_path: Path) -> None:
    """The scan is not vacuous: it finds both spellings of the call, and skips a variable argument."""
    probe = tmp_path / "probe.py"
    probe.write_text('from packaging import version\nA = Version("0.5.3")\nB = version.Version("0.5.4")\nC = Version(x)\n'
                     'SINCE = "0.5.14"\nD = Version(SINCE)\n')
    assert _version_literals(probe) == [(2, "0.5.3"), (3, "0.5.4"), (6, "0.5.14")]


def _named_changes() -> dict[str, Change]:
    """Every Change in changes.py: module-level names, per-architecture dicts, and release ladders."""
    named: dict[str, Change] = {}
    for name, value in vars(changes).items():
        if isinstance(value, Change):
            named[name] = value
        elif isinstance(value, dict):
            named.update({f"{name}[{key}]": v for key, v in value.items() if isinstance(v, Change)})
        elif isinstance(value, tuple):
            for index, row in enumerate(value):
                if isinstance(row, tuple) and row and isinstance(row[0], Change):
                    named[f"{name}[{index}]"] = row[0]
    return named


def test_changes_are_found() -> None:
    named = _named_changes()
    assert "SPEC_V2_DEFAULT_ON" in named and "EAGLE_HOOKS[Gemma3ForCausalLM]" in named
    assert "DECODE_RADIX_CACHE_ALGORITHMS[0]" in named
    assert len(named) > 60


@pytest.mark.parametrize(("name", "change"), sorted(_named_changes().items()))
def test_change_is_a_release_with_a_source(name: str, change: Change) -> None:
    assert change.first_release in RELEASES, f"{name}: {change.first_release} is not an SGLang release"
    assert change.source.strip(), f"{name} has no source"
    assert change.release == Version(change.first_release)


def test_ladders_are_newest_first() -> None:
    """as_of reads a ladder top-down, so an older change above a newer one would shadow it."""
    for name, value in vars(changes).items():
        if isinstance(value, tuple) and value and all(isinstance(row, tuple) and isinstance(row[0], Change) for row in value):
            releases = [row[0].release for row in value]
            assert releases == sorted(releases, reverse=True), name


def test_as_of_picks_the_newest_change_present() -> None:
    ladder = ((Change("0.5.20", "b"), "new"), (Change("0.5.14", "a"), "old"))
    assert as_of(ladder, Version("0.5.13"), before="none") == "none"
    assert as_of(ladder, Version("0.5.14"), before="none") == "old"
    assert as_of(ladder, Version("0.5.19"), before="none") == "old"
    assert as_of(ladder, Version("0.5.23"), before="none") == "new"


@pytest.mark.parametrize("rule", [r for r in ALL_RULES if r.sglang_versions], ids=lambda r: r.code)
def test_rule_version_window_bounds_are_releases(rule) -> None:
    unknown = [str(bound) for _, bound in _clauses(rule.sglang_versions) if str(bound) not in RELEASES]
    assert not unknown, f"{rule.code} sglang_versions={rule.sglang_versions!r}: {unknown} are not SGLang releases"


# ---- the algorithm table ------------------------------------------------------------------------


def test_every_algorithm_property_has_a_source() -> None:
    fields = [name for name in field_names(algorithms.Algorithm) if name not in ("name", "documented")]
    assert sorted(fields) == sorted(algorithms.PROPERTY_SOURCES)
    assert all(source.strip() for source in algorithms.PROPERTY_SOURCES.values())


def test_algorithm_rows_are_what_the_parser_takes() -> None:
    from specguard.flags import FLAGS_BY_NAME

    choices = FLAGS_BY_NAME["--speculative-algorithm"].choices
    assert choices == tuple(row.name for row in algorithms.ALGORITHMS if row.documented) + algorithms.PASSED_THROUGH_ALGORITHMS
    assert set(choices) == set(algorithms.BY_NAME)


def test_an_alias_has_its_targets_properties() -> None:
    for row in algorithms.ALGORITHMS:
        if row.alias_of is not None:
            target = algorithms.BY_NAME[row.alias_of]
            assert (row.draft_checkpoint, row.eagle_worker, row.eagle_head, row.mixed_chunk) == (
                target.draft_checkpoint, target.eagle_worker, target.eagle_head, target.mixed_chunk), row.name


def test_derived_sets() -> None:
    """The sets the rules read, written out once here so a changed row shows up as a changed set."""
    assert algorithms.DRAFT_CHECKPOINT_ALGORITHMS == {"EAGLE", "EAGLE3", "STANDALONE", "DFLASH"}
    assert algorithms.EAGLE_WORKER_ALGORITHMS == {"EAGLE", "EAGLE3", "STANDALONE"}
    assert algorithms.EAGLE_HEAD_ALGORITHMS == {"EAGLE", "EAGLE3"}
    assert algorithms.MIXED_CHUNK_ALGORITHMS == {"EAGLE", "EAGLE3", "DFLASH", "DSPARK"}
    assert algorithms.MIXED_CHUNK_OFF_ALGORITHMS == {"STANDALONE", "NGRAM", "UNO", "FROZEN_KV_MTP"}
    assert algorithms.EAGLE_WORKER_SPELLINGS == {"EAGLE", "EAGLE3", "NEXTN", "STANDALONE"}
