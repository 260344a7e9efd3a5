"""specguard/records.py: the records every model is built on (msgspec.Struct, frozen, keyword-only)."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

import pytest

from specguard.records import Record, as_dict, field, field_names, replace


class Colour(StrEnum):
    red = "red"
    blue = "blue"


class Inner(Record):
    size: float
    colour: Colour = Colour.red


class Outer(Record):
    """A record with every kind of field the models use."""

    name: str
    parts: tuple[Inner, ...] = ()
    tags: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)
    inner: Inner | None = None
    secret: str | None = None
    registry: ClassVar[dict[str, int]] = {}

    __dump_exclude__ = ("secret",)
    __dump_extra__ = ("part_count",)

    @property
    def part_count(self) -> int:
        return len(self.parts)


class Child(Outer):
    extra: int = 0


class Row(Record, kw_only=False):
    code: str
    count: int = 0


def test_fields_in_declaration_order_without_classvars() -> None:
    assert field_names(Outer) == ("name", "parts", "tags", "notes", "inner", "secret")
    assert field_names(Child) == ("name", "parts", "tags", "notes", "inner", "secret", "extra")


def test_keyword_only_required_and_unknown_fields() -> None:
    with pytest.raises(TypeError):
        Outer("positional")  # type: ignore[misc]
    with pytest.raises(TypeError, match="name"):
        Outer()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="colour_typo"):
        Inner(size=1.0, colour_typo="red")  # type: ignore[call-arg]
    assert Row("a", 2) == Row(code="a", count=2)  # a table row may be written by position


def test_a_required_field_may_follow_a_defaulted_one() -> None:
    # Keyword-only fields have no order constraint: declaring one after a default is no error.
    class Late(Record):
        first: int = 0
        second: str

    assert Late(second="x").first == 0


def test_the_constructor_converts_nothing() -> None:
    # Input from outside is typed where it is read; a record keeps what the code gave it.
    record = Outer(name="x", tags=["a"])  # type: ignore[arg-type]
    assert record.tags == ["a"] and isinstance(record.tags, list)
    assert Inner(size=1).size == 1 and isinstance(Inner(size=1).size, int)


def test_factories_make_a_fresh_default_for_each_instance() -> None:
    first, second = Outer(name="a"), Outer(name="b")
    assert first.notes == [] and first.notes is not second.notes


def test_frozen() -> None:
    record = Inner(size=1.0)
    with pytest.raises(AttributeError):
        record.size = 2.0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del record.size  # type: ignore[misc]


def test_equality_hash_and_repr() -> None:
    assert Inner(size=1.0) == Inner(size=1.0) and hash(Inner(size=1.0)) == hash(Inner(size=1.0))
    assert Inner(size=1.0) != Inner(size=1.0, colour=Colour.blue)
    assert Outer(name="child") != Child(name="child")  # another class is never equal
    assert repr(Inner(size=1.0)) == "Inner(size=1.0, colour=<Colour.red: 'red'>)"


def test_replace_keeps_the_rest_and_refuses_unknown_fields() -> None:
    record = Outer(name="x", tags=("a",))
    copied = replace(record, inner=Inner(size=3.0))
    assert copied.inner == Inner(size=3.0) and copied.tags == ("a",) and record.inner is None
    with pytest.raises(TypeError, match="nope"):
        replace(record, nope=1)


def test_as_dict() -> None:
    record = Outer(name="x", parts=(Inner(size=1.0),), secret="s")
    assert as_dict(record, json=True) == {
        "name": "x", "parts": [{"size": 1.0, "colour": "red"}], "tags": [], "notes": [], "inner": None, "part_count": 1,
    }
    assert as_dict(record, exclude={"parts", "part_count"}, exclude_none=True) == {"name": "x", "tags": (), "notes": []}
