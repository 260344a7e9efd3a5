#!/usr/bin/env python3
"""Extract slime's own launch flags at every slime commit specguard knows.

Reads a clone of github.com/THUDM/slime (a bare clone works) statically (``ast``; nothing of
slime is imported or run). At every commit of ``specguard/data/slime-sglang-pins.json``:

- flags: the ``--`` options of every ``*.add_argument(...)`` and ``reset_arg(parser, ...)`` call
  (and the ``--no-`` form of a ``BooleanOptionalAction``) in ``slime/utils/arguments.py`` (the
  parser ``train.py`` builds) and in every ``slime.*`` module that file imports and that itself
  calls ``add_argument`` (``sglang_utils/arguments.py``: ``--sglang-router-ip``,
  ``--prefill-num-servers``, ...). Its ``--sglang-*`` wrapper of SGLang's
  own ``ServerArgs.add_cli_args`` adds no literal flags and is read from SGLang's history instead.
- prefixes: ``RouterArgs.add_cli_args(parser, use_router_prefix=True)`` adds sglang_router's flags
  as ``--router-*``; they are not in slime's code, so only the prefix is recorded.
- ignores_unknown: where slime calls Megatron's ``parse_args(..., ignore_unknown_args=True)``
  (``megatron.training.arguments.parse_args``; file:line), the call that drops an unknown flag
  without a word; None where it does not (before 2026-02 slime let Megatron's parser stop on one).
- engine_sets: the SGLang server arguments slime switches on itself for every engine it starts,
  whatever the launch says: the ``"name": True`` entries of the keyword arguments
  ``slime/backends/sglang_utils/sglang_engine.py`` builds (``"enable_draft_weights_cpu_backup":
  True`` since 0df48a2c, #1288), with the file:line of each.

Writes ``specguard/data/slime-flags.json``: the distinct (flags, prefixes, ignores_unknown,
engine_sets) records, each with the commits (first 9 hex digits) that have it and its flags as a delta from
the record before it, in the order slime's history (``--topo-order``) first reaches them. ``--check`` regenerates and compares.

    python scripts/extract_slime_flags.py /path/to/slime            # write the data
    python scripts/extract_slime_flags.py /path/to/slime --check
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "specguard" / "data" / "slime-sglang-pins.json"
OUT = ROOT / "specguard" / "data" / "slime-flags.json"
ENTRY = "slime/utils/arguments.py"
ENGINE = "slime/backends/sglang_utils/sglang_engine.py"
PREFIX = 9


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


Module = tuple[frozenset[str], frozenset[str], int | None, tuple[str, ...]]  # read_module, and its imports


class Files:
    """Modules at commits, read through one ``git cat-file --batch``; each distinct file (blob) is
    parsed and read once, as most commits leave the argument modules alone."""

    def __init__(self, repo: Path) -> None:
        self._git = subprocess.Popen(["git", "-C", str(repo), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._read: dict[bytes, Module] = {}
        self._true_keys: dict[bytes, dict[str, int]] = {}

    def module(self, commit: str, path: str) -> Module | None:
        assert self._git.stdin is not None and self._git.stdout is not None
        self._git.stdin.write(f"{commit}:{path}\n".encode())
        self._git.stdin.flush()
        header = self._git.stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            return None  # "<name> missing": no such file at that commit
        body = self._git.stdout.read(int(header[2]) + 1)[:-1]
        if header[0] not in self._read:
            tree = ast.parse(body.decode("utf-8"))
            flags, prefixes, ignore_line = read_module(tree)
            self._read[header[0]] = (frozenset(flags), frozenset(prefixes), ignore_line, tuple(_imported_files(tree)))
        return self._read[header[0]]

    def true_keys(self, commit: str, path: str) -> dict[str, int]:
        """The ``"name": True`` entries of the dict literals in ``path`` at ``commit``, with their lines."""
        assert self._git.stdin is not None and self._git.stdout is not None
        self._git.stdin.write(f"{commit}:{path}\n".encode())
        self._git.stdin.flush()
        header = self._git.stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            return {}
        body = self._git.stdout.read(int(header[2]) + 1)[:-1]
        if header[0] not in self._true_keys:
            self._true_keys[header[0]] = read_true_keys(ast.parse(body.decode("utf-8")))
        return self._true_keys[header[0]]

    def close(self) -> None:
        if self._git.stdin is not None:
            self._git.stdin.close()
        self._git.wait()


def _options(call: ast.Call) -> list[str]:
    """The call's ``--`` option strings; ``BooleanOptionalAction`` adds each one's ``--no-`` form."""
    options = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--")]
    for keyword in call.keywords:
        action = keyword.value
        name = action.attr if isinstance(action, ast.Attribute) else action.id if isinstance(action, ast.Name) else None
        if keyword.arg == "action" and name == "BooleanOptionalAction":
            options += ["--no-" + option[2:] for option in options]
    return options


def _is_true(call: ast.Call, keyword: str) -> bool:
    return any(k.arg == keyword and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords)


def read_module(tree: ast.Module) -> tuple[set[str], set[str], int | None]:
    """(flags, flag prefixes added from outside slime, line of ignore_unknown_args=True) of one file."""
    flags: set[str] = set()
    prefixes: set[str] = set()
    ignore_line = None
    # Only Megatron's own parse_args drops what it does not know; slime's FSDP parser (2025-26)
    # took the same keyword but is not the parser of a Megatron launch.
    megatron_parse = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "megatron.training.arguments"
        for alias in node.names
        if alias.name == "parse_args"
    }
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name in ("add_argument", "reset_arg"):
            flags.update(_options(node))
        elif name == "add_cli_args" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "RouterArgs" and _is_true(node, "use_router_prefix"):
                prefixes.add("--router-")
        if isinstance(func, ast.Name) and func.id in megatron_parse and _is_true(node, "ignore_unknown_args") and ignore_line is None:
            ignore_line = node.lineno
    return flags, prefixes, ignore_line


def read_true_keys(tree: ast.Module) -> dict[str, int]:
    """The engine's server arguments: the dict literal that names ``model_path`` (others in the
    file are request bodies, such as ``{"abort_all": True}``)."""
    keys: dict[str, int] = {}
    for node in ast.walk(tree):
        names = {key.value for key in node.keys if isinstance(key, ast.Constant)} if isinstance(node, ast.Dict) else set()
        if "model_path" in names:
            assert isinstance(node, ast.Dict)
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Constant) and value.value is True:
                    keys.setdefault(key.value, key.lineno)
    return keys


def _imported_files(tree: ast.Module) -> list[str]:
    """The ``slime.*`` modules a file imports (at top level or inside a function), as paths."""
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("slime.")}
    return sorted(module.replace(".", "/") + ".py" for module in modules)


def read_commit(files: Files, commit: str) -> dict | None:
    entry = files.module(commit, ENTRY)
    if entry is None:
        return None
    flags, prefixes, ignore_line, imported = set(entry[0]), set(entry[1]), entry[2], entry[3]
    read = [ENTRY]
    ignores = f"{ENTRY}:{ignore_line}" if ignore_line else None
    for path in imported:
        module = files.module(commit, path) or files.module(commit, path[: -len(".py")] + "/__init__.py")
        if module is None:
            continue
        more, more_prefixes, line, _ = module
        if line and ignores is None:
            ignores = f"{path}:{line}"
        if more or more_prefixes:
            read.append(path)
            flags |= more
            prefixes |= more_prefixes
    sets = {key: f"{ENGINE}:{line}" for key, line in sorted(files.true_keys(commit, ENGINE).items())}
    return {"files": read, "flags": sorted(flags), "prefixes": sorted(prefixes), "ignores_unknown": ignores, "engine_sets": sets}


def extract(repo: Path, ref: str) -> dict:
    known = json.loads(PINS.read_text(encoding="utf-8"))["commits"]
    order = [c[:PREFIX] for c in git(repo, "rev-list", "--topo-order", "--reverse", ref).split()]
    commits = [c for c in order if c in known] + sorted(set(known) - set(order))
    records: list[dict] = []
    index: dict[str, int] = {}
    files = Files(repo)
    for commit in commits:
        found = read_commit(files, commit)
        if found is None:
            continue
        key = json.dumps(found, sort_keys=True)
        if key not in index:
            index[key] = len(records)
            records.append({**found, "commits": []})
        records[index[key]]["commits"].append(commit)
    files.close()
    head = git(repo, "log", "-1", "--format=%H %cs", ref).strip()
    if head[:PREFIX] not in known:
        # The newest flags specguard knows must be those of a commit --slime-version accepts.
        raise SystemExit(f"{ref} ({head[:PREFIX]}) is not in {PINS.name}: run scripts/extract_slime_pins.py with --ref {ref} first")
    rows = []
    before: set[str] = set()
    for record in records:
        flags = set(record["flags"])
        rows.append({
            "files": record["files"],
            "ignores_unknown": record["ignores_unknown"],
            "engine_sets": record["engine_sets"],
            "prefixes": record["prefixes"],
            "added": sorted(flags - before),
            "removed": sorted(before - flags),
            "commits": sorted(record["commits"]),
        })
        before = flags
    return {
        "source": f"github.com/THUDM/slime {ENTRY} and the slime modules it imports, at every commit of "
        f"slime-sglang-pins.json (read at {head[:PREFIX]}{head[40:]})",
        "repo": "github.com/THUDM/slime",
        "head": head[:PREFIX],
        "records": rows,
    }


def render(data: dict) -> str:
    """One record a line: a new slime commit changes one line, or adds one."""
    head = {key: value for key, value in data.items() if key != "records"}
    lines = [json.dumps(record, separators=(",", ":")) for record in data["records"]]
    return json.dumps(head, indent=0)[:-2] + ',\n"records": [\n' + ",\n".join(lines) + "\n]\n}\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path, help="a clone of github.com/THUDM/slime")
    parser.add_argument("--ref", default="HEAD", help="the newest commit read (its flags are the newest known)")
    parser.add_argument("--check", action="store_true", help="compare with the shipped data instead of writing")
    options = parser.parse_args()
    data = extract(options.repo, options.ref)
    text = render(data)
    if options.check:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        print("slime flags: " + ("identical" if same else "DIFFER from the shipped data"))
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(data['records'])} distinct flag sets over {sum(len(r['commits']) for r in data['records'])} commits")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
