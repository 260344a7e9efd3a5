"""``# specguard: ignore[MM003,SV001]`` on a launch's line: the findings whose flags are written
on that line are suppressed (a bare ``# specguard: ignore`` suppresses every one there).

The line is a script's (``FoundLaunch.arg_locations`` says where each argument was written) or
a preset's ``flags:`` key (a YAML comment). A finding that names no flag written in the text is
placed where SARIF places it: on the launch's first line in a script; nowhere in a preset.
``suppressions_in_script`` and ``suppressions_in_preset`` read the files; ``Suppressions`` is the
table they make, and deciding is pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from specguard.models import Finding
from specguard.records import Record, field

if TYPE_CHECKING:
    from specguard.launch_text import FoundLaunch

_DIRECTIVE = re.compile(r"#\s*specguard:\s*ignore\b(?:\[([^\]]*)\])?", re.IGNORECASE)
EVERY_CODE: frozenset[str] = frozenset()  # a bare directive


def directive(line: str) -> frozenset[str] | None:
    """The codes a line's directive suppresses (``EVERY_CODE`` for a bare one); None: none."""
    match = _DIRECTIVE.search(line)
    if match is None:
        return None
    return frozenset(code.strip().upper() for code in (match.group(1) or "").split(",") if code.strip())


class Suppressions(Record):
    """For one launch: the flags written in its text, the directive on each one's line, and
    the directive on the launch's own first line."""

    written: frozenset[str] = frozenset()
    by_flag: Mapping[str, frozenset[str]] = field(default_factory=dict)
    on_launch: frozenset[str] | None = None

    def covers(self, finding: Finding) -> bool:
        placed = [flag for flag in finding.flags if flag in self.written]
        directives = [self.by_flag.get(flag) for flag in placed] if placed else [self.on_launch]
        return any(codes is not None and (not codes or finding.code in codes) for codes in directives)


NONE = Suppressions()


def suppressions_for(found: FoundLaunch | None, preset: str | None) -> Callable[[Finding], bool] | None:
    """What the ``# specguard: ignore`` comments of the launch's file silence: a script's, or a
    preset file's (a shipped preset is not the user's to annotate). A launch given on the command
    line or on stdin has no file to hold one."""
    if found is not None and not found.source.startswith("<"):
        return suppressions_in_script(found).covers
    if found is None and preset and Path(preset).is_file():
        return suppressions_in_preset(Path(preset)).covers
    return None


def suppressions_in_script(found: FoundLaunch) -> Suppressions:
    """The directives on the lines of a launch read from a script (none for a command given
    as text or on stdin: there is no file to point at)."""
    from specguard.dialects import canonical_flag

    lines: dict[str, list[str]] = {}

    def at(file: str, line: int) -> frozenset[str] | None:
        if file.startswith("<"):
            return None
        if file not in lines:
            try:
                lines[file] = Path(file).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                lines[file] = []
        text = lines[file]
        return directive(text[line - 1]) if 0 < line <= len(text) else None

    written: set[str] = set()
    by_flag: dict[str, frozenset[str]] = {}
    for index, token in enumerate(found.argv):
        if not token.startswith("-"):
            continue
        flag = canonical_flag(token.split("=", 1)[0], found.dialect)
        written.add(flag)
        codes = at(*found.location_of(index))
        if codes is not None:
            earlier = by_flag.get(flag)  # a flag written twice: both lines' directives hold
            by_flag[flag] = codes if earlier is None else (EVERY_CODE if not codes or not earlier else earlier | codes)
    return Suppressions(written=frozenset(written), by_flag=by_flag, on_launch=at(found.source, found.line))


def suppressions_in_preset(preset_file: Path) -> Suppressions:
    """The directives on a preset's ``flags:`` keys (SGLang's or slime's spelling, no dashes)."""
    from specguard.dialects import canonical_flag
    from specguard.models import Dialect

    try:
        lines = preset_file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return NONE
    written: set[str] = set()
    by_flag: dict[str, frozenset[str]] = {}
    for _, key, text in preset_flag_entries(lines):
        flag = canonical_flag("--" + key, Dialect.SLIME if key.startswith("sglang-") else Dialect.SGLANG)
        written.add(flag)
        codes = directive(text)
        if codes is not None:
            by_flag[flag] = codes
    return Suppressions(written=frozenset(written), by_flag=by_flag)


def preset_flag_entries(lines: list[str]) -> Iterator[tuple[int, str, str]]:
    """Each key under a preset's top-level ``flags:``: (line number, key, the line), read from the
    text as written (the parsed YAML has no lines); SARIF places findings with it too."""
    in_flags = False
    for number, text in enumerate(lines, 1):
        if re.match(r"[A-Za-z_]", text):  # a top-level key: are we entering `flags:`?
            in_flags = text.startswith("flags:")
            continue
        match = re.match(r"\s+([A-Za-z0-9-]+)\s*:", text)
        if in_flags and match:
            yield number, match.group(1), text
