"""Untrusted input (a preset's YAML) read into ``Frozen`` records: every key known, every value of
its field's type and within its bounds, or a ``SchemaError`` that says where and what.

What pydantic's models (``extra="forbid"``, lax mode) did for the preset schema, on the standard
library: pydantic cost a check with ``--preset`` ~150 ms of imports and validator building. The
rules, as there: a key the record does not declare is refused, a required key must be there, a
value must be of the field's type or one lax mode converts (``_scalar``), a nested mapping becomes
its record, and the field's bounds (``Field(gt=0)``, ``Field(max_length=256)``) hold. After a record is built its
``check()`` (if it has one) may refuse it: a ``ValueError``, or a ``FieldError`` naming the field.
"""

from __future__ import annotations

import types
import typing
from enum import Enum
from typing import Any, Literal, TypeVar

from specguard.frozen import MISSING, FieldSpec, Frozen, field_type, fields

R = TypeVar("R", bound=Frozen)


class SchemaError(ValueError):
    """``kind``: "unknown" (a key no field declares), "missing" (a required key), "value"."""

    def __init__(self, location: tuple[str | int, ...], message: str, kind: str = "value") -> None:
        super().__init__(message)
        self.location = location
        self.message = message
        self.kind = kind

    @property
    def where(self) -> str:
        return ".".join(str(part) for part in self.location) or "(top level)"


class FieldError(ValueError):
    """A record's ``check()`` refusing one of its fields."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def read_record(record: type[R], data: Any, location: tuple[str | int, ...] = ()) -> R:
    """``data`` (a mapping from YAML or JSON) as a ``record``, or a ``SchemaError``."""
    if not isinstance(data, dict):
        raise SchemaError(location, "Input should be a valid dictionary")
    specs = {spec.name: spec for spec in fields(record)}
    for key in data:
        if key not in specs:
            raise SchemaError((*location, key), "unknown key", "unknown")
    values: dict[str, Any] = {}
    for name, spec in specs.items():
        if name not in data:
            if spec.default is MISSING and spec.default_factory is MISSING:
                raise SchemaError((*location, name), "missing key", "missing")
            continue
        values[name] = _bounded(spec, _read(field_type(record, spec), data[name], (*location, name)), (*location, name))
    built = record(**values)
    check = getattr(built, "check", None)
    if check is not None:
        try:
            check()
        except FieldError as error:
            raise SchemaError((*location, error.field), str(error)) from None
        except ValueError as error:
            raise SchemaError(location, str(error)) from None
    return built


_NAMES = {str: "a valid string", int: "a valid integer", float: "a valid number", bool: "a valid boolean", list: "a valid list", dict: "a valid dictionary"}


def _read(annotation: Any, value: Any, location: tuple[str | int, ...]) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return _read_union(typing.get_args(annotation), value, location)
    if origin is Literal:
        choices = typing.get_args(annotation)
        if value not in choices or isinstance(value, bool) != any(isinstance(c, bool) for c in choices):
            raise SchemaError(location, f"Input should be {_either(choices)}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise SchemaError(location, "Input should be a valid list")
        (item,) = typing.get_args(annotation)
        return [_read(item, v, (*location, i)) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise SchemaError(location, "Input should be a valid dictionary")
        key_type, item = typing.get_args(annotation)
        return {_read(key_type, k, (*location, str(k))): _read(item, v, (*location, str(k))) for k, v in value.items()}
    if isinstance(annotation, type) and issubclass(annotation, Frozen):
        return read_record(annotation, value, location)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        for member in annotation:
            if value == member.value and type(value) is type(member.value):
                return member
        raise SchemaError(location, f"Input should be {_either([m.value for m in annotation])}")
    if annotation in (str, int, float, bool):
        converted = _scalar(annotation, value)
        if converted is None:
            fractional = annotation is int and isinstance(value, float) and not value.is_integer()
            raise SchemaError(location, f"Input should be {_NAMES[annotation]}" + (", got a number with a fractional part" if fractional else ""))
        return converted
    raise TypeError(f"validation.py cannot read a field of type {annotation!r}")  # a schema bug, not bad input


_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def _scalar(kind: type, value: Any) -> Any:
    """``value`` as ``kind`` (a str, int, float or bool), or None: the conversions pydantic's lax
    mode made for the schema (so that every preset it read reads the same): a whole float or a
    numeric string for an int, an int or a numeric string for a float, 0/1 and yes/no words for a
    bool; a string is only a string."""
    if type(value) is kind:
        return value
    if kind is str or value is None or isinstance(value, (list, dict)):
        return None
    if kind is bool:
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        word = value.strip().lower() if isinstance(value, str) else None
        return True if word in _TRUE else False if word in _FALSE else None
    number = _number(value)
    if number is None:
        return None
    if kind is float:
        return float(number)
    return int(number) if float(number).is_integer() else None


def _number(value: Any) -> int | float | None:
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        for parse in (int, float):
            try:
                return parse(value.strip())
            except ValueError:
                continue
    return None


def _read_union(options: tuple[Any, ...], value: Any, location: tuple[str | int, ...]) -> Any:
    if value is None and type(None) in options:
        return None
    options = tuple(option for option in options if option is not type(None))
    # An option of the value's own type first (an int stays an int where int and float are both
    # allowed), then the others in order; the first that reads it wins.
    exact = [option for option in options if (typing.get_origin(option) or option) is type(value)]
    first_error: SchemaError | None = None
    for option in (*exact, *(o for o in options if o not in exact)):
        try:
            return _read(option, value, location)
        except SchemaError as error:
            first_error = first_error or error
    if len(options) == 1 and first_error is not None:
        raise first_error
    kinds = [_NAMES.get(typing.get_origin(option) or option, repr(option)) for option in options]
    raise SchemaError(location, f"Input should be {_either(kinds, quote=False)}")


def _bounded(spec: FieldSpec, value: Any, location: tuple[str | int, ...]) -> Any:
    for bound, limit in spec.bounds:
        problem = _bound_problem(bound, limit, value)
        if problem:
            raise SchemaError(location, problem)
    return value


def _bound_problem(bound: str, limit: float, value: Any) -> str | None:
    if value is None:
        return None
    if bound in ("min_length", "max_length"):
        size, unit = (len(value), "character") if isinstance(value, str) else (len(value), "item")
        kind = "String" if isinstance(value, str) else "List"
        plural = "" if limit == 1 else "s"
        if bound == "min_length" and size < limit:
            return f"{kind} should have at least {limit:g} {unit}{plural}"
        if bound == "max_length" and size > limit:
            return f"{kind} should have at most {limit:g} {unit}{plural}"
        return None
    if bound == "gt" and not value > limit:
        return f"Input should be greater than {limit:g}"
    if bound == "ge" and not value >= limit:
        return f"Input should be greater than or equal to {limit:g}"
    if bound == "le" and not value <= limit:
        return f"Input should be less than or equal to {limit:g}"
    return None


def _either(choices: typing.Iterable[Any], quote: bool = True) -> str:
    shown = [repr(c) if quote else str(c) for c in choices]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
