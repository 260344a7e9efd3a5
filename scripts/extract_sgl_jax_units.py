#!/usr/bin/env python3
"""Extract the behavioural units of sglang-jax's speculative launch path, commit by commit.

sglang-jax ships no release wheels to compare, so its history is read from a clone: every
first-parent commit of the given revision that changes a file in the scope, compared with the
state of the scope before it. The scope and the units are those of
``scripts/extract_sglang_units.py`` (its ``in_scope``, ``read_sources`` and ``diff_pair``; sgl-jax
keeps SGLang's layout under ``python/sgl_jax/srt/``), so a guard, a default, a support list or a
changed function body is found the same way in both projects.

Writes ``ledger/sgl-jax/<date>-<commit>.yaml`` (one file per commit, dated by its commit date;
existing reviews are kept, a new unit is added unreviewed, a unit no longer found is dropped).
``--check`` reports commits and units the ledger lacks or holds in excess, writing nothing.

    python scripts/extract_sgl_jax_units.py --repo /path/to/sglang-jax
    python scripts/extract_sgl_jax_units.py --repo /path/to/sglang-jax --check
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import extract_sglang_units as extractor

ROOT = Path(__file__).resolve().parent.parent
LEDGER = ROOT / "ledger" / "sgl-jax"
PACKAGE = "python/sgl_jax/"
JAX_FLAGS = ROOT / "specguard" / "data" / "sgl-jax-flags.json"
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Commit:
    sha: str
    date: str  # the commit date, YYYY-MM-DD
    subject: str
    paths: tuple[str, ...]  # in-scope paths it changes, relative to python/sgl_jax/

    @property
    def short(self) -> str:
        return self.sha[:8]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def in_scope(path: str) -> bool:
    return path.startswith(PACKAGE) and extractor.in_scope(path[len(PACKAGE) :]) is not None


def scope_commits(repo: Path, revision: str) -> list[Commit]:
    """First-parent commits, oldest first, that change a file in the scope."""
    log = git(repo, "log", "--first-parent", "--reverse", "--date=short", "--format=%x00%H%x1f%cd%x1f%s", "--name-only", revision, "--", PACKAGE + "srt")
    commits = []
    for record in log.split("\x00")[1:]:
        head, _, names = record.partition("\n")
        sha, date, subject = head.split("\x1f", 2)
        paths = tuple(n[len(PACKAGE) :] for n in names.split() if in_scope(n))
        if paths:
            commits.append(Commit(sha, date, subject, paths))
    return commits


def sources_at(repo: Path, revision: str) -> dict[str, str]:
    """The scope's modules at a revision (and environ.py, which declares the env defaults), keyed
    by path inside python/sgl_jax/, read in one ``git cat-file --batch``."""
    names = [n for n in git(repo, "ls-tree", "-r", "--name-only", revision, PACKAGE + "srt").splitlines() if n.endswith(".py")]
    wanted = [n for n in names if in_scope(n) or n == PACKAGE + "srt/environ.py"]
    batch = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"], input="".join(f"{revision}:{n}\n" for n in wanted).encode(), capture_output=True, check=True).stdout
    sources: dict[str, str] = {}
    offset = 0
    for name in wanted:
        header_end = batch.index(b"\n", offset)
        size = int(batch[offset:header_end].split()[2])
        sources[name[len(PACKAGE) :]] = batch[header_end + 1 : header_end + 1 + size].decode("utf-8", "replace")
        offset = header_end + 1 + size + 1
    # Every module's path, so a file entering the scope is told from a new file.
    return sources | {n[len(PACKAGE) :]: "" for n in names if n not in wanted}


def server_arg_names() -> frozenset[str]:
    """SGLang's server-arg names and sgl-jax's own flags' dests."""
    jax = json.loads(JAX_FLAGS.read_text(encoding="utf-8"))["flags"]
    return extractor.server_arg_names() | {flag.lstrip("-").replace("-", "_") for flag in jax}


def read_revision(repo: Path, revision: str, label: str, server_args: frozenset[str]) -> extractor.Release:
    sources = sources_at(repo, revision)
    release = extractor.read_sources(label, {k: v for k, v in sources.items() if v}, server_args)
    release.paths |= set(sources)
    return release


def parent_of(repo: Path, commit: Commit, server_args: frozenset[str]) -> extractor.Release:
    """The scope before the first commit: its parent's, or nothing for the repository's first commit."""
    parents = git(repo, "rev-list", "--parents", "-n", "1", commit.sha).split()[1:]
    if not parents:
        return extractor.Release("root", {}, set(), {})
    return read_revision(repo, parents[0], parents[0][:8], server_args)


def ledger_name(commit: Commit) -> str:
    return f"{commit.date}-{commit.short}"


def document(commit: Commit, parent: str, units: list[extractor.Unit], lines: int, existing: dict | None) -> dict:
    merged = extractor.merged(f"{parent}..{commit.short}", units, lines, existing)
    return {
        "pair": merged["pair"],
        "commit": commit.sha,
        "date": commit.date,
        "subject": commit.subject,
        "generated_by": "scripts/extract_sgl_jax_units.py",
        "changed_lines": lines,
        "units": merged["units"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True, help="a clone of sgl-project/sglang-jax")
    parser.add_argument("--revision", default="HEAD", help="the history's tip (default HEAD)")
    parser.add_argument("--check", action="store_true", help="report commits and units the ledger lacks or holds in excess, writing nothing")
    parser.add_argument("--ledger", type=Path, default=LEDGER)
    args = parser.parse_args(argv)
    if not (args.repo / ".git").exists() and not (args.repo / "HEAD").exists():
        print(f"extract_sgl_jax_units: {args.repo} is not a git repository: give a clone of sgl-project/sglang-jax with --repo", file=sys.stderr)
        return 2

    server_args = server_arg_names()
    commits = scope_commits(args.repo, args.revision)
    held = {p.name for p in args.ledger.glob("*.yaml")} if args.ledger.is_dir() else set()
    expected: set[str] = set()
    problems: list[str] = []
    total = 0
    previous: extractor.Release | None = None
    for commit in commits:
        old = previous or parent_of(args.repo, commit, server_args)
        new = read_revision(args.repo, commit.sha, commit.short, server_args)
        units, lines = extractor.diff_pair(old, new)
        previous = new
        if not units:
            continue
        total += len(units)
        expected.add(f"{ledger_name(commit)}.yaml")
        path = args.ledger / f"{ledger_name(commit)}.yaml"
        existing = yaml.load(path.read_text(encoding="utf-8"), Loader=LOADER) if path.exists() else None
        written = document(commit, old.version, units, lines, existing)
        if args.check:
            found, have = {u.id for u in units}, {u["id"] for u in (existing or {}).get("units", [])}
            if found != have:
                problems.append(f"{path.name}: {len(found - have)} units not in the ledger, {len(have - found)} ledger ids not found")
            continue
        args.ledger.mkdir(parents=True, exist_ok=True)
        path.write_text(extractor.dump(written), encoding="utf-8")
    problems += [f"{name}: a ledger file of no commit with units" for name in sorted(held - expected)]
    if args.check:
        print("\n".join(problems) if problems else "ledger holds every unit")
        return 1 if problems else 0
    for name in held - expected:
        (args.ledger / name).unlink()
    print(f"wrote {total} units of {len(commits)} commits to {args.ledger}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
