#!/usr/bin/env python3
"""How much of SGLang's speculative path the release ledger has reviewed, pair by pair.

Reads ``ledger/sglang/<old>..<new>.yaml`` (written by ``scripts/extract_sglang_units.py``,
reviewed by hand) and prints, per release pair and in total: the changed lines in the scope,
the behavioural units, how many are reviewed, how many became or extended a rule, how many need
a rule not yet written, how many no launch-time check can see, and how many change no
behaviour. The last line is ``N units, N reviewed, N became or extended a rule``.

A reviewed unit states ``change`` (what changed), ``outcome`` (one of ``OUTCOMES``) and
``reason`` (a sentence a reviewer can verify); ``rule`` names the rule's code when the outcome
is ``rule``; ``condition`` (in launch terms: flags, env vars, config.json facts, GPU, release)
and ``window`` (the releases it is true in) are required for ``rule`` and ``rule needed``; ``pr``
is the pull request where one was found. ``--check`` exits 1 when the ledger is inconsistent
(see ``problems``).

    python scripts/ledger_figures.py
    python scripts/ledger_figures.py --check
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
LEDGER = ROOT / "ledger" / "sglang"
# sglang-jax has no releases to compare: its ledger has a file per commit (extract_sgl_jax_units.py).
JAX_LEDGER = ROOT / "ledger" / "sgl-jax"
HISTORY = ROOT / "specguard" / "data" / "sglang-history.json"
OUTCOMES = ("rule", "rule needed", "not checkable", "no behaviour change")
KINDS = (
    "guard-added", "guard-removed", "guard-changed", "default-changed", "auto-choice-changed", "env-default-changed",
    "support-changed", "file-added", "file-removed", "class-added", "class-removed", "function-added", "function-removed",
    "body-changed",
)  # fmt: skip


@dataclass(frozen=True)
class PairFigures:
    pair: str
    changed_lines: int
    units: int
    reviewed: int
    rule: int
    rule_needed: int
    not_checkable: int
    no_change: int


def release_pairs() -> list[str]:
    """Consecutive pairs of the releases specguard knows (the shipped flag history's list)."""
    releases = json.loads(HISTORY.read_text(encoding="utf-8"))["releases"]
    return [f"{old}..{new}" for old, new in itertools.pairwise(releases)]


def load(ledger: Path = LEDGER) -> dict[str, dict]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return {path.name.removesuffix(".yaml"): yaml.load(path.read_text(encoding="utf-8"), Loader=loader) for path in sorted(ledger.glob("*.yaml"))}


def kind_of(unit_id: str) -> str:
    """A unit id is ``pair|file|function|kind``, then ``|key`` where needed."""
    parts = unit_id.split("|")
    return parts[3] if len(parts) >= 4 else ""


def unit_problems(unit: dict, rule_codes: frozenset[str]) -> list[str]:
    """What is wrong with one unit's review, each naming the unit."""
    where = unit.get("id", "?")
    problems = []
    if kind_of(where) not in KINDS:
        problems.append(f"{where}: unknown kind {kind_of(where)!r}")
    if not unit.get("reviewed"):
        if unit.get("outcome") is not None:
            problems.append(f"{where}: an outcome without reviewed: true")
        return problems
    outcome = unit.get("outcome")
    if outcome not in OUTCOMES:
        return [*problems, f"{where}: outcome {outcome!r} is not one of {', '.join(OUTCOMES)}"]
    for name in ("change", "reason"):
        if not unit.get(name):
            problems.append(f"{where}: reviewed without a {name}")
    if outcome == "rule" and unit.get("rule") not in rule_codes:
        problems.append(f"{where}: names rule {unit.get('rule')!r}, which specguard does not have")
    if outcome in {"rule", "rule needed"}:
        problems += [f"{where}: {outcome} without a {name}" for name in ("condition", "window") if not unit.get(name)]
    return problems


def problems(documents: dict[str, dict], pairs: list[str], rule_codes: frozenset[str]) -> list[str]:
    """Every inconsistency: a pair missing or unknown, a file whose pair is not its name, an id
    not of its file's pair, a duplicate id, an unknown kind, an incomplete review."""
    found = [f"{pair}: no ledger file" for pair in pairs if pair not in documents]
    found += [f"{name}: not a pair of consecutive releases" for name in documents if name not in pairs]
    for name, document in documents.items():
        if document.get("pair") != name:
            found.append(f"{name}: the file says pair {document.get('pair')!r}")
        found += document_problems(name, document, rule_codes)
    return found


def jax_problems(documents: dict[str, dict], rule_codes: frozenset[str]) -> list[str]:
    """The same for sglang-jax's ledger, whose files are named ``<date>-<commit>`` by their commit."""
    found = []
    for name, document in documents.items():
        commit, date = str(document.get("commit", "")), str(document.get("date", ""))
        if name != f"{date}-{commit[:8]}":
            found.append(f"{name}: the file says commit {commit[:8]!r} of {date!r}")
        found += document_problems(name, document, rule_codes)
    return found


def document_problems(name: str, document: dict, rule_codes: frozenset[str]) -> list[str]:
    """One file's: no line count, an id not of its pair, a duplicate id, each unit's own."""
    found = [] if isinstance(document.get("changed_lines"), int) else [f"{name}: no changed_lines count"]
    seen: set[str] = set()
    for unit in document.get("units", []):
        unit_id = unit.get("id", "")
        if not unit_id.startswith(f"{document.get('pair')}|"):
            found.append(f"{unit_id}: the id is not of the pair {document.get('pair')}")
        if unit_id in seen:
            found.append(f"{unit_id}: listed twice")
        seen.add(unit_id)
        found += unit_problems(unit, rule_codes)
    return found


def figures(documents: dict[str, dict], pairs: list[str]) -> list[PairFigures]:
    rows = []
    for pair in pairs:
        units = documents.get(pair, {}).get("units", [])
        reviewed = [u for u in units if u.get("reviewed")]

        def count(outcome: str, reviewed: list[dict] = reviewed) -> int:
            return sum(1 for u in reviewed if u.get("outcome") == outcome)

        rows.append(PairFigures(pair, documents.get(pair, {}).get("changed_lines", 0), len(units), len(reviewed), count("rule"), count("rule needed"), count("not checkable"), count("no behaviour change")))
    return rows


def render(rows: list[PairFigures], first_column: str = "release pair") -> str:
    header = (first_column, "changed lines", "units", "reviewed", "rule", "rule needed", "not checkable", "no behaviour change")
    total = PairFigures("total", *(sum(getattr(r, name) for r in rows) for name in ("changed_lines", "units", "reviewed", "rule", "rule_needed", "not_checkable", "no_change")))
    table = [header] + [(r.pair, *(str(v) for v in (r.changed_lines, r.units, r.reviewed, r.rule, r.rule_needed, r.not_checkable, r.no_change))) for r in [*rows, total]]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) if i == 0 else cell.rjust(width) for i, (cell, width) in enumerate(zip(row, widths))) for row in table]
    lines.append(f"{total.units} units, {total.reviewed} reviewed, {total.rule} became or extended a rule")
    return "\n".join(lines)


def rule_codes() -> frozenset[str]:
    sys.path.insert(0, str(ROOT))
    from specguard.rules import RULES_BY_CODE

    return frozenset(RULES_BY_CODE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ledger", type=Path, default=LEDGER)
    parser.add_argument("--jax-ledger", type=Path, default=JAX_LEDGER)
    parser.add_argument("--check", action="store_true", help="exit 1 when the ledger is inconsistent, listing why")
    args = parser.parse_args(argv)
    documents, pairs = load(args.ledger), release_pairs()
    jax = load(args.jax_ledger)
    if args.check:
        codes = rule_codes()
        found = problems(documents, pairs, codes) + jax_problems(jax, codes)
        print("\n".join(found) if found else "the ledger is consistent")
        return 1 if found else 0
    sglang_rows, jax_rows = figures(documents, pairs), figures(jax, sorted(jax))
    print(render(sglang_rows).rsplit("\n", 1)[0])
    print()
    print(render(jax_rows, "sgl-jax commit").rsplit("\n", 1)[0])
    # The last line: both projects together.
    print(render([*sglang_rows, *jax_rows]).splitlines()[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
