#!/usr/bin/env python3
"""Review the release ledger one pair at a time: list what is left, read a unit's code on both
sides, and write reviews back without hand-editing the generated YAML.

    python scripts/ledger_review.py todo 0.5.22..0.5.23 [--kind guard-added] [--limit 20]
    python scripts/ledger_review.py show 0.5.22..0.5.23 'srt/speculative/eagle_worker.py|EAGLEWorker.forward'
    python scripts/ledger_review.py apply 0.5.22..0.5.23 reviews.yaml
    python scripts/ledger_review.py --ledger ledger/sgl-jax --repo SGLANG_JAX_CLONE show 2026-07-28-4406938a UNIT

sglang-jax's ledger has one file per commit (``scripts/extract_sgl_jax_units.py``): give its
folder with ``--ledger`` and the file's name (``<date>-<commit>``) where a pair is asked for;
``show`` then reads the two commits from a clone given with ``--repo``.

``show`` takes a unit id or any unique part of one and prints the unit with a unified diff of its
function (or file) between the pair's releases, read from the extractor's per-release cache (the
wheels are read, and cached, when it is missing; ``--wheels`` as for the extractor).

``apply`` reads a YAML list of reviews. Each review names its unit by ``id`` (or several units by
``ids``, for one change that the extractor split into several units) and gives ``change``,
``outcome`` (rule, rule needed, not checkable, no behaviour change), ``reason``, and where the
outcome asks for them ``condition``, ``window`` and ``rule``; ``pr`` where one was found. Every
review is checked as ``ledger_figures.py --check`` checks it before anything is written, and an id
the pair does not hold is refused, so a batch lands whole or not at all.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import extract_sglang_units as extractor
import ledger_figures

FIELDS = tuple(name for name in extractor.REVIEW_FIELDS if name != "reviewed")
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_pair(pair: str, ledger: Path) -> tuple[Path, dict]:
    path = extractor.ledger_path(pair, ledger)
    if not path.is_file():
        raise SystemExit(f"ledger_review: no ledger file {path}: name a pair as OLD..NEW (ls {ledger})")
    return path, yaml.load(path.read_text(encoding="utf-8"), Loader=LOADER)


def find_unit(document: dict, needle: str) -> dict:
    exact = [u for u in document["units"] if u["id"] == needle]
    if exact:
        return exact[0]
    found = [u for u in document["units"] if needle in u["id"]]
    if len(found) != 1:
        names = "\n  ".join(u["id"] for u in found[:10])
        raise SystemExit(f"ledger_review: {len(found)} units match {needle!r}" + (f":\n  {names}" if found else ""))
    return found[0]


def todo(document: dict, kind: str | None, limit: int | None) -> list[str]:
    rows = [u for u in document["units"] if not u.get("reviewed") and (kind is None or ledger_figures.kind_of(u["id"]) == kind)]
    lines = [f"{u['id']}\n    {u.get('detail', '')}" for u in rows[:limit]]
    return [*lines, f"{len(rows)} unreviewed" + (f" {kind} units" if kind else " units")]


def _release(version: str, wheels: Path) -> extractor.Release:
    return extractor.read_release(version, extractor.download(version, wheels), wheels / "units-cache")


def _code(release: extractor.Release, file: str, function: str) -> list[str]:
    source = release.files.get(file)
    if source is None:
        return []
    if function in source.functions:
        return source.functions[function].lines
    if function in ("", "<module>", "-"):
        return source.lines
    # A class unit, or a function outside the scope: the file's own lines, from the definition on.
    name = function.split(".")[-1]
    definition = re.compile(rf"^\s*(?:class|def|async def) {re.escape(name)}\b")
    for number, line in enumerate(source.lines):
        if definition.match(line):
            indent = len(line) - len(line.lstrip())
            end = next((n for n in range(number + 1, len(source.lines)) if source.lines[n].strip() and len(source.lines[n]) - len(source.lines[n].lstrip()) <= indent), len(source.lines))
            return source.lines[number:end]
    return []  # not on this side: the unit added or removed it


def _first_line(release: extractor.Release, file: str, code: list[str]) -> int:
    """The file line (1-based) where this code starts; 0 when it is not found, or when the
    extractor kept only the file's speculative slices (their lines are not the file's)."""
    source = release.files.get(file)
    lines = source.lines if source is not None and source.whole else []
    return next((n + 1 for n, line in enumerate(lines) if code and line == code[0] and lines[n : n + len(code)] == code), 0)


def _jax_reader(repo: Path) -> Callable[[str], extractor.Release]:
    """sglang-jax's scope at a commit of its ledger (``root``: before the first commit)."""
    import extract_sgl_jax_units as jax

    server_args = jax.server_arg_names()
    return lambda label: extractor.Release(label, {}, set(), {}) if label == "root" else jax.read_revision(repo, label, label, server_args)


def show(unit: dict, pair: str, read: Callable[[str], extractor.Release], package: str, context: int) -> str:
    _, file, function, *_ = unit["id"].split("|")
    old_version, new_version = pair.split("..")
    labels, sides = [], []
    for version in (old_version, new_version):
        release = read(version)
        code = _code(release, file, function)
        start = _first_line(release, file, code)
        labels.append(f"{version}/{package}/{file} {function}" + (f" (from line {start}; hunk lines count from 1 there)" if start else ""))
        sides.append(code)
    diff = difflib.unified_diff(sides[0], sides[1], labels[0], labels[1], n=context, lineterm="")
    head = yaml.dump({k: v for k, v in unit.items()}, sort_keys=False, allow_unicode=True, width=120)
    return head + "\n" + "\n".join(line.rstrip("\n") for line in diff)


def reviewed_rows(reviews: object) -> list[tuple[str, dict]]:
    """(unit id, review fields) for each id a review names; a malformed review raises TypeError or ValueError."""
    if not isinstance(reviews, list):
        raise TypeError("the reviews file must be a YAML list of mappings")
    rows = []
    for number, review in enumerate(reviews, 1):
        if not isinstance(review, dict):
            raise TypeError(f"review {number}: not a mapping")
        unknown = set(review) - {"id", "ids", *FIELDS}
        if unknown:
            raise ValueError(f"review {number}: unknown field(s) {', '.join(sorted(unknown))}; allowed: id, ids, {', '.join(FIELDS)}")
        ids = [review["id"]] if "id" in review else review.get("ids") or []
        if not ids or not all(isinstance(i, str) for i in ids):
            raise ValueError(f"review {number}: names no unit (give id: or ids:)")
        fields = {name: review[name] for name in FIELDS if review.get(name) not in (None, "")}
        rows += [(unit_id, fields) for unit_id in ids]
    return rows


def apply(document: dict, reviews: object, rule_codes: frozenset[str]) -> tuple[int, list[str]]:
    """Write the reviews into the document; nothing is written when any review has a problem."""
    by_id = {u["id"]: u for u in document["units"]}
    problems: list[str] = []
    updated: dict[str, dict] = {}
    try:
        rows = reviewed_rows(reviews)
    except (TypeError, ValueError) as error:
        return 0, [str(error)]
    for unit_id, fields in rows:
        if unit_id not in by_id:
            problems.append(f"{unit_id}: not a unit of {document['pair']}")
            continue
        unit = {k: v for k, v in by_id[unit_id].items() if k in ("id", "detail")}
        unit["reviewed"] = True
        unit.update(fields)
        problems += ledger_figures.unit_problems(unit, rule_codes)
        updated[unit_id] = unit
    if problems:
        return 0, problems
    document["units"] = [updated.get(u["id"], u) for u in document["units"]]
    return len(updated), []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ledger", type=Path, default=ledger_figures.LEDGER)
    parser.add_argument("--repo", type=Path, help="for the sglang-jax ledger (--ledger ledger/sgl-jax): a clone of sgl-project/sglang-jax, which show reads")
    parser.add_argument("--wheels", type=Path, default=Path(tempfile.gettempdir()) / "sgl-wheels", help="wheel cache, as for extract_sglang_units.py")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("todo", help="the pair's unreviewed units")
    listing.add_argument("pair")
    listing.add_argument("--kind", choices=ledger_figures.KINDS)
    listing.add_argument("--limit", type=int)
    showing = commands.add_parser("show", help="a unit and its code's diff between the pair's releases")
    showing.add_argument("pair")
    showing.add_argument("unit", help="a unit id, or any unique part of one")
    showing.add_argument("--context", type=int, default=3, help="unchanged lines around each change (default 3)")
    applying = commands.add_parser("apply", help="write a YAML list of reviews into the pair's ledger file")
    applying.add_argument("pair")
    applying.add_argument("reviews", type=Path)
    args = parser.parse_args(argv)

    path, document = load_pair(args.pair, args.ledger)
    if args.command == "todo":
        print("\n".join(todo(document, args.kind, args.limit)))
        return 0
    if args.command == "show":
        if "commit" in document and args.repo is None:
            raise SystemExit(f"ledger_review: {path.name} is an sglang-jax commit: give a clone of sgl-project/sglang-jax with --repo")
        read = _jax_reader(args.repo) if "commit" in document else (lambda version: _release(version, args.wheels))
        print(show(find_unit(document, args.unit), document["pair"], read, "sgl_jax" if "commit" in document else "sglang", args.context))
        return 0
    try:
        reviews = yaml.load(args.reviews.read_text(encoding="utf-8"), Loader=LOADER)
    except (OSError, yaml.YAMLError) as error:
        print(f"ledger_review: cannot read {args.reviews}: {error}", file=sys.stderr)
        return 2
    count, problems = apply(document, reviews, ledger_figures.rule_codes())
    if problems:
        print("\n".join(f"ledger_review: {p}" for p in problems) + f"\nnothing written to {path}", file=sys.stderr)
        return 1
    # Written beside and renamed over, so a reader never sees half a file.
    partial = path.with_suffix(".yaml.partial")
    partial.write_text(extractor.dump(document), encoding="utf-8")
    os.replace(partial, path)
    left = sum(1 for u in document["units"] if not u.get("reviewed"))
    print(f"{count} units reviewed in {path.name}; {left} left")
    return 0


if __name__ == "__main__":
    sys.exit(main())
