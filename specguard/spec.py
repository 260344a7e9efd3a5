"""``LaunchSpec``: the flags of one launch, typed where specguard models them, verbatim elsewhere."""

from __future__ import annotations

import math
from typing import Any

from specguard.errors import InputError, echoed
from specguard.flags import FLAGS_BY_DEST, FLAGS_BY_NAME, FlagSpec, ValueKind
from specguard.models import Dialect, Edit, FlagValue
from specguard.records import Record, replace

# Env vars that change what SGLang does with speculative settings. Only these are read from the
# process environment; anything can still be given with ``--env``.
RELEVANT_ENV_PREFIXES = ("SGLANG_", "SGL_")


class FlagItem(Record):
    """One flag as written: ``flag`` is SGLang's canonical spelling, ``written`` the user's."""

    flag: str
    values: tuple[str, ...] = ()
    written: str | None = None  # the option as typed (alias, dialect prefix); None if specguard added it
    inline: bool = False  # written as --flag=value
    known: bool = True  # a flag of SGLang's (modeled or not)
    extra: bool = False  # a flag of the dialect itself, not SGLang's


class LaunchSpec(Record):
    dialect: Dialect = Dialect.SGLANG
    items: tuple[FlagItem, ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    # ----------------------------------------------------------------------------- reading

    def item(self, dest_or_flag: str) -> FlagItem | None:
        """The last occurrence of a flag (argparse semantics: the last one wins)."""
        flag = _flag_name(dest_or_flag)
        for item in reversed(self.items):
            if item.flag == flag:
                return item
        return None

    def has(self, dest_or_flag: str) -> bool:
        return self.item(dest_or_flag) is not None

    def last_value(self, dest_or_flag: str) -> str | None:
        """The last value written for a flag, as typed (modeled or not, unconverted); None when the
        flag is absent or was given with no value."""
        item = self.item(dest_or_flag)
        return item.values[-1] if item is not None and item.values else None

    def get(self, dest: str) -> Any:
        """The typed value of a modeled flag, or None when it is not set or its value is refused
        (switches: False)."""
        spec = FLAGS_BY_DEST[dest]
        item = self.item(spec.flag)
        if item is None:
            return False if spec.kind is ValueKind.SWITCH else None
        try:
            typed = convert(spec, item.values)
        except InputError:
            return None  # a value SGLang refuses is VB013's finding; no other rule reasons on it
        from specguard.flag_values import (
            usable,  # flag_values reads this module: imported on use
        )

        return typed if usable(spec.flag, typed) else None

    def env_value(self, name: str) -> str | None:
        for key, value in reversed(self.env):
            if key == name:
                return value
        return None

    def env_flag(self, name: str) -> bool:
        """An env var read the way SGLang reads booleans (``get_bool_env_var``)."""
        value = self.env_value(name)
        return value is not None and value.strip().lower() in ("1", "true", "yes", "y", "on")

    # ----------------------------------------------------------------------------- editing

    def current(self, edit: Edit) -> FlagValue:
        if edit.target == "env":
            return self.env_value(edit.name)
        spec = FLAGS_BY_NAME.get(edit.name)
        item = self.item(edit.name)
        if item is None:
            return False if spec is not None and spec.kind is ValueKind.SWITCH else None
        if spec is None:
            return item.values[0] if len(item.values) == 1 else tuple(item.values)
        value = convert(spec, item.values)
        return tuple(str(v) for v in value) if isinstance(value, list) else value

    def apply(self, edit: Edit) -> LaunchSpec:
        """A copy with one edit made: in place where the flag already is, else appended."""
        if edit.target == "env":
            env = [(k, v) for k, v in self.env if k != edit.name]
            if edit.value is not None:
                env.append((edit.name, str(edit.value)))
            return replace(self, env=tuple(env))
        new_item = _item_for(edit)
        items: list[FlagItem] = []
        placed = False
        for item in self.items:
            if item.flag != edit.name:
                items.append(item)
            elif not placed and new_item is not None:
                # Keep the user's spelling of the option when it was already there.
                items.append(replace(new_item, written=item.written, inline=item.inline))
                placed = True
        if not placed and new_item is not None:
            items.append(new_item)
        return replace(self, items=tuple(items))


def _flag_name(dest_or_flag: str) -> str:
    if dest_or_flag.startswith("-"):
        return dest_or_flag
    spec = FLAGS_BY_DEST.get(dest_or_flag)
    return spec.flag if spec else "--" + dest_or_flag.replace("_", "-")


def _item_for(edit: Edit) -> FlagItem | None:
    value = edit.value
    if value is None or value is False:
        return None
    if value is True:
        return FlagItem(flag=edit.name)
    if isinstance(value, tuple):
        return FlagItem(flag=edit.name, values=tuple(str(v) for v in value))
    return FlagItem(flag=edit.name, values=(str(value),))


def convert(spec: FlagSpec, values: tuple[str, ...], written: str | None = None) -> Any:
    """Type raw values as SGLang's parser would; a bad value is an input error naming the flag as written."""
    if written and written != spec.flag:
        spec = replace(spec, flag=written)
    kind = spec.kind
    if kind is ValueKind.SWITCH:
        return True
    if kind in (ValueKind.INT_LIST, ValueKind.STR_LIST):
        if not values:
            raise InputError(f"{spec.flag} expects at least one value", hint=f"e.g. {spec.flag} 1 2 4 8")
        if kind is ValueKind.STR_LIST:
            return list(values)
        return [_to_int(spec, v) for v in values]
    if len(values) != 1:
        raise InputError(
            f"{spec.flag} expects exactly one value, got {len(values)}",
            hint=f"write {spec.flag} VALUE",
        )
    raw = values[0]
    if kind is ValueKind.INT:
        return _to_int(spec, raw)
    if kind is ValueKind.FLOAT:
        try:
            number = float(raw)
        except ValueError:
            raise InputError(f"{spec.flag} expects a number, got {shown_value(raw)}", hint=f"e.g. {spec.flag} 0.8") from None
        if not math.isfinite(number):  # nan, inf, 1e999: no SGLang setting means anything with them
            raise InputError(f"{spec.flag} expects a finite number, got {shown_value(raw)}", hint=f"e.g. {spec.flag} 0.8")
        return number
    if spec.choices is not None:
        normalised = raw.upper() if spec.upper_case else raw
        if normalised not in spec.choices:
            hint = f"choose one of {', '.join(spec.choices)}"
            if normalised == "MTP":
                hint = "SGLang has no algorithm named MTP: use NEXTN (or EAGLE) for a model's own MTP layers"
            raise InputError(f"{spec.flag}: unknown value {raw!r}", hint=hint)
        return normalised
    return raw


# SGLang hands sizes and counts to torch and CUDA as 64-bit integers; a larger one is no setting.
MAX_FLAG_INT = 2**63 - 1


def _to_int(spec: FlagSpec, raw: str) -> int:
    try:
        value = int(raw)  # more than 4300 digits is a ValueError too (int_max_str_digits)
    except ValueError:
        raise InputError(f"{spec.flag} expects an integer, got {shown_value(raw)}", hint=f"e.g. {spec.flag} 4") from None
    if abs(value) > MAX_FLAG_INT:
        raise InputError(f"{spec.flag} {shown_value(raw)} is larger than a 64-bit integer", hint=f"e.g. {spec.flag} 4")
    return value


def shown_value(raw: str) -> str:
    """A flag value for a message, quoted as Python writes a string."""
    return echoed(repr(raw))
