"""``Record``: the base of specguard's data records, a ``msgspec.Struct`` (the record type SGLang
itself uses for its scheduler messages), frozen and keyword-only unless a class says otherwise.

Chosen by measurement (``benchmarks/bench_records.py``): a check defines about fifty record
classes and makes a few thousand instances. ``msgspec`` costs ~15 ms to import and builds a class
in ~0.05 ms; ``dataclasses`` builds each class in ~1 ms (compiling six functions), ~50 ms for the
check's records, over a fifth of its budget. The values a record holds are never converted in its
constructor: input from outside is typed where it enters (``config_values``/``facts`` for
config.json, ``spec.convert`` for flag values, pydantic for presets), so a record holds what the
code gave it, and the type checker sees every constructor call.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, TypeVar, dataclass_transform

import msgspec
from msgspec import (
    field,  # a field's default_factory (re-exported: records are declared with it)
)

__all__ = ["Record", "as_dict", "field", "field_names", "replace"]

R = TypeVar("R", bound="Record")


class _RecordMeta(msgspec.StructMeta):
    """Frozen and keyword-only by default; ``class Row(Record, kw_only=False)`` for the tables
    written one row per line."""

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **config: Any) -> Any:
        config.setdefault("kw_only", True)
        config.setdefault("frozen", True)
        return super().__new__(mcls, name, bases, namespace, **config)


# Tells type checkers what the metaclass does (msgspec's own stub declares no defaults).
@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(msgspec.field,))
class Record(msgspec.Struct, metaclass=_RecordMeta, frozen=True, kw_only=True):
    """A frozen, keyword-only record: equality, hashing and ``repr`` by its fields."""


def replace(record: R, **changes: Any) -> R:
    """A copy of ``record`` with ``changes``' fields replaced (an unknown field is a TypeError)."""
    return msgspec.structs.replace(record, **changes)


def field_names(record: type[Record]) -> tuple[str, ...]:
    return record.__struct_fields__


def as_dict(record: Record, *, json: bool = False, exclude: frozenset[str] | set[str] = frozenset(), exclude_none: bool = False) -> dict[str, Any]:
    """The record as a dict: fields in declaration order, nested records as dicts. ``json``: JSON
    types (enums as their values, tuples as lists, other objects such as a Version as strings).
    A class may name fields kept out of every dump (``__dump_exclude__``) and properties dumped
    after the fields (``__dump_extra__``)."""
    skipped = set(exclude) | set(getattr(type(record), "__dump_exclude__", ()))
    names = (*record.__struct_fields__, *getattr(type(record), "__dump_extra__", ()))
    dumped: dict[str, Any] = {}
    for name in names:
        if name in skipped:
            continue
        value = getattr(record, name)
        if value is None and exclude_none:
            continue
        dumped[name] = _dump(value, json, exclude_none)
    return dumped


def _dump(value: Any, json: bool, exclude_none: bool) -> Any:
    if isinstance(value, Record):
        return as_dict(value, json=json, exclude_none=exclude_none)
    if isinstance(value, Enum):
        return value.value if json else value
    if isinstance(value, (tuple, list)):
        items = [_dump(item, json, exclude_none) for item in value]
        return items if json or isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {key: _dump(item, json, exclude_none) for key, item in value.items()}
    if json and not isinstance(value, (str, int, float, bool, type(None))):
        return str(value)  # a Version or a Path
    return value
