"""Parse JSON that came from outside (a model folder, a prompts file) strictly, as one line on failure.

Python's ``json`` reads more than JSON and fails in ways the CLI cannot name: ``NaN``,
``Infinity`` and ``1e999`` become floats no config or header means; a 200,000-deep array raises
``RecursionError``; an integer of more than 4300 digits raises a bare ``ValueError``
(``int_max_str_digits``). Each is an ``InputError`` here, naming the file as the caller labels it.
"""

from __future__ import annotations

import json
import math
from typing import Any

from specguard.errors import InputError, echoed


def parse_json(text: str | bytes, label: str, *, hint: str) -> Any:
    """The document ``text`` holds; ``label`` names it in every message (a path, ``path:line``)."""

    def reject_constant(name: str) -> None:
        raise InputError(f"{label} holds {name}, which is not JSON", hint=hint)

    def finite_float(literal: str) -> float:
        number = float(literal)
        if not math.isfinite(number):
            raise InputError(f"{label} holds {literal if len(literal) <= 24 else literal[:21] + '...'}, too large for a number", hint=hint)
        return number

    if isinstance(text, bytes):
        # JSON between systems is UTF-8 (RFC 8259), as transformers and safetensors read it;
        # json.loads would guess UTF-16 or UTF-32 from the first bytes instead.
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(f"cannot read {label}: not UTF-8 text (byte {error.start})", hint=f"{hint} (JSON's encoding is UTF-8)") from None
    try:
        return json.loads(text, parse_constant=reject_constant, parse_float=finite_float)
    except RecursionError:
        raise InputError(f"{label} is nested too deeply to be read", hint=hint) from None
    except json.JSONDecodeError as error:
        raise InputError(f"{label} is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})", hint=hint) from None
    except ValueError:
        # Python refuses to convert integers of more than 4300 digits (int_max_str_digits).
        raise InputError(f"{label} holds a number too long to be read", hint=hint) from None


def shown(value: Any) -> str:
    """A parsed JSON value for a one-line message, as JSON writes it."""
    return echoed(json.dumps(value))
