"""slime's own launch flags at each slime commit and release specguard knows.

The data (``specguard/data/slime-flags.json``) is written by ``scripts/extract_slime_flags.py``
from slime's git history: the ``add_argument`` calls of ``slime/utils/arguments.py`` and the slime
modules it imports, at every commit of ``slime-sglang-pins.json``, stored as the distinct flag sets
(each a delta from the one before) with the commits that have them. It is read lazily, the first
time a slime launch is checked.

Pure functions over that data; the only I/O is reading the shipped files.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from specguard.records import Record
from specguard.refs import is_commit_prefix, same_commit

FLAGS_FILE = Path(__file__).with_name("data") / "slime-flags.json"
PINS_FILE = FLAGS_FILE.with_name("slime-sglang-pins.json")


class SlimeFlags(Record):
    """The flags slime's own parser registers at one commit."""

    commit: str  # first 9 hex digits
    named: str  # how the launch named it: "v0.3.1", "474861aaf", or "newest known (624b824a8)"
    flags: frozenset[str]
    # Flags slime takes from outside its code by prefix (sglang_router's --router-*): not listed.
    prefixes: tuple[str, ...]
    # slime's call of Megatron's parse_args(ignore_unknown_args=True) (file:line); None where
    # Megatron's parser still stopped on an unknown flag.
    ignores_unknown: str | None
    # SGLang server arguments slime switches on itself for every engine, whatever the launch
    # says, each with the file:line that sets it (enable_draft_weights_cpu_backup since 0df48a2c).
    engine_sets: dict[str, str]


@cache
def _data() -> dict:
    return json.loads(FLAGS_FILE.read_text(encoding="utf-8"))


@cache
def _tags() -> dict[str, str]:
    """slime's release tags and their commits: the pins file's table, not copied here."""
    return dict(json.loads(PINS_FILE.read_text(encoding="utf-8"))["tags"])


@cache
def _by_commit() -> dict[str, int]:
    return {commit: index for index, record in enumerate(_data()["records"]) for commit in record["commits"]}


@cache
def _flags_of(index: int) -> frozenset[str]:
    flags: set[str] = set()
    for record in _data()["records"][: index + 1]:
        flags = (flags - set(record["removed"])) | set(record["added"])
    return frozenset(flags)


def _record(commit: str, named: str) -> SlimeFlags:
    index = _by_commit()[commit]
    record = _data()["records"][index]
    return SlimeFlags(
        commit=commit, named=named, flags=_flags_of(index), prefixes=tuple(record["prefixes"]),
        ignores_unknown=record["ignores_unknown"], engine_sets=dict(record["engine_sets"]),
    )


def newest_slime_flags() -> SlimeFlags:
    head = _data()["head"]
    return _record(head, f"newest known ({head})")


def slime_flags(ref: str) -> SlimeFlags | None:
    """slime's flags at a release (``v0.3.1`` or ``0.3.1``) or commit (7 or more hex digits);
    None when specguard does not know it, or an abbreviation names commits with different flags."""
    ref = ref.strip()
    commit = _tags().get(ref.removeprefix("v"))
    if commit is not None and commit in _by_commit():
        return _record(commit, f"v{ref.removeprefix('v')}")
    if not is_commit_prefix(ref):
        return None
    found = [c for c in _by_commit() if same_commit(ref, c)]
    if not found or len({_by_commit()[c] for c in found}) != 1:
        return None
    return _record(found[0], ref)
