"""Each SGLang release's ServerArgs field defaults, for reading a logged ServerArgs at its own release.

The data (``specguard/data/sglang-serverargs-defaults.json``) is written by
``scripts/extract_sglang_flags.py`` from the released wheels' dataclasses: for each field, the
spans of releases (indexes into its ``releases`` list) with each default. Only ``specguard
explain`` reads it, lazily; ``specguard check`` never loads it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from packaging.version import InvalidVersion, Version

from specguard.records import Record

DEFAULTS_FILE = Path(__file__).with_name("data") / "sglang-serverargs-defaults.json"


class FieldDefault(Record, kw_only=False):
    """A field's default in one release: a literal, or none specguard can compare a value with
    (computed at start-up, such as ``sys.maxsize``, or a required field such as ``model_path``)."""

    is_literal: bool
    value: Any = None


class _Defaults(Record, kw_only=False):
    releases: tuple[str, ...]
    versions: tuple[Version, ...]
    values: tuple[FieldDefault, ...]
    fields: dict[
        str, tuple[tuple[int, int, int], ...]
    ]  # field -> (first, last, values index)


@cache
def _data() -> _Defaults:
    data = json.loads(DEFAULTS_FILE.read_text(encoding="utf-8"))
    return _Defaults(
        releases=tuple(data["releases"]),
        versions=tuple(Version(release) for release in data["releases"]),
        values=tuple(
            FieldDefault("literal" in value, value.get("literal"))
            for value in data["values"]
        ),
        fields={
            name: tuple(tuple(row) for row in rows)
            for name, rows in data["fields"].items()
        },
    )


def _index(release: str) -> int | None:
    """The listed release whose fields ``release`` has: itself, else the newest before it (an
    unlisted .postN or rc); None before the first listed or for no version at all."""
    try:
        wanted = Version(release)
    except InvalidVersion:
        return None
    found = [index for index, known in enumerate(_data().versions) if known <= wanted]
    return found[-1] if found else None


@cache
def defaults_at(release: str) -> Mapping[str, FieldDefault] | None:
    """Release ``release``'s ServerArgs fields and their defaults; None where no listed release
    is it or precedes it."""
    index = _index(release)
    if index is None:
        return None
    data = _data()
    # Read-only: the mapping is cached, one for every caller.
    return MappingProxyType(
        {
            name: data.values[value]
            for name, rows in data.fields.items()
            for first, last, value in rows
            if first <= index <= last
        }
    )


@cache
def _field_sets() -> tuple[frozenset[str], ...]:
    data = _data()
    return tuple(
        frozenset(
            name
            for name, rows in data.fields.items()
            if any(first <= index <= last for first, last, _ in rows)
        )
        for index in range(len(data.releases))
    )


def releases_with_fields(names: Iterable[str]) -> tuple[str, ...]:
    """The releases whose ServerArgs has exactly these fields, oldest first: a whole logged repr
    came from one of them (empty for a part of one, or a field set no release had)."""
    logged = frozenset(names)
    return tuple(release for release, fields in zip(_data().releases, _field_sets(), strict=True) if fields == logged)


def release_of_fields(names: Iterable[str]) -> str | None:
    """The release a logged ServerArgs came from, by its field names: the newest whose ServerArgs
    has exactly these fields (a whole repr), else the newest that has every one of them (a part of
    one); None where no release has them all."""
    logged = frozenset(names)
    exact = releases_with_fields(logged)
    if exact:
        return exact[-1]
    holding = [index for index, fields in enumerate(_field_sets()) if logged <= fields]
    return _data().releases[holding[-1]] if holding else None
