"""The messages SGLang's speculative path can fail with, release by release.

The data (``specguard/data/sglang-crash-strings.json``) is written by
``scripts/extract_sglang_units.py`` from every release's wheel: each ``raise``, ``assert`` and
error log in the code a speculative launch runs through (the ledger's scope), with its message
as a template (``WILDCARD`` where an f-string, ``%`` or ``.format`` interpolates a value; a bare
assert's message is its source line, which is what its traceback shows), the file inside
``sglang/`` and the qualified function, and the first and last release that hold it. It is read
lazily, the first time it is asked for.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from specguard.records import Record

STRINGS_FILE = Path(__file__).with_name("data") / "sglang-crash-strings.json"
WILDCARD = "<*>"


class CrashString(Record):
    """One message SGLang can print, where it lives and the releases that hold it."""

    message: str
    exception: str  # the exception's type name, "assert" or "log"
    file: str  # inside the sglang package, e.g. "srt/speculative/eagle_worker.py"
    function: str  # qualified: "EAGLEWorker.forward_draft_extend"
    first: str
    last: str


@cache
def crash_strings() -> tuple[CrashString, ...]:
    return tuple(CrashString(**entry) for entry in json.loads(STRINGS_FILE.read_text(encoding="utf-8")))


@cache
def _pattern(message: str) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(part) for part in message.split(WILDCARD)), re.DOTALL)


def matching(text: str) -> list[CrashString]:
    """The crash strings whose template occurs in ``text``, longest template first (the most
    specific message names the check best)."""
    found = [entry for entry in crash_strings() if len(entry.message.replace(WILDCARD, "")) >= 12 and _pattern(entry.message).search(text)]
    return sorted(found, key=lambda entry: -len(entry.message))
