"""A crash log read as a stream: the few lines that explain a launch and its crash, bounded.

SGLang, slime (its Ray actors), sgl-jax and ``docker logs`` write the same lines under
different prefixes; each line is cleaned of colours, timestamps and rank prefixes once, here,
and only the lines ``specguard explain`` uses are kept: the first ServerArgs line, the first
version line, command lines, the lines a crash signature may match and the error lines. Each
kind is capped and repeats (eight ranks printing one traceback) are kept once, so a log of
hundreds of MB costs one pass and little memory.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from specguard.sglang_facts.releases import NEWEST_KNOWN_SGLANG

MAX_LINE_BYTES = 256 * 1024  # a ServerArgs line is a few KB; a longer line is cut here
MAX_COMMANDS = 16
MAX_CANDIDATES = 500  # distinct (normalised) lines a signature may match
MAX_ERRORS = 200  # distinct (normalised) error lines
MAX_CONTINUATION = 4  # lines joined to an error line whose message has newlines

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
# Prefixes written before a line, repeated in any order: a docker/RFC 3339 timestamp, the
# Kubernetes (CRI) stream tag after it (`stdout F`), SGLang's `[2026-01-02 10:11:12 TP3]`, a Ray
# actor's `(SGLangEngine pid=123, ip=...)`, compose's `name  | ` and a job runner's `pod-name >> `
# (slime's cluster logs in THUDM/slime#1022 stack the last four).
_PREFIX = re.compile(
    r"^(?:\s*(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
    r"|(?:stdout|stderr) [FP](?=\s)"
    r"|\[[^\]\n]{0,80}?\d\d:\d\d[^\]\n]{0,80}\]"
    r"|\([\w.:-]+ pid=\d+(?:, ip=[\w.:-]+)?\)"
    r"|[\w.-]+\s+(?:\||>>)(?=\s))\s*)+"
)
_VERSION = re.compile(
    r"\bsglang(?:[-_]jax)?\s*(?:==|:\s*v?|\s+version:?\s*|,\s*version\s*)(\d+\.\d+\.\d+(?:\.post\d+|rc\d+)?)\b"
    r"|lmsysorg/sglang:v(\d+\.\d+\.\d+(?:\.post\d+|rc\d+)?)",
    re.IGNORECASE,
)
_COMMAND = re.compile(
    r"\bsglang(?:_router)?\.launch_server\b|\bsglang\s+serve\b|\bsgl_jax\.launch_server\b|\btrain(?:_async)?\.py\b.*--sglang-"
)
_COMMAND_WORDS = ("launch_server", "--sglang-", "sglang serve")  # one of which each _COMMAND line holds
MAX_COMMAND_LINES = 64  # a command continued with backslashes, as a thread or a job script prints it
_SGL_JAX = re.compile(r"\bsgl[-_]jax\b")
# The error lines a signature should place: a Python exception line, CUDA's and C++'s aborts.
_ERROR = re.compile(
    r"^(?:[\w.]+\.)?\w*(?:Error|Exception)\b(?::|$)|\bCUDA error\b|^terminate called|^Fatal Python error|\bAssertionError\b"
)
_ERROR_WORDS = ("Error", "Exception", "error", "terminate called")  # one of which each _ERROR line holds
_NORMALISE = (
    (re.compile(r"(?:[A-Za-z]:)?(?:/[\w.@+-]+)+/?"), "<path>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "<hex>"),
    (re.compile(r"\[\s*\d+(?:\s*,\s*\d+)*\s*\]|torch\.Size\([^)]*\)"), "<shape>"),
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),
)


class Candidate(Protocol):
    """Whether any signature may match a line (specguard/diagnosis.py's ``Prefilter``)."""

    def search(self, line: str) -> object: ...


def clean(line: str) -> str:
    """A log line without its colours and prefixes (timestamp, rank, Ray actor, compose service)."""
    return _cleaned(line)[1]


def _cleaned(line: str) -> tuple[bool, str]:
    """The line cleaned, and whether it had a prefix (a logger's line, not a message's continuation)."""
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    line = line.rstrip("\r\n")
    match = _PREFIX.match(line)
    return (True, line[match.end():]) if match and match.end() else (False, line)


def normalised(line: str) -> str:
    """A line with its paths, addresses, shapes and numbers as wildcards: one rank's error
    line and another's, or this run's and an issue thread's, compare equal."""
    for pattern, wildcard in _NORMALISE:
        line = pattern.sub(wildcard, line)
    return line.strip()


@dataclass
class LogDigest:
    """What one pass over a log kept: ``(where, cleaned line)`` pairs, ``where`` as ``file:line``."""

    server_args: tuple[str, str] | None = None
    version: tuple[str, str] | None = None
    commands: list[tuple[str, str]] = field(default_factory=list)
    candidates: list[tuple[str, str]] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    sgl_jax: bool = False
    _seen: set[str] = field(default_factory=set, repr=False)
    # The latest error line, while the next lines may continue its message: a message with
    # newlines (SGLang's radix-cache ValueError wraps) is printed as several lines, and only
    # joined does it read as SGLang wrote it. (where, text so far, lines joined, its index in errors)
    _open: tuple[str, str, int, int | None] | None = field(default=None, repr=False)
    # The latest command line while it ends in a backslash: its index in commands, lines joined.
    _command: tuple[int, int] | None = field(default=None, repr=False)

    def add(self, where: str, raw: str, candidate: Candidate) -> None:
        """Keep ``raw`` if it is of use. Each regex runs only on lines holding its literal words:
        most of a long log is healthy lines, and a regex search costs microseconds a line."""
        prefixed, line = _cleaned(raw)
        if self._command is not None and self._continue_command(self._command, line):
            return
        if not line.strip():
            self._open = None
            return
        if self._open is not None:
            if prefixed or line[:1].isspace() or _ERROR.search(line) or self._open[2] >= MAX_CONTINUATION:
                self._open = None
            else:
                self._continue(self._open, line, candidate)
                return
        if self.server_args is None and ("ServerArgs(" in line or "server_args={" in line):
            # Older releases log the dataclass (`server_args=ServerArgs(...)`); 0.5.23's engine.py
            # logs its resolved fields as a dict (`server_args={...}`, _server_args_for_logging).
            start = line.index("ServerArgs(") if "ServerArgs(" in line else line.index("server_args={") + len("server_args=")
            self.server_args = (where, line[start:])
            return
        lowered = line.lower()
        if "sgl" in lowered:
            if self.version is None and (found := _VERSION.search(line)):
                self.version = (where, found.group(1) or found.group(2))
            if not self.sgl_jax and _SGL_JAX.search(line):
                self.sgl_jax = True
        if len(self.commands) < MAX_COMMANDS and any(word in line for word in _COMMAND_WORDS) and _COMMAND.search(line):
            self.commands.append((where, line))
            self._command = (len(self.commands) - 1, 1) if line.rstrip().endswith("\\") else None
        is_error = any(word in line for word in _ERROR_WORDS) and _ERROR.search(line.lstrip()) is not None
        is_candidate = bool(candidate.search(line))
        if not (is_error or is_candidate):
            return
        key = normalised(line)
        if key in self._seen:
            return
        self._seen.add(key)
        if is_candidate and len(self.candidates) < MAX_CANDIDATES:
            self.candidates.append((where, line))
        if is_error and len(self.errors) < MAX_ERRORS:
            self.errors.append((where, line))
        if is_error:
            self._open = (where, line, 0, len(self.errors) - 1 if self.errors[-1:] == [(where, line)] else None)

    def _continue_command(self, command: tuple[int, int], line: str) -> bool:
        """Join ``line`` to the open command when it continues it; whether it did."""
        index, joined = command
        where, text = self.commands[index]
        if not line.strip() or joined >= MAX_COMMAND_LINES:
            self._command = None
            return False
        self.commands[index] = (where, f"{text}\n{line}")
        self._command = (index, joined + 1) if line.rstrip().endswith("\\") else None
        return True

    def _continue(self, opened: tuple[str, str, int, int | None], line: str, candidate: Candidate) -> None:
        where, text, joined, index = opened
        text = f"{text} {line.strip()}"
        self._open = (where, text, joined + 1, index)
        if index is not None:
            self.errors[index] = (where, text)
        if candidate.search(text) and len(self.candidates) < MAX_CANDIDATES:
            self.candidates.append((where, text))


def digest(lines: Iterable[str], source: str, candidate: Candidate) -> LogDigest:
    """One pass over the lines of ``source``."""
    found = LogDigest()
    for number, line in enumerate(lines, 1):
        found.add(f"{source}:{number}", line, candidate)
    return found


# ---------------------------------------------------------------------------- the ServerArgs line


# An enum's repr (`<LoadFormat.AUTO: 'auto'>`), outside string literals: a string such as
# '<redacted>' is a value, and is matched first so it is kept as it is.
_ENUM_REPR = re.compile(r"""('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")|<[\w.]+(?::[^<>]*)?>""")


def _without_enum_reprs(text: str) -> str:
    return _ENUM_REPR.sub(lambda found: found.group(1) or "...", text)


# What SGLang 0.5.23's resolution gives these fields when a launch leaves them unset, whatever the
# model (ServerArgs.resolved_dict() of `--model-path meta-llama/Llama-3.1-8B-Instruct`, offline):
# in the server_args={...} dict 0.5.23 logs, these values are resolution's, not the launch's.
RESOLVED_WHEN_UNSET: dict[str, Any] = {
    "enable_tf32_matmul": False,
    "swa_full_tokens_ratio": 0.8,
    "mamba_full_memory_ratio": 0.9,
    "mm_enable_dp_encoder": False,
}
# The value SGLang logs in place of a secret (sglang 0.5.23 entrypoints/engine.py, redact_watermark_secrets).
REDACTED = "<redacted>"


class TruncatedServerArgs(ValueError):
    """The ServerArgs line does not parse: cut short (a capped line, a log that stopped)."""


def server_args_fields(text: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The fields of SGLang's ``ServerArgs(...)`` repr whose values are literals, and the names
    of the others (an enum's repr, a path object): parsed with ``ast``, never evaluated."""
    if text.lstrip().startswith("{"):
        return _resolved_dict_fields(text.strip())
    start = text.find("ServerArgs(")
    body = text[start:] if start >= 0 else text
    end = body.rfind(")")
    try:
        tree = ast.parse(body[: end + 1] if end >= 0 else body, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # An enum's `<LoadFormat.AUTO: 'auto'>` is no Python: read it as `...`, which no field
        # takes as a literal (the field is reported unknown), and try once more.
        try:
            tree = ast.parse(_without_enum_reprs(body[: end + 1]), mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            raise TruncatedServerArgs("the ServerArgs(...) line does not parse (cut short?)") from None
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.func.id != "ServerArgs":
        raise TruncatedServerArgs("the ServerArgs(...) line holds more than the dataclass")
    fields: dict[str, Any] = {}
    skipped = []
    for keyword in call.keywords:
        if keyword.arg is None:
            continue
        try:
            fields[keyword.arg] = _literal(keyword.value)
        except ValueError:
            skipped.append(keyword.arg)
    return fields, tuple(skipped)


def _resolved_dict_fields(text: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The ``server_args={...}`` dict SGLang 0.5.23 logs (``ServerArgs.resolved_dict()``): the
    same field names, the values as resolution left them; parsed as the repr is, never evaluated."""
    end = text.rfind("}")
    try:
        tree = ast.parse(_without_enum_reprs(text[: end + 1]), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise TruncatedServerArgs("the server_args={...} line does not parse (cut short?)") from None
    if not isinstance(tree.body, ast.Dict):
        raise TruncatedServerArgs("the server_args={...} line holds more than the dict")
    fields: dict[str, Any] = {}
    skipped = []
    for key, value in zip(tree.body.keys, tree.body.values, strict=True):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        try:
            fields[key.value] = _literal(value)
        except ValueError:
            skipped.append(key.value)
    return fields, tuple(skipped)


def _literal(node: ast.expr) -> Any:
    """``ast.literal_eval``'s subset without sets and arithmetic: str, numbers, bool, None, and
    lists, tuples and dicts of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
        return -node.operand.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(element) for element in node.elts]
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise ValueError("** in a dict")
        return {_literal(key): _literal(value) for key, value in zip(node.keys, node.values)}  # type: ignore[arg-type]
    raise ValueError(f"not a literal: {type(node).__name__}")


@cache
def _parser_table() -> dict[str, dict[str, Any]]:
    """The newest known release's arguments by dest, with their defaults (the one dump that has them)."""
    path = Path(__file__).with_name("data") / f"sglang-{NEWEST_KNOWN_SGLANG}-flags.json"
    return {raw["dest"]: raw for raw in json.loads(path.read_text(encoding="utf-8"))["flags"] if raw.get("option_strings")}


def argv_from_fields(fields: dict[str, Any], *, release: str | None = None, resolved: bool = False) -> tuple[list[str], list[str]]:
    """The flags that give these ServerArgs fields, and the fields off their default that no flag sets.

    A field at ``release``'s default (the release that logged them: its ServerArgs's own
    defaults, ``specguard/serverargs_defaults.py``) is left out: only a change from it can explain
    a crash. ``release`` None, or a field that release's data lacks, is judged by SGLang 0.5.23's
    parser default; a field whose default is computed at start-up (``sys.maxsize``) is kept unless
    None. A field 0.5.23's parser lacks is given by the flag of its name where an earlier release
    has one, and kept only when it is on (a value that is empty or off names no flag of a known
    spelling). A value SGLang redacted is no launch's. ``resolved``: the fields are the
    server_args={...} dict 0.5.23 logs, whose values resolution has filled in; one at what
    resolution gives an unset field is left out too."""
    from specguard.serverargs_defaults import FieldDefault, defaults_at
    from specguard.versions import history

    table = _parser_table()
    release_defaults = defaults_at(release or NEWEST_KNOWN_SGLANG) or {}
    known = history().flags
    argv: list[str] = []
    unmapped: list[str] = []
    for dest, value in fields.items():
        if value == REDACTED or (resolved and dest in RESOLVED_WHEN_UNSET and value == RESOLVED_WHEN_UNSET[dest]):
            continue
        raw = table.get(dest)
        default = release_defaults.get(dest)
        if default is None and raw is not None:
            default = FieldDefault(not raw.get("default_is_repr"), raw.get("default"))
        if value is None or (default is not None and default.is_literal and value == default.value):
            continue
        if raw is None:
            option = "--" + dest.replace("_", "-")
            if value in (False, "", [], {}):
                continue
            if option in known:
                argv += _flag(option, value, switch=value is True, many=isinstance(value, list))
            else:
                unmapped.append(dest)
            continue
        option = raw["option_strings"][0]
        if raw.get("action") == "boolean_optional":
            argv.append(option if value else raw["option_strings"][-1])
        elif raw.get("nargs") == 0:
            argv += [option] if value is True else []
        else:
            argv += _flag(option, value, switch=False, many=raw.get("nargs") in ("+", "*") or isinstance(raw.get("nargs"), int))
    return argv, unmapped


def _flag(option: str, value: Any, *, switch: bool, many: bool) -> list[str]:
    if switch:
        return [option]
    if isinstance(value, list) and many:
        return [option, *(str(v) for v in value)]
    if isinstance(value, (list, dict)):
        return [option, json.dumps(value)]
    return [option, str(value)]
