"""The project's settings: ``specguard.toml`` (top-level keys) or ``[tool.specguard]`` in
``pyproject.toml``, found as ruff finds its own: walking up from the checked file's folder, the
closest wins, ``specguard.toml`` before ``pyproject.toml`` in one folder, and a
``pyproject.toml`` without ``[tool.specguard]`` is passed over.

Looking costs a few ``stat`` calls; ``tomllib`` is imported only when a file is read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specguard.errors import InputError
from specguard.records import Record

if TYPE_CHECKING:
    from specguard.selection import Selection

# The settings, as written in the file, and the ``Settings`` field each one fills.
KEYS = {"select": "select", "ignore": "ignore", "extend-select": "extend_select", "per-file-ignores": "per_file_ignores"}

# A pyproject.toml that may hold [tool.specguard] (the table, or dotted tool.specguard.KEY keys);
# one without is passed over unparsed, so a project's own pyproject.toml costs no TOML parse. An
# inline `specguard = {...}` under [tool] is not looked for: ruff's docs show only the table.
# Compiled on first use (re caches it): a folder without a pyproject.toml never pays for it.
_MENTIONS_US = r"(?m)^\s*\[\s*tool\s*\.\s*[\"']?specguard\b|^\s*tool\s*\.\s*[\"']?specguard[\"']?\s*\."


class Settings(Record):
    """One settings file, read. ``origin`` prefixes a key's name in an error."""

    path: Path
    origin: str
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, selectors)

    def ignores_for(self, checked: Path | None) -> tuple[str, ...]:
        """The per-file ignores whose glob matches ``checked``: its path below the settings'
        folder (``scripts/*.sh``), or its name alone for a glob without a slash (``*.yaml``)."""
        if checked is None:
            return ()
        from fnmatch import fnmatchcase

        resolved = checked.resolve()
        try:
            relative = resolved.relative_to(self.path.parent.resolve()).as_posix()
        except ValueError:
            relative = resolved.as_posix()
        return tuple(
            selector
            for glob, selectors in self.per_file_ignores
            if fnmatchcase(relative, glob) or ("/" not in glob and fnmatchcase(resolved.name, glob))
            for selector in selectors
        )


def find_settings(start: Path) -> Path | None:
    """The closest settings file in ``start`` or a folder above it."""
    start = start.resolve()
    for folder in (start, *start.parents):
        own = folder / "specguard.toml"
        if own.is_file():
            return own
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and re.search(_MENTIONS_US, _text(pyproject)) and _table(pyproject) is not None:
            return pyproject
    return None


def read_settings(path: Path) -> Settings:
    """The settings ``path`` holds; a malformed file is one line naming the file and the key."""
    pyproject = path.name == "pyproject.toml"
    table = _table(path) if pyproject else _parse(path)
    origin = f"{path}: tool.specguard." if pyproject else f"{path}: "
    values: dict[str, Any] = {}
    for key, value in (table or {}).items():
        if key not in KEYS:
            from specguard.spelling import closest

            close = closest(key, KEYS)
            raise InputError(f"{origin}{key}: unknown setting", hint=f"did you mean {close[0]}?" if close else f"the settings are {', '.join(KEYS)}")
        values[KEYS[key]] = _selectors(value, f"{origin}{key}") if key != "per-file-ignores" else _per_file(value, f"{origin}{key}")
    return Settings(path=path, origin=origin, **values)


def _selectors(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InputError(f"{where}: must be a list of rule codes, prefixes or categories", hint='e.g. ["MM003", "FX08", "perf"]')
    return tuple(value)


def _per_file(value: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, Mapping):
        raise InputError(f"{where}: must be a table of glob = [codes]", hint='e.g. "scripts/*.sh" = ["MM003"]')
    return tuple((glob, _selectors(selectors, f"{where}.{glob}")) for glob, selectors in value.items())


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: cannot be read ({error.__class__.__name__})", hint="fix or remove the settings file") from None


def _parse(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(_text(path))
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"{path}: not valid TOML ({error})", hint="fix the file, or remove it") from None


def _table(pyproject: Path) -> dict[str, Any] | None:
    tool = _parse(pyproject).get("tool")
    table = tool.get("specguard") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise InputError(f"{pyproject}: tool.specguard: must be a table", hint="write [tool.specguard] with select, ignore, ...")
    return table


def selection_for_command(
    script: str | None, preset: str | None, select: list[list[str]] | None, ignore: list[list[str]] | None, extend_select: list[list[str]] | None
) -> Selection | None:
    """The rules to run for a command's launch: the settings file closest to the checked script or
    preset file (to the current folder for a launch on the command line), then the command line's
    --select/--ignore/--extend-select (each repeatable, each a list of selectors)."""
    checked = Path(script) if script and script != "-" else (Path(preset) if preset and Path(preset).is_file() else None)
    flat = [None if given is None else [code for codes in given for code in codes] for given in (select, ignore, extend_select)]
    return selection_for(checked.parent if checked else Path.cwd(), checked, *flat)


def selection_for(
    start: Path, checked: Path | None, select: list[str] | None, ignore: list[str] | None, extend_select: list[str] | None
) -> Selection | None:
    """The rules to run for a file in ``start`` (``checked``: the script or preset checked, for
    its per-file ignores): the settings file's layer, then the command line's, which wins.
    None when neither says anything: every rule runs, and the selection machinery is not imported."""
    path = find_settings(start)
    if path is None and select is None and not ignore and not extend_select:
        return None
    from specguard.rules import ALL_RULES
    from specguard.selection import Layer, Selection, require_known

    layers = []
    per_file: tuple[str, ...] = ()
    settings = read_settings(path) if path is not None else None
    if settings is not None:
        layers.append(Layer(origin=settings.origin, select=settings.select, ignore=settings.ignore, extend_select=settings.extend_select))
        per_file = settings.ignores_for(checked)
        for glob, selectors in settings.per_file_ignores:  # every glob's, not only the matching ones': a typo shows at once
            for selector in selectors:
                require_known(selector, ALL_RULES, f"{settings.origin}per-file-ignores.{glob}")
    layers.append(Layer(select=tuple(select) if select is not None else None, ignore=tuple(ignore or ()), extend_select=tuple(extend_select or ())))
    origin = f"{settings.origin}per-file-ignores" if settings is not None else "per-file-ignores"
    return Selection.from_layers(ALL_RULES, layers, per_file, per_file_origin=origin)
