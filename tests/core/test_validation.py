"""specguard/validation.py: untrusted mappings read into records, as pydantic's lax models read them."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from specguard.frozen import Field, Frozen
from specguard.validation import FieldError, SchemaError, read_record

Value = str | int | float | bool | list[str | int | float]


class Limits(Frozen):
    count: int | None = Field(default=None, ge=1, le=8)
    size: int | None = Field(default=None, gt=0)
    name: str | None = Field(default=None, min_length=1, max_length=4)
    items: list[str] = Field(default_factory=list, min_length=1, max_length=2)


class Inner(Frozen):
    kind: Literal["a", "b"]
    ratio: float = 1.0

    def check(self) -> None:
        if self.kind == "b" and self.ratio > 1:
            raise FieldError("ratio", "a 'b' keeps its ratio at most 1")


class Outer(Frozen):
    name: str
    inner: Inner | None = None
    values: dict[str, Value | None] = Field(default_factory=dict)
    flag: bool = False

    def check(self) -> None:
        if self.name == "bad":
            raise ValueError("not that name")


def _error(record: type[Frozen], data: Any) -> SchemaError:
    with pytest.raises(SchemaError) as caught:
        read_record(record, data)
    return caught.value


def test_keys_unknown_and_missing_are_named_with_their_place() -> None:
    unknown = _error(Outer, {"name": "x", "inner": {"kind": "a", "colour": 1}})
    assert (unknown.kind, unknown.where) == ("unknown", "inner.colour")
    missing = _error(Outer, {"inner": {"kind": "a"}})
    assert (missing.kind, missing.where) == ("missing", "name")


def test_records_nest_and_checks_refuse_with_the_field() -> None:
    outer = read_record(Outer, {"name": "x", "inner": {"kind": "b", "ratio": 1}, "values": {"a": [1, "b"], "c": None}})
    assert outer.inner == Inner(kind="b", ratio=1.0) and outer.values == {"a": [1, "b"], "c": None}
    error = _error(Outer, {"name": "x", "inner": {"kind": "b", "ratio": 2}})
    assert (error.where, error.message) == ("inner.ratio", "a 'b' keeps its ratio at most 1")
    assert _error(Outer, {"name": "bad"}).where == "(top level)"
    assert _error(Outer, {"name": "x", "inner": {"kind": "c"}}).message == "Input should be 'a' or 'b'"
    assert _error(Outer, "not a mapping").message == "Input should be a valid dictionary"


def test_a_union_keeps_the_values_own_type() -> None:
    values = read_record(Outer, {"name": "x", "values": {"i": 3, "f": 3.0, "b": True, "s": "3"}}).values
    assert [type(v) for v in values.values()] == [int, float, bool, str]


@pytest.mark.parametrize(
    ("data", "where", "message"),
    [
        ({"count": 0}, "count", "Input should be greater than or equal to 1"),
        ({"count": 9}, "count", "Input should be less than or equal to 8"),
        ({"size": 0}, "size", "Input should be greater than 0"),
        ({"name": ""}, "name", "String should have at least 1 character"),
        ({"name": "abcde"}, "name", "String should have at most 4 characters"),
        ({"items": []}, "items", "List should have at least 1 item"),
        ({"items": ["a", "b", "c"]}, "items", "List should have at most 2 items"),
        ({"items": "a"}, "items", "Input should be a valid list"),
        ({"items": [1]}, "items.0", "Input should be a valid string"),
        ({"size": 2.5}, "size", "Input should be a valid integer, got a number with a fractional part"),
    ],
)
def test_bounds_and_types(data: dict[str, Any], where: str, message: str) -> None:
    error = _error(Limits, {"items": ["x"], **data})
    assert (error.where, error.message) == (where, message)


# What pydantic's lax mode made of each value for each type: the schema reads every preset the same.
LAX_CASES = [
    (int, [4096, 4096.0, 4096.5, "8", " 8 ", "8.0", True, "x", None, [1]]),
    (float, [1.5, 2, "1.5", "1e3", True, "x", None]),
    (bool, [True, 1, 0, 2, 0.0, "yes", "off", "maybe", None]),
    (str, ["s", 1, True, 1.5, None]),
]


@pytest.mark.parametrize(("kind", "values"), LAX_CASES, ids=lambda case: getattr(case, "__name__", "values"))
def test_scalars_read_as_pydantic_lax_mode_reads_them(kind: type, values: list[Any]) -> None:
    pydantic = pytest.importorskip("pydantic", reason="pydantic comes with the runtime extra; the comparison needs it")

    # The annotation is the type itself, not a string this module's namespace would have to name.
    holder = type("Holder", (Frozen,), {"__annotations__": {"value": kind}, "__module__": __name__})

    for value in values:
        try:
            expected: Any = pydantic.TypeAdapter(kind).validate_python(value)
        except pydantic.ValidationError:
            expected = SchemaError
        try:
            got: Any = read_record(holder, {"value": value}).value
        except SchemaError:
            got = SchemaError
        assert (got, type(got)) == (expected, type(expected)), (kind, value)
