"""Every flag value SGLang's own parser, or its argument checks, would refuse at a release.

A value SGLang's argument parser rejects (``--dtype banana``, ``--port abc``, a choice the
release lacks), a switch given a value (``--disable-cuda-graph true``), or a number that only
fails later (``--port 70000`` at bind time, ``--context-length -1`` once the model loads) is a
refusal naming the flag; rule VB013 reports each as a finding, beside every other rule's, so
``check`` and ``launch --dry-run`` never pass what the live launch rejects. A stray positional
argument is no value of any flag: ``check_positionals`` keeps it an input error. Types come from
SGLang's parser table (``data/sglang-0.5.23-flags.json``, ``flags.extracted_flags``; they do not
change between releases), choices from each release's parser (``versions.history``); the
converters mirror SGLang's (``sglang/srt/utils/common.py`` 0.5.23: ``human_readable_int`` line
3394, ``json_list_type`` line 4818, ``nullable_str`` 3388).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable

from specguard.dialects import spelled
from specguard.errors import InputError
from specguard.flags import FLAGS_BY_NAME, ExtractedFlag, ValueKind, extracted_flags
from specguard.models import Dialect
from specguard.records import Record, replace
from specguard.sglang_facts.releases import NEWEST_KNOWN_SGLANG
from specguard.spec import FlagItem, LaunchSpec, convert, shown_value

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
TABLE_VERSION = NEWEST_KNOWN_SGLANG  # the release whose parser table flags.extracted_flags() reads by default
_HUMAN_READABLE = re.compile(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)")
_IEC = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
_SI = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


class Refusal(Record, kw_only=False):
    """One value a release refuses: what is wrong, and what would do instead."""

    flag: str  # SGLang's spelling, as findings name flags
    written: str  # as the user wrote it
    problem: str  # the message, naming the flag as written
    hint: str
    replacement: str | None = None  # the closest valid choice, when the value is a misspelled one
    accepted_from: str | None = None  # a later release whose parser takes this choice


def check_positionals(spec: LaunchSpec) -> None:
    """Raise ``InputError`` on a positional argument that follows no switch: no flag owns it, so
    it is not a value to judge but a launch specguard cannot read (a value after a switch is
    a refusal, ``refused_values``)."""
    previous: FlagItem | None = None
    for item in spec.items:
        if item.flag == "" and _switch_given(item, previous) is None:
            raise InputError(
                f"stray argument {item.values[0]!r}: SGLang's launcher takes no positional arguments",
                hint="remove it, or put it after the flag it belongs to (quote a value that holds spaces)",
            )
        previous = item


def refused_values(spec: LaunchSpec, release: str = TABLE_VERSION) -> tuple[Refusal, ...]:
    """Every value SGLang ``release`` would refuse, in launch order."""
    from specguard.versions import history

    data = history()
    index = None if spec.dialect is Dialect.SGL_JAX else data.index_of(release)
    # sgl-jax has a parser of its own (other choices: --attention-backend fa); the table is SGLang's.
    table = {} if spec.dialect is Dialect.SGL_JAX else extracted_flags()
    found: list[Refusal] = []
    previous: FlagItem | None = None
    for item in spec.items:
        if item.flag == "":
            switch = _switch_given(item, previous)
            if switch is not None:
                found.append(_switch_refusal(switch, item.values[0], spec.dialect))
        elif not item.extra:
            refusal = _refusal(item, _written(item, spec.dialect), table.get(item.flag), index, spec.dialect)
            if refusal is not None:
                found.append(refusal)
        previous = item
    return tuple(found)


def _written(item: FlagItem, dialect: Dialect) -> str:
    return item.written or spelled(item.flag, dialect)


def _switch_given(item: FlagItem, previous: FlagItem | None) -> FlagItem | None:
    """The switch a positional argument was written after (the parser takes no value for it)."""
    if item.flag == "" and previous is not None and previous.flag and not previous.values:
        return previous
    return None


def _switch_refusal(switch: FlagItem, value: str, dialect: Dialect) -> Refusal:
    written = _written(switch, dialect)
    return Refusal(switch.flag, written, f"{written} is a switch and takes no value, got {shown_value(value)}", f"write {written} alone (present means on)")


def _refusal(item: FlagItem, written: str, entry: ExtractedFlag | None, index: int | None, dialect: Dialect) -> Refusal | None:
    modeled = FLAGS_BY_NAME.get(item.flag)
    switch = (modeled is not None and modeled.kind is ValueKind.SWITCH) or (
        entry is not None and (entry.nargs == 0 or entry.action in ("store_true", "store_false", "store_const"))
    )
    if item.values and switch:
        return _switch_refusal(item, item.values[0], dialect)
    if modeled is not None:
        try:
            convert(replace(modeled, choices=None), item.values, written)
        except InputError as error:
            return Refusal(item.flag, written, error.message, error.hint or f"see {written} in `python -m sglang.launch_server --help`")
    if entry is not None:
        refusal = _typed_refusal(item, written, entry)
        if refusal is not None:
            return refusal
    choice = _choice_refusal(item, written, modeled.choices if modeled is not None else None, index)
    if choice is not None:
        return choice
    if item.flag in GRAPH_BS_FLAGS:  # older spellings are not in the table: checked by name
        return _graph_bs_refusal(item, written)
    return None


def _typed_refusal(item: FlagItem, written: str, entry: ExtractedFlag) -> Refusal | None:
    if entry.nargs == "+" and not item.values:
        return Refusal(item.flag, written, f"{written} expects at least one value", f"write {written} VALUE [VALUE ...]")
    convert_value = _CONVERTERS.get(entry.type or "")
    for value in item.values:
        typed: object = value
        if convert_value is not None:
            try:
                typed = convert_value(value)
            except (ValueError, ArithmeticError):  # decimal.InvalidOperation is an ArithmeticError
                return Refusal(
                    item.flag, written, f"{written} expects {_NAMES[entry.type or '']}, got {shown_value(value)}",
                    _HINTS.get(entry.type or "", f"see {written} in `python -m sglang.launch_server --help`"),
                )
        outside = _out_of_range(item.flag, typed)
        if outside is not None:
            what, hint = outside
            return Refusal(item.flag, written, f"{written} {shown_value(value)} {what}", hint)
    return None


def _out_of_range(flag: str, typed: object) -> tuple[str, str] | None:
    """(what is wrong, what to give) when a typed value is one no server can use."""
    if flag in FRACTION_FLAGS and isinstance(typed, float) and not 0 < typed <= 1:
        return "is not a fraction of GPU memory", "give a number above 0 and at most 1, e.g. 0.8"
    bounds = INTEGER_RANGES.get(flag)
    if bounds is not None and isinstance(typed, int):
        low, high = bounds
        if typed < low or (high is not None and typed > high):
            return "is out of range", f"give {low}-{high}" if high is not None else f"give {low} or more"
    return None


def usable(flag: str, typed: object) -> bool:
    """Whether the rules may reason on a typed value: not out of range, and no CUDA-graph batch
    size a list could not hold (``LaunchSpec.get`` reads a refused value as unset)."""
    if flag in GRAPH_BS_FLAGS and any(isinstance(size, int) and size > MAX_GRAPH_BS for size in (typed if isinstance(typed, list) else [typed])):
        return False
    return _out_of_range(flag, typed) is None


def _choices_at(flag: str, index: int, modeled: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The choices release ``index``'s parser, or the argument check after it, takes for ``flag``
    (None: any value). From 0.5.12 SGLang checks --speculative-algorithm after parsing, against
    its algorithm registry, and the parser lists no choices: the modeled ones stand in."""
    from specguard.versions import history

    info = history().flag_info(flag, index)
    listed = info.get("choices") if info is not None else None
    return tuple(str(c) for c in listed) if listed else modeled


def _takes(flag: str, value: str, index: int, modeled: tuple[str, ...] | None) -> bool:
    from specguard.versions import history

    if history().flag_info(flag, index) is None:
        return False
    choices = _choices_at(flag, index, modeled)
    return not choices or value in choices


def _choice_refusal(item: FlagItem, written: str, modeled: tuple[str, ...] | None, index: int | None) -> Refusal | None:
    if index is None:
        return None
    from specguard.versions import history

    data = history()
    if data.flag_info(item.flag, index) is None:
        return None  # not this release's flag: the unknown-flag rules speak of it
    choices = _choices_at(item.flag, index, modeled)
    if not choices:
        return None
    for value in item.values:
        if value in choices:
            continue
        from specguard.spelling import closest

        later = next((i for i in range(index + 1, len(data.releases)) if _takes(item.flag, value, i, modeled)), None)
        close = closest(value, choices)
        hint = f"choose one of {', '.join(choices)}"
        if value.upper() == "MTP":
            hint = "SGLang has no algorithm named MTP: use NEXTN (or EAGLE) for a model's own MTP layers"
        return Refusal(
            item.flag, written, f"{written}: {shown_value(value)} is not one of SGLang {data.releases[index]}'s choices", hint,
            replacement=close[0] if close else None,
            accepted_from=data.releases[later] if later is not None else None,
        )
    return None


def _graph_bs_refusal(item: FlagItem, written: str) -> Refusal | None:
    for value in item.values:
        try:
            size = int(value)
        except ValueError:
            continue  # not a number: the parser table's check names it
        if size > MAX_GRAPH_BS:
            return Refusal(
                item.flag, written,
                f"{written} {shown_value(value)}: SGLang lists every CUDA-graph batch size up to it when it parses its arguments",
                f"give at most {MAX_GRAPH_BS} (the running requests a GPU can hold are far fewer)",
            )
    return None


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
