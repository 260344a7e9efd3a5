"""specguard/frozen.py: the records every model is built on."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

import pytest

from specguard.frozen import (
    Field,
    Frozen,
    FrozenInstanceError,
    computed_field,
    field_names,
    fields,
)


class Colour(StrEnum):
    red = "red"
    blue = "blue"


class Inner(Frozen):
    size: float
    colour: Colour = Colour.red


class Outer(Frozen):
    """A record with every kind of field the models use."""

    name: str
    parts: tuple[Inner, ...] = ()
    tags: tuple[str, ...] = Field(default_factory=tuple)
    notes: list[str] = Field(default_factory=list)
    inner: Inner | None = None
    secret: str | None = Field(default=None, exclude=True, description="kept out of dumps")
    registry: ClassVar[dict[str, int]] = {}

    @computed_field
    @property
    def part_count(self) -> int:
        return len(self.parts)


class Child(Outer):
    name: str = "child"  # a redeclared field keeps its place
    extra: int = 0


def test_fields_in_declaration_order_without_classvars() -> None:
    assert field_names(Outer) == ("name", "parts", "tags", "notes", "inner", "secret")
    assert field_names(Child) == ("name", "parts", "tags", "notes", "inner", "secret", "extra")
    assert [f.description for f in fields(Outer) if f.name == "secret"] == ["kept out of dumps"]


def test_keyword_only_required_and_unknown_fields() -> None:
    with pytest.raises(TypeError):
        Outer("positional")  # type: ignore[misc]
    with pytest.raises(TypeError, match="name"):
        Outer()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="colour_typo"):
        Inner(size=1.0, colour_typo="red")  # type: ignore[call-arg]
    assert Child().name == "child"


def test_values_are_normalised_as_they_come_in() -> None:
    record = Outer(name="x", parts=[{"size": 2, "colour": "blue"}], tags=["a", "b"], inner={"size": 1})  # type: ignore[arg-type]
    assert record.parts == (Inner(size=2.0, colour=Colour.blue),)
    assert isinstance(record.parts[0].size, float) and record.parts[0].colour is Colour.blue
    assert record.tags == ("a", "b") and record.inner == Inner(size=1.0)


def test_factories_make_a_fresh_default_for_each_instance() -> None:
    first, second = Outer(name="a"), Outer(name="b")
    assert first.notes == [] and first.notes is not second.notes
    assert "notes" not in vars(Outer)  # a factory field leaves no class attribute to share


def test_frozen() -> None:
    record = Inner(size=1.0)
    with pytest.raises(FrozenInstanceError):
        record.size = 2.0  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del record.size  # type: ignore[misc]


def test_equality_hash_and_repr() -> None:
    assert Inner(size=1.0) == Inner(size=1) and hash(Inner(size=1.0)) == hash(Inner(size=1))
    assert Inner(size=1.0) != Inner(size=1.0, colour=Colour.blue)
    assert Inner(size=1.0) != Child()
    assert repr(Inner(size=1.0)) == "Inner(size=1.0, colour=<Colour.red: 'red'>)"


def test_model_copy_normalises_and_refuses_unknown_fields() -> None:
    record = Outer(name="x")
    copied = record.model_copy(update={"tags": ["t"], "inner": {"size": 3}})
    assert copied.tags == ("t",) and copied.inner == Inner(size=3.0) and record.tags == ()
    with pytest.raises(TypeError, match="nope"):
        record.model_copy(update={"nope": 1})


def test_model_dump() -> None:
    record = Outer(name="x", parts=(Inner(size=1.0),), secret="s")
    assert record.model_dump(mode="json") == {
        "name": "x", "parts": [{"size": 1.0, "colour": "red"}], "tags": [], "notes": [], "inner": None, "part_count": 1,
    }
    assert record.model_dump(exclude={"parts", "part_count"}, exclude_none=True) == {"name": "x", "tags": (), "notes": []}
