#!/usr/bin/env python3
"""Extract the behavioural units of every consecutive SGLang release pair, for the release ledger.

Each release's wheel is read statically (``ast``; nothing of SGLang is imported or run) over the
code a speculative launch runs through. The scope, as a rule a reviewer can check:

- whole files: ``srt/speculative/**``; ``srt/arg_groups/*`` and ``srt/models/*`` files whose name
  mentions a speculative keyword (``KEYWORD`` below: speculative, eagle, draft, mtp, nextn, ngram,
  dflash);
- ``srt/models/*``: functions whose name is an EAGLE/MTP hook (``HOOK_FUNCTION``:
  ``set_eagle3_layers_to_capture``, ``get_embed_and_head``, ...) and classes whose name mentions
  Eagle, NextN or MTP;
- ``srt/server_args.py``, ``srt/arg_groups/**``, ``srt/model_executor/**`` (``model_runner.py``,
  the CUDA-graph runners and their 0.5.2x split-outs), ``srt/layers/attention/**``,
  ``srt/mem_cache/**``, ``srt/disaggregation/**``, ``srt/constrained/**``, ``srt/lora/**`` and
  ``srt/layers/dp_attention.py``: a function whose name mentions a keyword is taken whole; of any
  other function, only its *speculative slice*: the statements that mention a speculative marker
  (``MARKER``: the algorithm, spec_info, draft, target-verify and draft-extend modes, and in the
  attention backends the tree width ``topk``), an ``if`` whose test mentions one taken with both branches.

Per release pair the units are (id = pair|file|function|kind, then |key where a function holds several of a kind; function
is empty for a file's units):

- ``guard-added`` / ``guard-removed`` / ``guard-changed``: a ``raise``, ``assert`` or error log
  whose condition (the enclosing ``if`` tests and the assert's test) reads launch-visible state
  (a server-arg name, the algorithm, model config, env vars, the device);
- ``default-changed``: a server arg's declared default (fields whose name mentions a keyword),
  ``auto-choice-changed``: what ``server_args.py``/``arg_groups`` assign to a server arg (value
  and condition; an assignment or a ``declare_resolution`` keyword), ``env-default-changed``: the default of an ``SGLANG_*`` variable the scope reads;
- ``support-changed``: a literal list in an ``in``/``not in`` test or a module-level list in the
  scope, changed; or the body of an ``is_*``/``supports_*`` predicate, changed;
- ``file-added``/``file-removed``, ``class-added``/``class-removed``,
  ``function-added``/``function-removed`` (a file's units cover its classes and functions; a
  class's cover its methods). A function gone from one place and present, with the same
  normalised body, in another is a move, not a unit; when one short name leaves and arrives
  once in the pair, it is a move whose body is compared. Likewise a guard that leaves one
  function and arrives in another with the same exception and message is a move (a
  guard-changed unit where its condition changed);
- ``body-changed``: a function whose normalised AST (docstrings and annotations dropped; the
  guards, support lists and server-arg assignments above blanked, so they are not counted twice)
  differs.

``changed_lines`` counts the added and removed lines of a unified diff over the scope's text
(whole files; the slices of the other functions), so the figures show how much was triaged away.

Writes ``ledger/sglang/<old>..<new>.yaml`` (one file per pair; existing reviews are kept, a new
unit is added unreviewed, a unit the generator no longer finds is dropped) and
``specguard/data/sglang-crash-strings.json`` (every raise/assert/error-log message in the scope,
with the first and last release holding it). ``--check`` regenerates and reports the ledger's
missing and stale ids instead of writing. Wheels are cached in ``--wheels`` and downloaded with
``extract_sglang_flags.download``; per-release extractions are cached beside them.

    python scripts/extract_sglang_units.py                   # all pairs, write ledger and strings
    python scripts/extract_sglang_units.py --check           # exit 1 when the ledger lacks a unit
    python scripts/extract_sglang_units.py --only 0.5.22..0.5.23 --check
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import itertools
import json
import pickle
import re
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from extract_sglang_flags import DEFAULT_RELEASES_FILE, download, release_list

ROOT = Path(__file__).resolve().parent.parent
LEDGER = ROOT / "ledger" / "sglang"
CRASH_STRINGS = ROOT / "specguard" / "data" / "sglang-crash-strings.json"
HISTORY = ROOT / "specguard" / "data" / "sglang-history.json"
# Bumped whenever what one release's extraction holds changes (invalidates the cache).
EXTRACTOR_VERSION = "7"

KEYWORD = re.compile(r"specul|eagle|draft|mtp|nextn|ngram|dflash", re.IGNORECASE)
MARKER = re.compile(r"specul|spec_algorithm|spec_info|eagle|draft|mtp|nextn|ngram|dflash|target_verify|TARGET_VERIFY|DRAFT_EXTEND|is_verify", re.IGNORECASE)
# The speculative tree's width; sparse-attention index names (``index_topk``, ``topk_indices``) are not it.
ATTENTION_MARKER = re.compile(MARKER.pattern + r"|^(?:speculative_eagle_|eagle_|spec_)?topk$", re.IGNORECASE)
HOOK_FUNCTION = re.compile(r"set_eagle3_layers_to_capture|get_embed_and_head|set_embed_and_head|eagle|nextn|mtp|draft")
HOOK_CLASS = re.compile(r"eagle|nextn|mtp", re.IGNORECASE)
SLICED_PREFIXES = (
    "srt/server_args.py",
    "srt/arg_groups/",
    "srt/model_executor/",
    "srt/layers/attention/",
    "srt/mem_cache/",
    "srt/disaggregation/",
    "srt/constrained/",
    "srt/lora/",
    "srt/layers/dp_attention.py",
)
ARG_DOMAIN = ("srt/server_args.py", "srt/arg_groups/")
# State a launch shows: read by a guard's condition, it makes the guard a launch-time check.
LAUNCH_STATE = re.compile(
    r"server_args|spec_algorithm|speculative|model_config|hf_config|hf_text_config|text_config|architectures|quant_config|"
    r"envs|SGLANG_|get_bool_env_var|get_int_env_var|getenv|environ|dtype|"
    # 0.5.2x publishes the server args as runtime-context groups and views.
    r"attn_dp_enabled|get_spec|get_parallel|get_memory|get_exec|get_schedule|resolved_view|resolving_view|current_platform|get_platform|"
    r"_?is_(cuda|hip|npu|cpu|xpu|musa|sm\d+\w*|blackwell\w*|hopper\w*|flashinfer_available)|get_device_capability|device_capability|get_device_sm",
)
LOG_ERROR = {"error", "critical", "exception", "fatal"}
WILDCARD = "<*>"
RECEIVER = re.compile(r"\b(self|server_args|args|cfg)\.")
PRINTF = re.compile(r"%[-#0 +]*\d*(?:\.\d+)?[sdifrxXeEgGc%]")
FORMAT_FIELD = re.compile(r"\{[^{}]*\}")


# ---------------------------------------------------------------------------------------------
# What one release holds
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Guard:
    kind: str  # raise, assert, log
    exception: str  # the exception's type name, "assert" or "log"
    message: str  # the message template (WILDCARD where a value is interpolated); "" when none
    condition: str  # the enclosing if-tests (and the assert's test), joined by " and "
    visible: bool  # the condition reads launch-visible state

    @property
    def key(self) -> str:
        return digest(f"{self.exception}|{self.message or self.normal_condition}")

    @property
    def normal_condition(self) -> str:
        """The condition with the server-args receiver renamed away (0.5.19 reads ``cfg.x``
        where 0.5.18 read ``server_args.x`` and ``ServerArgs`` methods ``self.x``)."""
        return RECEIVER.sub("args.", self.condition)


@dataclass
class Function:
    whole: bool
    blanked: str  # digest of the normalised AST, guards, support lists and server-arg assignments blanked
    guards: list[Guard]
    supports: dict[str, list[str]]  # unparsed left side of an `in` test -> the literal list
    assigns: dict[str, list[str]]  # server arg -> sorted "value if condition" (arg domain only)
    env: set[str]
    lines: list[str]


@dataclass
class SourceFile:
    whole: bool
    classes: set[str] = field(default_factory=set)
    functions: dict[str, Function] = field(default_factory=dict)
    constants: dict[str, list[str]] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    defined: set[str] = field(default_factory=set)  # every function of the file, in scope or not


@dataclass
class Release:
    version: str
    files: dict[str, SourceFile]
    paths: set[str]  # every module under srt/, to tell a new file from one that entered the scope
    env_defaults: dict[str, str]  # SGLANG_* -> unparsed default, as declared or read


def digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]


def in_scope(path: str) -> str | None:
    """'whole', 'models' or 'sliced' for a path inside sglang/, else None."""
    name = path.rsplit("/", 1)[-1]
    if "/tests/" in path or name.startswith("test_"):
        return None  # tests a wheel happens to ship are not code a launch runs
    if path.startswith("srt/speculative/"):
        return "whole"
    if path.startswith("srt/models/"):
        return "whole" if KEYWORD.search(name) else "models"
    if path.startswith("srt/arg_groups/") and KEYWORD.search(name):
        return "whole"
    if path.startswith(SLICED_PREFIXES):
        return "sliced"
    return None


def template(node: ast.AST | None) -> str | None:
    """A message's text with every interpolated value replaced by WILDCARD; None when not literal."""
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
            else:
                parts.append(WILDCARD)
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = template(node.left), template(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else WILDCARD) + (right if right is not None else WILDCARD)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and (left := template(node.left)) is not None:
        return PRINTF.sub(WILDCARD, left)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        base = template(node.func.value)
        return FORMAT_FIELD.sub(WILDCARD, base) if base is not None else None
    return None


def _call_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _call_name(node.func)
    return ""


def _names(node: ast.AST) -> Iterator[str]:
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            yield child.id
        elif isinstance(child, ast.Attribute):
            yield child.attr
        elif isinstance(child, ast.Constant) and isinstance(child.value, str):
            yield child.value


def launch_visible(condition: Iterable[ast.AST], server_args: frozenset[str]) -> bool:
    return any(name in server_args or LAUNCH_STATE.search(name) for test in condition for name in _names(test))


def guard_of(statement: ast.stmt, conditions: list[ast.expr], source: list[str], server_args: frozenset[str]) -> Guard | None:
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        exc = statement.exc
        exception = _call_name(exc)
        if not exception or not exception[:1].isupper():
            return None  # `raise error` re-raises something built elsewhere
        message = template(exc.args[0]) if isinstance(exc, ast.Call) and exc.args else ""
        return Guard("raise", exception, message or "", _joined(conditions), launch_visible(conditions, server_args))
    if isinstance(statement, ast.Assert):
        message = template(statement.msg)
        if statement.msg is None:
            # A bare assert's traceback shows the statement's first source line.
            message = source[statement.lineno - 1].strip() if statement.lineno <= len(source) else ast.unparse(statement)
        tests = [*conditions, statement.test]
        return Guard("assert", "assert", message or "", _joined(tests), launch_visible(tests, server_args))
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        if isinstance(call.func, ast.Attribute) and call.func.attr in LOG_ERROR and _call_name(call.func.value) in {"logger", "logging", "log", "_logger"}:
            message = template(call.args[0]) if call.args else None
            if message is not None and not isinstance(call.args[0], (ast.JoinedStr, ast.BinOp, ast.Call)):
                message = PRINTF.sub(WILDCARD, message)
            return Guard("log", "log", message or "", _joined(conditions), launch_visible(conditions, server_args))
    return None


def _joined(tests: list[ast.expr]) -> str:
    return " and ".join(_operand(test) if len(tests) > 1 else ast.unparse(test) for test in tests)


def _operand(test: ast.expr) -> str:
    """A test as one operand of ``and``: an ``or``, conditional or walrus keeps its parentheses."""
    text = ast.unparse(test)
    loose = isinstance(test, (ast.IfExp, ast.NamedExpr, ast.Lambda)) or isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or)
    return f"({text})" if loose else text


def _not(test: ast.expr) -> ast.expr:
    return ast.UnaryOp(op=ast.Not(), operand=test)


def walk_guards(body: list[ast.stmt], conditions: list[ast.expr], source: list[str], server_args: frozenset[str]) -> Iterator[tuple[ast.stmt, Guard]]:
    """Every guard statement in ``body`` with the if-tests that lead to it (nested defs excluded)."""
    for statement in body:
        guard = guard_of(statement, conditions, source, server_args)
        if guard is not None:
            yield statement, guard
        if isinstance(statement, ast.If):
            yield from walk_guards(statement.body, [*conditions, statement.test], source, server_args)
            yield from walk_guards(statement.orelse, [*conditions, _not(statement.test)], source, server_args)
        elif isinstance(statement, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
            yield from walk_guards(statement.body, conditions, source, server_args)
            yield from walk_guards(getattr(statement, "orelse", []), conditions, source, server_args)
        elif isinstance(statement, ast.Try):
            for block in (statement.body, statement.orelse, statement.finalbody, *[h.body for h in statement.handlers]):
                yield from walk_guards(block, conditions, source, server_args)
        elif isinstance(statement, ast.Match):
            for case in statement.cases:
                yield from walk_guards(case.body, conditions, source, server_args)


def mentions(node: ast.AST, marker: re.Pattern[str]) -> bool:
    return any(marker.search(name) for name in _names(node))


def speculative_slice(body: list[ast.stmt], marker: re.Pattern[str]) -> list[ast.stmt]:
    """The statements of ``body`` that mention a marker: an ``if`` whose test does, whole; else
    the marked statements inside compound ones, recursively."""
    picked: list[ast.stmt] = []
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(statement, ast.If) and mentions(statement.test, marker):
            picked.append(statement)
            continue
        blocks = _blocks(statement)
        if blocks:
            for block in blocks:
                picked += speculative_slice(block, marker)
        elif mentions(statement, marker):
            picked.append(statement)
    return picked


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(statement, ast.If):
        return [statement.body, statement.orelse]
    if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
        return [statement.body, statement.orelse]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [statement.body]
    if isinstance(statement, ast.Try):
        return [statement.body, statement.orelse, statement.finalbody, *[h.body for h in statement.handlers]]
    if isinstance(statement, ast.Match):
        return [case.body for case in statement.cases]
    return []


_SKIPPED_FIELDS = {"annotation", "returns", "type_comment", "type_params", "ctx", "kind"}


def _dump(node: object, blank: set[int]) -> str:
    """A compact structural text of ``node``: docstrings and annotations dropped, the nodes in
    ``blank`` (guards and lists the finer units cover) written as ``_``."""
    if isinstance(node, list):
        items = node
        if items and isinstance(items[0], ast.Expr) and isinstance(items[0].value, ast.Constant) and isinstance(items[0].value.value, str):
            items = items[1:]
        return "[" + ",".join(_dump(item, blank) for item in items) + "]"
    if not isinstance(node, ast.AST):
        return repr(node)
    if id(node) in blank:
        return "_"
    if isinstance(node, ast.AnnAssign):
        return "Assign(" + _dump(node.target, blank) + "," + _dump(node.value, blank) + ")"
    if isinstance(node, ast.Constant):
        return repr(node.value)
    fields = ",".join(_dump(value, blank) for name, value in ast.iter_fields(node) if name not in _SKIPPED_FIELDS)
    return f"{type(node).__name__}({fields})"


def normalised(nodes: list[ast.stmt], blank: set[int] | None = None) -> str:
    return digest(_dump(nodes, blank or set()))


def _literal_list(node: ast.AST) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and node.elts and all(isinstance(e, ast.Constant) for e in node.elts):
        return sorted(repr(e.value) for e in node.elts)  # type: ignore[attr-defined]
    if isinstance(node, ast.Call) and _call_name(node.func) in {"frozenset", "set", "tuple", "list"} and len(node.args) == 1:
        return _literal_list(node.args[0])
    return None


def _arg_target(node: ast.AST) -> str | None:
    """``self.x`` / ``server_args.x`` / ``args.x``: the server arg a statement assigns."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in {"self", "server_args", "args"}:
        return node.attr
    return None


def _arg_text(node: ast.AST) -> str:
    return RECEIVER.sub("args.", ast.unparse(node))


def read_function(path: str, node: ast.FunctionDef | ast.AsyncFunctionDef, whole: bool, marker: re.Pattern[str], source: list[str], server_args: frozenset[str]) -> Function | None:
    body = node.body if whole else speculative_slice(node.body, marker)
    if not body:
        return None
    blank: set[int] = set()
    guards = []
    for statement, guard in walk_guards(body, [], source, server_args):
        guards.append(guard)
        if guard.visible:
            blank.add(id(statement))
    _blank_guarding_ifs(body, blank)
    supports: dict[str, list[str]] = {}
    for statement in body:
        for child in ast.walk(statement):
            if isinstance(child, ast.Compare) and len(child.ops) == 1 and isinstance(child.ops[0], (ast.In, ast.NotIn)):
                if (members := _literal_list(child.comparators[0])) is not None:
                    supports[ast.unparse(child.left)] = sorted(set(supports.get(ast.unparse(child.left), [])) | set(members))
                    blank.add(id(child.comparators[0]))
    assigns: dict[str, list[str]] = {}
    if path.startswith(ARG_DOMAIN):
        for name, value, conditions in _assignments(body, []):
            condition = " and ".join(_arg_text(c) for c in conditions)
            assigns.setdefault(name, []).append(_arg_text(value) + (f" if {condition}" if condition else ""))
            blank.add(id(value))
    env = {name for statement in body for name in _names(statement) if re.fullmatch(r"SGLANG_[A-Z0-9_]*[A-Z0-9]", name)}
    text = "\n".join("\n".join(source[s.lineno - 1 : s.end_lineno]) for s in body)
    return Function(
        whole=whole,
        blanked=normalised(body, blank),
        guards=guards,
        supports=supports,
        assigns={name: sorted(values) for name, values in assigns.items()},
        env=env,
        lines=text.splitlines(),
    )


def _blank_guarding_ifs(body: list[ast.stmt], blank: set[int]) -> None:
    """An ``if`` that holds only blanked guards is part of them (its test is their condition)."""
    for statement in body:
        for block in _blocks(statement):
            _blank_guarding_ifs(block, blank)
        if isinstance(statement, ast.If) and all(id(s) in blank for s in [*statement.body, *statement.orelse]):
            blank.add(id(statement))


def _assignments(body: list[ast.stmt], conditions: list[ast.expr]) -> Iterator[tuple[str, ast.expr, list[ast.expr]]]:
    """(server arg, value, if-tests) of every ``self.x = v`` / ``server_args.x = v``, and of every
    keyword of ``declare_resolution(server_args, "why", x=v)`` (how 0.5.19+ records a choice)."""
    for statement in body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if (name := _arg_target(target)) is not None:
                    yield name, statement.value, conditions
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and _call_name(statement.value.func) == "declare_resolution":
            for keyword in statement.value.keywords:
                if keyword.arg is not None:
                    yield keyword.arg, keyword.value, conditions
        elif isinstance(statement, ast.If):
            yield from _assignments(statement.body, [*conditions, statement.test])
            yield from _assignments(statement.orelse, [*conditions, _not(statement.test)])
        else:
            for block in _blocks(statement):
                yield from _assignments(block, conditions)


def _definitions(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, ast.AST]]:
    for node in body:
        if isinstance(node, ast.ClassDef):
            yield prefix + node.name, node
            yield from _definitions(node.body, f"{prefix}{node.name}.")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node


def read_file(path: str, source: str, server_args: frozenset[str]) -> SourceFile | None:
    scope = in_scope(path)
    if scope is None:
        return None
    tree = ast.parse(source)
    lines = source.splitlines()
    whole = scope == "whole"
    marker = ATTENTION_MARKER if path.startswith("srt/layers/attention/") else MARKER
    result = SourceFile(whole=whole)
    hook_classes: set[str] = set()
    for qualname, node in _definitions(tree.body, ""):
        if isinstance(node, ast.ClassDef):
            if whole or (scope == "models" and HOOK_CLASS.search(node.name)):
                result.classes.add(qualname)
                hook_classes.add(qualname)
            continue
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        result.defined.add(qualname)
        owner = qualname.rsplit(".", 1)[0] if "." in qualname else ""
        if scope == "models":
            if not (owner in hook_classes or HOOK_FUNCTION.search(node.name)):
                continue
            function = read_function(path, node, True, marker, lines, server_args)
        else:
            named = whole or bool(KEYWORD.search(node.name))
            function = read_function(path, node, named, marker, lines, server_args)
        if function is not None:
            result.functions[qualname] = function
    if whole:
        result.lines = lines
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if (members := _literal_list(node.value)) is not None:
                    result.constants[node.targets[0].id] = members
    else:
        result.lines = [line for name in sorted(result.functions) for line in [f"# {name}", *result.functions[name].lines]]
    if not result.functions and not result.classes and scope == "models":
        return None
    return result


def field_defaults(path: str, tree: ast.Module) -> dict[str, str]:
    """Declared defaults of server-arg fields whose name mentions a keyword."""
    defaults: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None and KEYWORD.search(statement.target.id):
                    value = statement.value
                    if isinstance(value, ast.Call) and _call_name(value.func) == "field":
                        value = next((k.value for k in value.keywords if k.arg in {"default", "default_factory"}), value)
                    defaults[statement.target.id] = ast.unparse(value)
    return defaults


def env_defaults(sources: dict[str, str]) -> dict[str, str]:
    """Every SGLANG_* default: environ.py declarations (``SGLANG_X = EnvBool(False)``) and call
    sites (``get_bool_env_var("SGLANG_X", "false")``, ``os.environ.get("SGLANG_X", "0")``)."""
    found: dict[str, str] = {}
    for path, source in sources.items():
        if "SGLANG_" not in source:
            continue
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if path == "srt/environ.py" and isinstance(node, (ast.Assign, ast.AnnAssign)):
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                if isinstance(target, ast.Name) and target.id.startswith("SGLANG_") and isinstance(node.value, ast.Call):
                    found[target.id] = f"{_call_name(node.value.func)}({', '.join(ast.unparse(a) for a in node.value.args)})"
            elif isinstance(node, ast.Call) and len(node.args) >= 2 and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) and node.args[0].value.startswith("SGLANG_"):
                if _call_name(node.func) in {"get", "getenv", "get_bool_env_var", "get_int_env_var", "get_float_env_var", "get_str_env_var"}:
                    found.setdefault(node.args[0].value, f"{_call_name(node.func)}({ast.unparse(node.args[1])})")
    return found


def server_arg_names() -> frozenset[str]:
    """Every server arg's dest over all releases (the shipped flag history)."""
    data = json.loads(HISTORY.read_text(encoding="utf-8"))
    return frozenset(name.lstrip("-").replace("-", "_") for name in data["flags"] if name.startswith("--") and len(name) > 6)


class _CacheUnpickler(pickle.Unpickler):
    """Reads the cache whether this module ran as ``__main__`` (the script) or was imported (by
    ledger_review.py, the tests): the pickled classes are this module's either way."""

    def find_class(self, module: str, name: str) -> object:
        if module in ("__main__", __name__):
            return globals()[name]
        return super().find_class(module, name)


def read_release(version: str, wheel: Path, cache: Path) -> Release:
    cached = cache / f"{version}.v{EXTRACTOR_VERSION}.pickle"
    if cached.exists():
        with cached.open("rb") as handle:
            return _CacheUnpickler(handle).load()  # our own cache, written below
    with zipfile.ZipFile(wheel) as archive:
        sources = {n[len("sglang/") :]: archive.read(n).decode("utf-8", "replace") for n in archive.namelist() if n.startswith("sglang/srt/") and n.endswith(".py")}
    release = read_sources(version, sources, server_arg_names())
    cache.mkdir(parents=True, exist_ok=True)
    with cached.open("wb") as handle:
        pickle.dump(release, handle)
    return release


def read_sources(version: str, sources: dict[str, str], server_args: frozenset[str]) -> Release:
    """One release's scope, from its modules' text keyed by path inside ``sglang/``."""
    files: dict[str, SourceFile] = {}
    defaults: dict[str, str] = {}
    for path in sorted(sources):
        scope = in_scope(path)
        if scope is None or scope == "models" and not HOOK_FUNCTION.search(sources[path]) and not HOOK_CLASS.search(sources[path]):
            continue
        try:
            read = read_file(path, sources[path], server_args)
        except SyntaxError:
            continue
        if read is not None:
            files[path] = read
        if path.startswith(ARG_DOMAIN):
            defaults.update({f"field:{k}": v for k, v in field_defaults(path, ast.parse(sources[path])).items()})
    read_env = {name for f in files.values() for fn in f.functions.values() for name in fn.env}
    readers = {path: sources[path] for path in [*files, "srt/environ.py"] if path in sources}
    defaults.update({f"env:{k}": v for k, v in env_defaults(readers).items() if k in read_env})
    return Release(version, files, set(sources), defaults)


# ---------------------------------------------------------------------------------------------
# Units of one pair
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    id: str
    file: str
    function: str
    kind: str
    detail: str

    def row(self) -> dict:
        return {"id": self.id, "detail": self.detail}


class _Units:
    def __init__(self, pair: str) -> None:
        self.pair = pair
        self.units: dict[str, Unit] = {}
        # Guards that left one function or arrived in another, reconciled once the pair is read.
        self.guards_gone: list[tuple[str, str, Guard]] = []
        self.guards_came: list[tuple[str, str, Guard]] = []

    def reconcile_guards(self) -> None:
        """A guard gone from one function and present in another with the same exception and
        message is a move: no unit when its condition is the same, else one guard-changed unit
        where it arrived."""
        for file, name, guard in self.guards_came:
            twin = next((g for g in self.guards_gone if (g[2].exception, g[2].message) == (guard.exception, guard.message)), None)
            if twin is None:
                self.add(file, name, "guard-added", _guard_text(guard), guard.key)
                continue
            self.guards_gone.remove(twin)
            if twin[2].normal_condition != guard.normal_condition:
                self.add(file, name, "guard-changed", f"moved from {twin[0]} {twin[1]}; condition: {twin[2].condition} -> {guard.condition}; {_guard_text(guard)}", guard.key)
        for file, name, guard in self.guards_gone:
            self.add(file, name, "guard-removed", _guard_text(guard), guard.key)

    def add(self, file: str, function: str, kind: str, detail: str, key: str = "") -> None:
        unit_id = "|".join([self.pair, file, function, kind, *([key] if key else [])])
        if unit_id not in self.units:
            self.units[unit_id] = Unit(unit_id, file, function, kind, detail[:300])


def _guard_text(guard: Guard) -> str:
    message = f" {guard.message!r}" if guard.message else ""
    when = f" when {guard.condition}" if guard.condition else ""
    return f"{guard.exception}{message}{when}"[:300]


def diff_guards(units: _Units, file: str, name: str, old: list[Guard], new: list[Guard]) -> None:
    # A guard counts when its condition reads launch state on either side, so one that a
    # refactor made harder to recognise is compared, not reported removed.
    keys = {(g.exception, g.message) for g in [*old, *new] if g.visible}
    before = {(g.exception, g.message): g for g in old if (g.exception, g.message) in keys}
    after = {(g.exception, g.message): g for g in new if (g.exception, g.message) in keys}
    removed = [g for k, g in before.items() if k not in after]
    added = [g for k, g in after.items() if k not in before]
    for key in before.keys() & after.keys():
        if before[key].normal_condition != after[key].normal_condition:
            units.add(file, name, "guard-changed", f"condition: {before[key].condition} -> {after[key].condition}; {_guard_text(after[key])}", after[key].key)
    for guard in list(added):
        twin = next((g for g in removed if g.exception == guard.exception and g.normal_condition == guard.normal_condition), None)
        if twin is not None:
            removed.remove(twin)
            added.remove(guard)
            units.add(file, name, "guard-changed", f"message: {twin.message!r} -> {guard.message!r} when {guard.condition}", guard.key)
    for guard in removed:
        units.guards_gone.append((file, name, guard))
    for guard in added:
        units.guards_came.append((file, name, guard))


PREDICATE = re.compile(r"^_?(is_|supports?_|can_|use_|should_)")


def diff_function(units: _Units, file: str, name: str, old: Function, new: Function) -> None:
    diff_guards(units, file, name, old.guards, new.guards)
    for left in sorted(old.supports.keys() | new.supports.keys()):
        before, after = set(old.supports.get(left, [])), set(new.supports.get(left, []))
        if before != after and before and after:
            units.add(file, name, "support-changed", f"{left} in: +{sorted(after - before)} -{sorted(before - after)}", digest(left))
    for target in sorted(old.assigns.keys() | new.assigns.keys()):
        if old.assigns.get(target, []) != new.assigns.get(target, []) and (KEYWORD.search(target) or old.assigns.get(target) and new.assigns.get(target)):
            units.add(file, name, "auto-choice-changed", f"{target}: {old.assigns.get(target, [])} -> {new.assigns.get(target, [])}", target)
    if old.blanked != new.blanked:
        short = name.rsplit(".", 1)[-1]
        kind = "support-changed" if PREDICATE.match(short) else "body-changed"
        units.add(file, name, kind, f"{len(old.lines)} -> {len(new.lines)} lines in scope")


EMPTY = Function(whole=False, blanked="", guards=[], supports={}, assigns={}, env=set(), lines=[])


def changed_lines(old: list[str], new: list[str]) -> int:
    return sum(1 for line in difflib.unified_diff(old, new, lineterm="", n=0) if line[:1] in "+-" and not line.startswith(("+++", "---")))


def diff_pair(old: Release, new: Release) -> tuple[list[Unit], int]:
    pair = f"{old.version}..{new.version}"
    units = _Units(pair)
    lines = 0
    gone: dict[str, tuple[str, Function]] = {}  # "file|qualname" -> (file, function)
    came: dict[str, tuple[str, Function]] = {}
    for path in sorted(old.files.keys() | new.files.keys()):
        before, after = old.files.get(path), new.files.get(path)
        lines += changed_lines(before.lines if before else [], after.lines if after else [])
        if before is None or after is None:
            present = after or before
            assert present is not None
            other = old if after else new
            if path not in other.paths and (present.functions or present.classes):
                units.add(path, "", "file-added" if after else "file-removed", f"{len(present.lines)} lines in scope")
            target = came if after else gone
            for qualname, function in present.functions.items():
                target[f"{path}|{qualname}"] = (path, function)
            continue
        new_classes = after.classes - before.classes
        for cls in sorted(new_classes):
            if not any(cls.startswith(c + ".") for c in new_classes):
                units.add(path, cls, "class-added", "")
        old_classes = before.classes - after.classes
        for cls in sorted(old_classes):
            if not any(cls.startswith(c + ".") for c in old_classes):
                units.add(path, cls, "class-removed", "")
        for qualname in sorted(before.functions.keys() | after.functions.keys()):
            if qualname in before.functions and qualname in after.functions:
                diff_function(units, path, qualname, before.functions[qualname], after.functions[qualname])
            elif qualname in after.functions:
                if qualname in before.defined:  # the function gained a speculative slice
                    diff_function(units, path, qualname, EMPTY, after.functions[qualname])
                else:
                    came[f"{path}|{qualname}"] = (path, after.functions[qualname])
            elif qualname in after.defined:  # the function lost its speculative slice
                diff_function(units, path, qualname, before.functions[qualname], EMPTY)
            else:
                gone[f"{path}|{qualname}"] = (path, before.functions[qualname])
        for name in sorted(before.constants.keys() & after.constants.keys()):
            if before.constants[name] != after.constants[name]:
                b, a = set(before.constants[name]), set(after.constants[name])
                units.add(path, name, "support-changed", f"{name}: +{sorted(a - b)} -{sorted(b - a)}")
    _moves(units, gone, came, old, new)
    units.reconcile_guards()
    for key in sorted(old.env_defaults.keys() | new.env_defaults.keys()):
        if key in old.env_defaults and key in new.env_defaults and old.env_defaults[key] != new.env_defaults[key]:
            kind = "env-default-changed" if key.startswith("env:") else "default-changed"
            where = "srt/environ.py" if key.startswith("env:") else "srt/server_args.py"
            units.add(where, key.split(":", 1)[1], kind, f"{old.env_defaults[key]} -> {new.env_defaults[key]}")
    return sorted(units.units.values(), key=lambda u: u.id), lines


def _moves(units: _Units, gone: dict[str, tuple[str, Function]], came: dict[str, tuple[str, Function]], old: Release, new: Release) -> None:
    """Pair what left with what arrived: same normalised body (a move or rename, no unit), or the
    one function of a short name that left and arrived once (a move, bodies compared)."""
    by_body: dict[str, list[str]] = {}
    for key, (_, function) in gone.items():
        by_body.setdefault(function.blanked, []).append(key)
    for key in list(came):
        matches = by_body.get(came[key][1].blanked)
        if matches:
            # Equal bodies apart from what the finer units cover: those are still compared.
            path, function = came.pop(key)
            diff_function(units, path, key.split("|", 1)[1], gone.pop(matches.pop(0))[1], function)

    def short(key: str) -> str:
        return key.rsplit("|", 1)[1].rsplit(".", 1)[-1]

    gone_short: dict[str, list[str]] = {}
    for key in gone:
        gone_short.setdefault(short(key), []).append(key)
    came_short: dict[str, list[str]] = {}
    for key in came:
        came_short.setdefault(short(key), []).append(key)
    for name, keys in came_short.items():
        if len(keys) == 1 and len(gone_short.get(name, [])) == 1:
            (path, function), (_, before) = came.pop(keys[0]), gone.pop(gone_short[name][0])
            diff_function(units, path, keys[0].split("|", 1)[1], before, function)
    for key, (path, function) in gone.items():
        qualname = key.split("|", 1)[1]
        if path in new.paths and not _covered(qualname, old.files[path].classes - (new.files[path].classes if path in new.files else set())):
            units.add(path, qualname, "function-removed", f"{len(function.lines)} lines in scope")
        for guard in function.guards:
            if guard.visible:
                units.guards_gone.append((path, qualname, guard))
    for key, (path, function) in came.items():
        qualname = key.split("|", 1)[1]
        if path in old.paths and not _covered(qualname, new.files[path].classes - (old.files[path].classes if path in old.files else set())):
            units.add(path, qualname, "function-added", f"{len(function.lines)} lines in scope")
        for guard in function.guards:
            if guard.visible:
                units.guards_came.append((path, qualname, guard))


def _covered(qualname: str, classes: set[str]) -> bool:
    return any(qualname.startswith(c + ".") for c in classes)


# ---------------------------------------------------------------------------------------------
# Crash strings
# ---------------------------------------------------------------------------------------------


def crash_strings(releases: list[Release]) -> list[dict]:
    """Every guard message in the scope, with the first and last release holding it."""
    seen: dict[tuple[str, str, str, str], list[int]] = {}
    for index, release in enumerate(releases):
        for path, source_file in release.files.items():
            for qualname, function in source_file.functions.items():
                for guard in function.guards:
                    if guard.message and guard.message.strip(WILDCARD + " "):
                        seen.setdefault((guard.message, guard.exception, path, qualname), []).append(index)
    entries = []
    for (message, exception, path, qualname), indexes in seen.items():
        entries.append({"message": message, "exception": exception, "file": path, "function": qualname, "first": releases[min(indexes)].version, "last": releases[max(indexes)].version})
    return sorted(entries, key=lambda e: (e["file"], e["function"], e["message"], e["exception"]))


# ---------------------------------------------------------------------------------------------
# The ledger files
# ---------------------------------------------------------------------------------------------

REVIEW_FIELDS = ("reviewed", "change", "condition", "window", "pr", "outcome", "rule", "reason")


def ledger_path(pair: str, ledger: Path) -> Path:
    return ledger / f"{pair}.yaml"


def merged(pair: str, units: list[Unit], lines: int, existing: dict | None) -> dict:
    """The pair's ledger document: generated fields refreshed, reviews of surviving ids kept."""
    reviews = {row["id"]: row for row in (existing or {}).get("units", [])}
    rows = []
    for unit in units:
        row = unit.row()
        old = reviews.get(unit.id, {})
        row["reviewed"] = bool(old.get("reviewed", False))
        # An unreviewed unit carries no empty review fields (the ledger stays readable).
        row.update({name: old[name] for name in REVIEW_FIELDS if name != "reviewed" and old.get(name) is not None})
        rows.append(row)
    return {"pair": pair, "generated_by": "scripts/extract_sglang_units.py", "changed_lines": lines, "units": rows}


def dump(document: dict) -> str:
    return yaml.dump(document, sort_keys=False, allow_unicode=True, width=120, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--releases", type=Path, default=DEFAULT_RELEASES_FILE, help="YAML with '- version: X' rows (default: shared/design/sglang-releases.yaml; else the shipped data's list)")
    parser.add_argument("--wheels", type=Path, default=Path(tempfile.gettempdir()) / "sgl-wheels", help="wheel cache (downloaded into when missing)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel extractions")
    parser.add_argument("--only", help="comma-separated pairs OLD..NEW to regenerate (the crash strings need all releases and are then left alone)")
    parser.add_argument("--check", action="store_true", help="report ledger ids the generator does not find and units the ledger lacks, writing nothing")
    parser.add_argument("--ledger", type=Path, default=LEDGER)
    args = parser.parse_args(argv)

    versions = release_list(args.releases)
    pairs = [f"{a}..{b}" for a, b in itertools.pairwise(versions)]
    if args.only:
        pairs = [p.strip() for p in args.only.split(",") if p.strip()]
    needed = sorted({v for p in pairs for v in p.split("..")}, key=versions.index)
    cache = args.wheels / "units-cache"
    wheels = [download(v, args.wheels) for v in needed]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        releases = dict(zip(needed, pool.map(read_release, needed, wheels, [cache] * len(needed))))

    problems = 0
    total = 0
    for pair in pairs:
        old, new = pair.split("..")
        units, lines = diff_pair(releases[old], releases[new])
        total += len(units)
        path = ledger_path(pair, args.ledger)
        existing = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if path.exists() else None
        document = merged(pair, units, lines, existing)
        if args.check:
            held = {row["id"] for row in (existing or {}).get("units", [])}
            found = {unit.id for unit in units}
            missing, stale = found - held, held - found
            if missing or stale or (existing or {}).get("changed_lines") != lines:
                problems += 1
                print(f"{pair}: {len(missing)} units not in the ledger, {len(stale)} ledger ids not found, changed lines {lines} (ledger {(existing or {}).get('changed_lines')})")
                for unit_id in sorted(missing)[:5]:
                    print(f"  missing {unit_id}")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump(document), encoding="utf-8")
    if args.check:
        print("ledger holds every unit" if not problems else f"{problems} pairs differ")
        return 1 if problems else 0
    if not args.only:
        strings = crash_strings([releases[v] for v in versions])
        CRASH_STRINGS.write_text("[\n" + ",\n".join(json.dumps(entry, ensure_ascii=False) for entry in strings) + "\n]\n", encoding="utf-8")
        print(f"wrote {len(strings)} crash strings to {CRASH_STRINGS.relative_to(ROOT)}")
    print(f"wrote {len(pairs)} ledger files ({total} units) to {args.ledger}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
