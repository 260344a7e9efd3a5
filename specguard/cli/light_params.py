"""Option values coerced without pydantic, the way typer coerces them.

typer (0.2x) coerces every option of a command, given or not, through a pydantic ``TypeAdapter``
it builds on first use: a cold ``specguard check`` paid for importing pydantic and building
twenty adapters (~40% of its import time) to turn ``"2"`` into ``2``. specguard's options are
simple (str, int with a minimum, switches, str enums, lists of str, a Path), so a value that is
plainly valid is coerced here to exactly what typer's adapter returns, and anything else (a bad
value, an option of a kind not listed) goes to typer's own adapter: every error message, and every
value this module is not sure of, stays typer's.

This uses typer's internals (``_TyperParameter._runtime_param``, ``typer._coercion``); where they
differ (another typer release), ``install`` leaves the command as it is, which is slower, not wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

_UNSURE = object()
_DIGITS = re.compile(r"[0-9]+")


def install(command: Any) -> None:
    """Give every typer option of ``command`` (a click command or group, recursively) the light
    coercion; a parameter that already built typer's keeps it."""
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
        from typer._param_types import coerce_cli_choice, coerce_cli_path
    except ImportError:  # pragma: no cover - a typer without adapters needs none of this
        return

    @dataclass(frozen=True)
    class LightRuntimeParam(RuntimeParam):  # type: ignore[misc]
        descriptor: Any

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            coerced = _coerce(self.annotation, self.parameter_info, value, coerce_cli_choice, coerce_cli_path, param, ctx)
            if coerced is not _UNSURE:
                return coerced
            return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)

    for param in _typer_params(command):
        descriptor = param.type_descriptor
        if getattr(param, "_runtime_param", True) is None and descriptor.file_annotation is None:
            param._runtime_param = LightRuntimeParam(
                parameter_info=descriptor.parameter_info, annotation=descriptor.annotation, descriptor=descriptor
            )


def _typer_params(command: Any) -> list[Any]:
    params = [p for p in getattr(command, "params", ()) if hasattr(p, "type_descriptor")]
    # --help is made on first use and cached; made here, with the context settings it would get.
    help_option = command.get_help_option(command.context_class(command, **command.context_settings))
    if help_option is not None and hasattr(help_option, "type_descriptor"):
        params.append(help_option)
    for sub in getattr(command, "commands", {}).values():
        params.extend(_typer_params(sub))
    return params


def _coerce(annotation: Any, info: Any, value: Any, coerce_choice: Any, coerce_path: Any, param: Any, ctx: Any) -> Any:
    """``value`` as typer's adapter for ``annotation`` returns it, or _UNSURE."""
    if info.parser is not None:
        return _UNSURE
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        if not isinstance(value, (list, tuple)):
            return _UNSURE
        items = [_coerce(item, info, v, coerce_choice, coerce_path, param, ctx) for v in value]
        return _UNSURE if any(i is _UNSURE for i in items) else items
    if annotation is str:
        return value if isinstance(value, str) else _UNSURE
    if annotation is int:
        if info.max is not None or info.clamp or not (isinstance(value, str) and _DIGITS.fullmatch(value)):
            return _UNSURE
        number = int(value)
        return number if info.min is None or number >= info.min else _UNSURE
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        try:
            return coerce_choice(value, choices=list(annotation), case_sensitive=info.case_sensitive, ctx=ctx)
        except ValueError:
            return _UNSURE
    if annotation is Path and isinstance(value, str) and info.path_type is None:
        # typer's adapter makes the Path, then runs these same checks (exists, dir_okay, ...).
        return coerce_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
    return _UNSURE

