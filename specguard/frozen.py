"""``Frozen``: the base of specguard's data models, on the standard library alone.

Every subclass becomes a frozen, keyword-only record (like a frozen dataclass), with the few model methods the code
uses (``model_copy``, ``model_dump``). It replaces pydantic on the check path: importing pydantic
and building its validators cost ``specguard check`` about 150 ms of a 250 ms budget, for
models whose values specguard builds itself. Input from outside is typed where it enters
(``facts``/``config_values`` for config.json, ``spec.convert`` for flag values, the preset
schema for presets), so the models only normalise shapes, as pydantic's lax mode did for them:
a list given for a tuple field becomes a tuple, a string given for an enum field becomes the
member, an int given for a float field becomes a float, and a dict given for a ``Frozen`` field
becomes that record.
"""

from __future__ import annotations

import sys
import types
import typing
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, ClassVar, Literal, NamedTuple, Self, dataclass_transform

Converter = Callable[[Any], Any]


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a record (``dataclasses.FrozenInstanceError``'s counterpart:
    importing dataclasses would bring inspect, ast and dis onto the check path, ~10 ms)."""


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FieldSpec(NamedTuple):
    """One field of a record: its name, its default (or a factory making one), its annotation as
    written, and what ``Field`` said of it."""

    name: str
    default: Any = MISSING
    default_factory: Callable[[], Any] | Any = MISSING
    annotation: Any = None
    description: str | None = None
    exclude: bool = False
    bounds: tuple[tuple[str, float], ...] = ()  # ("gt", 0), ("max_length", 256): checked on input (validation.py)


BOUNDS = ("gt", "ge", "le", "min_length", "max_length")


def Field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | Any = MISSING,
    description: str | None = None,
    exclude: bool = False,
    **bounds: float,
) -> Any:
    """A field with a default (or a factory), a description, ``exclude`` to keep it out of
    ``model_dump``, and bounds that input read into the record must meet (``gt``, ``ge``, ``le``
    for numbers, ``min_length``, ``max_length`` for strings and lists; see validation.py)."""
    unknown = set(bounds) - set(BOUNDS)
    if unknown:
        raise TypeError(f"Field() has no bound {', '.join(sorted(unknown))}")
    # Named and typed by the class that declares it (_collect_fields).
    return FieldSpec("", default, default_factory, None, description, exclude, tuple(bounds.items()))


_COMPUTED = "__specguard_computed_field__"


def computed_field(prop: Any) -> Any:  # Any: mypy sees the property's getter here, Python the property
    """Mark a property to be dumped after the fields, as pydantic's ``computed_field`` did."""
    setattr(prop.fget, _COMPUTED, True)
    return prop


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(Field,))
class Frozen:
    """A frozen, keyword-only record: unknown keywords are a TypeError, fields cannot be reassigned.

    Not a ``dataclasses.dataclass``: Python 3.11's dataclasses compile six functions per class
    (about 1 ms each class), which cost ``specguard check`` some 25 ms for its 21 record types.
    A record here compiles one, its ``__init__``; equality, hashing, ``repr`` and frozenness
    are the base's, written once."""

    # Built on the first instance of each class (resolving the annotations costs the import otherwise).
    _converters: ClassVar[dict[str, Converter] | None]
    _computed_fields: ClassVar[tuple[str, ...]]
    _dumped_fields: ClassVar[tuple[str, ...]]
    _field_names: ClassVar[tuple[str, ...]]
    _fields: ClassVar[tuple[FieldSpec, ...]]

    def __init_subclass__(cls, kw_only: bool = True, **kwargs: Any) -> None:
        """``kw_only=False`` (``class Change(Frozen, kw_only=False)``): the fields may also be
        given by position, for the tables written one row per line."""
        super().__init_subclass__(**kwargs)
        cls._fields = _collect_fields(cls)
        cls._field_names = tuple(f.name for f in cls._fields)
        cls._converters = None
        cls._computed_fields = tuple(
            name
            for klass in reversed(cls.__mro__)
            for name, value in vars(klass).items()
            if isinstance(value, property) and getattr(value.fget, _COMPUTED, False)
        )
        cls._dumped_fields = tuple(f.name for f in cls._fields if not f.exclude)
        cls.__init__ = _make_init(cls, kw_only)  # type: ignore[method-assign]

    def __post_init__(self) -> None:
        converters = type(self)._converters
        if converters is None:
            converters = type(self)._converters = _converters_for(type(self))
        for name, convert in converters.items():
            value = getattr(self, name)
            converted = convert(value)
            if converted is not value:
                object.__setattr__(self, name, converted)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._field_names)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._field_names)
        return f"{type(self).__qualname__}({fields})"

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A copy with ``update``'s fields replaced (normalised like the constructor's)."""
        values = {name: getattr(self, name) for name in self._field_names}
        unknown = set(update or {}) - set(values)
        if unknown:
            raise TypeError(f"{type(self).__qualname__} has no field {', '.join(sorted(unknown))}")
        return type(self)(**{**values, **(update or {})})

    def model_dump(
        self,
        *,
        mode: Literal["python", "json"] = "python",
        exclude: set[str] | frozenset[str] = frozenset(),
        exclude_none: bool = False,
    ) -> dict[str, Any]:
        """The record as a dict: fields in declaration order, then computed fields, nested records
        as dicts. ``mode="json"`` gives JSON types: enums as their values, tuples as lists."""
        json_mode = mode == "json"
        dumped: dict[str, Any] = {}
        for name in (*self._dumped_fields, *self._computed_fields):
            if name in exclude:
                continue
            value = getattr(self, name)
            if value is None and exclude_none:
                continue
            dumped[name] = _dump(value, json_mode, exclude_none)
        return dumped


def field_names(record: type[Frozen]) -> tuple[str, ...]:
    return record._field_names


def fields(record: type[Frozen]) -> tuple[FieldSpec, ...]:
    return record._fields


def field_type(record: type[Frozen], spec: FieldSpec) -> Any:
    """A field's annotation as a type (evaluated in the module that declares it)."""
    return _annotation(record, spec.name, spec.annotation)


def _collect_fields(cls: type) -> tuple[FieldSpec, ...]:
    """The base records' fields, then this class's annotations in order (a redeclared field keeps
    its place, as in dataclasses). ``ClassVar`` annotations are not fields."""
    collected: dict[str, FieldSpec] = {}
    for base in reversed(cls.__mro__[1:]):
        for spec in vars(base).get("_fields", ()):
            collected[spec.name] = spec
    for name, annotation in vars(cls).get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        value = vars(cls).get(name, MISSING)
        if isinstance(value, FieldSpec):
            spec = value._replace(name=name, annotation=annotation)
            if value.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, value.default)
        else:
            spec = FieldSpec(name, value, MISSING, annotation)
        collected[name] = spec
    return tuple(collected.values())


def _is_classvar(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return typing.get_origin(annotation) is ClassVar or annotation is ClassVar


def _make_init(cls: type, kw_only: bool) -> Callable[..., None]:
    """``__init__(self, *, field, ...)``: sets each field, then runs ``__post_init__``. Compiled
    once per class: a loop over the fields would cost every instance (a check makes ~1500)."""
    defaults: dict[str, Any] = {}
    parameters, body = [], []
    for index, spec in enumerate(cls._fields):  # type: ignore[attr-defined]
        if spec.default_factory is not MISSING:
            defaults[f"_factory{index}"] = spec.default_factory
            parameters.append(f"{spec.name}=_MISSING")  # not given: the factory makes it
            body.append(f"  _set(self, {spec.name!r}, _factory{index}() if {spec.name} is _MISSING else {spec.name})")
        else:
            if spec.default is not MISSING:
                defaults[f"_default{index}"] = spec.default
            parameters.append(spec.name if spec.default is MISSING else f"{spec.name}=_default{index}")
            body.append(f"  _set(self, {spec.name!r}, {spec.name})")
    signature = ", ".join(["self", *(["*"] if kw_only and parameters else []), *parameters])
    source = f"def __init__({signature}):\n" + "\n".join([*body, "  self.__post_init__()"])
    namespace: dict[str, Any] = {"_set": object.__setattr__, "_MISSING": MISSING, **defaults}
    exec(source, namespace)  # noqa: S102  (the source is built from the class's own field names, never from input)
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _dump(value: Any, json_mode: bool, exclude_none: bool) -> Any:
    if isinstance(value, Frozen):
        return value.model_dump(mode="json" if json_mode else "python", exclude_none=exclude_none)
    if isinstance(value, Enum):
        return value.value if json_mode else value
    if isinstance(value, (tuple, list)):
        items = [_dump(item, json_mode, exclude_none) for item in value]
        return items if json_mode or isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {key: _dump(item, json_mode, exclude_none) for key, item in value.items()}
    if json_mode and not isinstance(value, (str, int, float, bool, type(None))):
        return str(value)  # a Version or a Path
    return value


# ------------------------------------------------------------------------------------------
# Normalising values as they come in


def _converters_for(record: type[Frozen]) -> dict[str, Converter]:
    converters = {}
    for spec in record._fields:
        try:
            annotation = _annotation(record, spec.name, spec.annotation)
        except NameError:
            # A type imported only for type checking (``if TYPE_CHECKING:``) cannot be evaluated
            # at run time: the field keeps its value as given, as a dataclass's would.
            continue
        convert = _converter(annotation)
        if convert is not None:
            converters[spec.name] = convert
    return converters


def _annotation(record: type, name: str, annotation: Any) -> Any:
    """A field's annotation as a type. Under ``from __future__ import annotations`` it is a string:
    evaluated in the module of the class that declares it (plain ``eval``: Python 3.11 evaluates
    ``X | None`` and ``tuple[...]`` itself, several times faster than ``typing.get_type_hints``)."""
    if not isinstance(annotation, str):
        return annotation
    owner = next(klass for klass in record.__mro__ if name in vars(klass).get("__annotations__", {}))
    return eval(annotation, vars(sys.modules[owner.__module__]))  # the annotation is the class source, not input


def _converter(annotation: Any) -> Converter | None:
    """How to normalise a value for ``annotation``, or None when any value is kept as given."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return _union_converter([arg for arg in typing.get_args(annotation) if arg is not type(None)])
    if origin is tuple:
        return _tuple_converter(typing.get_args(annotation))
    if isinstance(annotation, type):
        if issubclass(annotation, Enum):
            enum = annotation
            return lambda value: value if isinstance(value, enum) or value is None else enum(value)
        if issubclass(annotation, Frozen):
            record = annotation
            return lambda value: record(**value) if isinstance(value, Mapping) else value
        if annotation is float:
            return lambda value: float(value) if type(value) is int else value
    return None


def _union_converter(options: list[Any]) -> Converter | None:
    if len(options) == 1:
        inner = _converter(options[0])
        return None if inner is None else (lambda value: None if value is None else inner(value))
    # A union of several types (FlagValue): only a list is reshaped, into the union's tuple type.
    tuple_option = next((option for option in options if typing.get_origin(option) is tuple), None)
    if tuple_option is None:
        return None
    as_tuple = _tuple_converter(typing.get_args(tuple_option))
    return lambda value: as_tuple(value) if isinstance(value, list) else value


def _tuple_converter(args: tuple[Any, ...]) -> Converter:
    if len(args) == 2 and args[1] is Ellipsis:
        item = _converter(args[0])
        if item is None:
            return lambda value: tuple(value) if isinstance(value, list) else value
        convert_item = item
        return lambda value: tuple(convert_item(v) for v in value) if isinstance(value, (list, tuple)) else value
    positional = [_converter(arg) for arg in args]
    if all(convert is None for convert in positional):
        return lambda value: tuple(value) if isinstance(value, list) else value
    return lambda value: (
        tuple(v if convert is None else convert(v) for v, convert in zip(value, positional, strict=False))
        if isinstance(value, (list, tuple))
        else value
    )
