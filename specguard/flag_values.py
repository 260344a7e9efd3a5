"""Check every flag value as SGLang's own parser would, before any rule runs.

A value SGLang's argument parser rejects (``--dtype banana``, ``--port abc``), a switch given a
value (``--disable-cuda-graph true``), a stray positional argument, or a number that only fails
later (``--port 70000`` at bind time, ``--context-length -1`` once the model loads) is an input
error naming the flag, so ``check`` and ``launch --dry-run`` never pass what the live launch
rejects. Types and choices come from SGLang's parser table (``data/sglang-0.5.23-flags.json``,
``flags.extracted_flags``); the converters mirror SGLang's (``sglang/srt/utils/common.py``
0.5.23: ``human_readable_int`` line 3394, ``json_list_type`` line 4818, ``nullable_str`` 3388).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable

from specguard.dialects import spelled
from specguard.errors import InputError
from specguard.flags import ExtractedFlag, extracted_flags
from specguard.models import Dialect
from specguard.spec import FlagItem, LaunchSpec, shown_value

# Flags whose value SGLang's parser takes as any integer but whose use needs a positive one: a
# port outside 1-65535 fails at bind time (after the weights load), a port of 0 asks the OS for
# any port while the launcher polls the one it was told; sizes and counts below 1 make no server.
INTEGER_RANGES: dict[str, tuple[int, int | None]] = {
    "--port": (1, 65535),
    "--context-length": (1, None),
    "--tp-size": (1, None),
    "--dp-size": (1, None),
    "--pp-size": (1, None),
    "--ep-size": (1, None),
    "--nnodes": (1, None),
    "--max-running-requests": (1, None),
    "--page-size": (1, None),
}
# SGLang takes --mem-fraction-static as any float and multiplies the free memory by it
# (``kv_cache_configurator.py`` ``_profile_available_bytes``): only a fraction in (0, 1] sizes a pool.
FRACTION_FLAGS = ("--mem-fraction-static",)
# SGLang lists every batch size it will capture while it parses its arguments, one per size
# without padding (``arg_groups/cuda_graph_hook.py:500-512``, ``range(1, max_bs + 1)``): a
# largest batch in the millions is a list no process holds, and graphs no GPU captures.
MAX_GRAPH_BS = 2**20
GRAPH_BS_FLAGS = ("--cuda-graph-max-bs", "--cuda-graph-max-bs-decode", "--cuda-graph-bs", "--cuda-graph-bs-decode")
TABLE_VERSION = "0.5.23"  # the release whose parser table flags.extracted_flags() reads by default
_HUMAN_READABLE = re.compile(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)")
_IEC = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
_SI = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def check_values(spec: LaunchSpec, *, release: str = TABLE_VERSION) -> None:
    """Raise ``InputError`` on the first value SGLang ``release`` would reject. Types come from
    the parser table (they do not change between releases); its choices are 0.5.23's, so they
    apply only at that release. Another release's choices are not enforced here: a launch dated
    to an older release may run a build from between two releases (sglang#3724's NEXTN on a
    main build before 0.4.3.post2 listed it), and exit 2 would hide every other finding; a
    refused choice at the launch's release belongs among the findings, with a rule code."""
    # sgl-jax has a parser of its own (other choices: --attention-backend fa); the table is SGLang's.
    table = {} if spec.dialect is Dialect.SGL_JAX else extracted_flags()
    previous: FlagItem | None = None
    for item in spec.items:
        if item.flag == "":
            _positional(item.values[0], previous, spec.dialect)
        elif not item.extra:
            entry = table.get(item.flag)
            if entry is not None:
                choices = entry.choices if release == TABLE_VERSION else None
                _check_item(item, item.written or spelled(item.flag, spec.dialect), entry, choices, release)
            if item.flag in GRAPH_BS_FLAGS:  # older spellings are not in the table: checked by name
                _check_graph_bs(item, item.written or spelled(item.flag, spec.dialect))
        previous = item


def _positional(value: str, previous: FlagItem | None, dialect: Dialect) -> None:
    if previous is not None and previous.flag and not previous.values:
        written = previous.written or spelled(previous.flag, dialect)
        raise InputError(f"{written} is a switch and takes no value, got {value!r}", hint=f"write {written} alone (present means on)")
    raise InputError(
        f"stray argument {value!r}: SGLang's launcher takes no positional arguments",
        hint="remove it, or put it after the flag it belongs to (quote a value that holds spaces)",
    )


def _check_item(item: FlagItem, written: str, entry: ExtractedFlag, choices: tuple[object, ...] | None, release: str) -> None:
    if entry.nargs == "+" and not item.values:
        raise InputError(f"{written} expects at least one value", hint=f"write {written} VALUE [VALUE ...]")
    convert = _CONVERTERS.get(entry.type or "")
    for value in item.values:
        typed: object = value
        if convert is not None:
            try:
                typed = convert(value)
            except (ValueError, ArithmeticError):  # decimal.InvalidOperation is an ArithmeticError
                raise InputError(f"{written} expects {_NAMES[entry.type or '']}, got {shown_value(value)}", hint=_HINTS.get(entry.type or "", f"see {written} in `python -m sglang.launch_server --help`")) from None
        if choices is not None and typed not in choices and str(typed) not in map(str, choices):
            listed = ", ".join(str(c) for c in choices)
            raise InputError(f"{written}: {shown_value(value)} is not one of SGLang {release}'s choices", hint=f"choose one of {listed}")
        if item.flag in FRACTION_FLAGS and isinstance(typed, float) and not 0 < typed <= 1:
            raise InputError(f"{written} {value} is not a fraction of GPU memory", hint="give a number above 0 and at most 1, e.g. 0.8")
        bounds = INTEGER_RANGES.get(item.flag)
        if bounds is not None and isinstance(typed, int):
            low, high = bounds
            if typed < low or (high is not None and typed > high):
                allowed = f"{low}-{high}" if high is not None else f"{low} or more"
                raise InputError(f"{written} {value} is out of range", hint=f"give {allowed}")


def _check_graph_bs(item: FlagItem, written: str) -> None:
    for value in item.values:
        try:
            size = int(value)
        except ValueError:
            continue  # not a number: the parser table's check names it
        if size > MAX_GRAPH_BS:
            raise InputError(
                f"{written} {shown_value(value)}: SGLang lists every CUDA-graph batch size up to it when it parses its arguments",
                hint=f"give at most {MAX_GRAPH_BS} (the running requests a GPU can hold are far fewer)",
            )


def _int(value: str) -> int:
    return int(value)


def _finite_float(value: str) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(value)  # argparse takes nan/inf; no SGLang setting means anything with them
    return number


def _human_readable_int(value: str) -> int:
    text = value.strip()
    match = _HUMAN_READABLE.fullmatch(text)
    if match:
        number, suffix = match.groups()
        if suffix in _IEC:
            if "." in number:
                raise ValueError(value)
            return int(number) * _IEC[suffix]
        from decimal import (
            Decimal,  # SGLang's own arithmetic for "25.6k", only when a suffix is used
        )

        return int(Decimal(number) * _SI[suffix])
    return int(text)


def _json(value: str) -> object:
    document = json.loads(value)
    if isinstance(document, float) and not math.isfinite(document):
        raise ValueError(value)
    return document


_CONVERTERS: dict[str, Callable[[str], object]] = {
    "int": _int,
    "float": _finite_float,
    "human_readable_int": _human_readable_int,
    "json": _json,
    "json_list_type": _json,
}
_NAMES = {"int": "an integer", "float": "a finite number", "human_readable_int": "an integer (1k, 1Ki accepted)", "json": "JSON", "json_list_type": "a JSON list"}
_HINTS = {
    "int": "write a whole number such as 8",
    "float": "write a number such as 0.8",
    "human_readable_int": "write a whole number such as 4096, 4k or 4Ki",
    "json": "write valid JSON, quoted for the shell: '{\"key\": 1}'",
    "json_list_type": "write a JSON list, quoted for the shell: '[1, 2]'",
}
