#!/usr/bin/env python3
"""Extract every SGLang release's flag surface, SGLANG_* env vars and model architectures.

Reads each release's wheel statically (``ast``; nothing of SGLang is imported or run):

- flags: every ``parser.add_argument(...)`` in ``sglang/srt/server_args.py`` (the module that
  builds ``launch_server``'s parser in every release), plus, from 0.5.20, the fields declared in
  ``sglang/srt/arg_groups/fields/*.py`` that ``arg_utils.add_cli_args_from_dataclass`` turns into
  arguments (``A[T, "help"]`` or ``A[T, Arg(...)]``: ``--field-name`` or ``Arg(cli_name=...)``,
  plus ``Arg(aliases=[...])``; ``Arg(no_cli=True)`` and ``Derived(...)`` fields are not flags).
  argparse's own ``-h/--help`` is added to every release.
- renames: a deprecated spelling's ``new_flag=`` (``DeprecatedAliasStoreAction`` and friends),
  and a spelling that disappears in the release where another spelling of the same ``dest``
  appears.
- env vars: every string literal that is a whole ``SGLANG_*`` name in the package's code, and
  every ``SGLANG_*`` attribute declared in ``sglang/srt/environ.py`` (``envs.SGLANG_X``).
- architectures: the names each ``sglang/srt/models/*.py`` exports as ``EntryClass`` (SGLang's
  model registry imports exactly these).
- ServerArgs defaults: each field of the ``ServerArgs`` dataclass (up to 0.5.19) or of the
  namespace classes ``_INPUT_NAMESPACES`` assembles it from (0.5.20+), with its default: a
  literal (a module-level name bound to one, a copy or item of one and arithmetic on numbers
  included), else the default's source text, or none (a required field).

Writes ``specguard/data/sglang-history.json``: the ordered release list, and for each flag, env
var and architecture the spans of release indexes that have it; and
``specguard/data/sglang-serverargs-defaults.json`` (read by ``specguard explain`` only, so
``specguard check`` does not load it): for each ServerArgs field, the spans of releases with each
default. Wheels are cached in
``--wheels`` (default /tmp/sgl-wheels) and downloaded with ``pip download --no-deps`` when
missing. ``--check`` regenerates and compares instead of writing (used by the tests).

    python scripts/extract_sglang_flags.py                      # all releases, write the data
    python scripts/extract_sglang_flags.py --only 0.5.5,0.5.23 --check
    python scripts/extract_sglang_flags.py --parity specguard/data/sglang-0.5.23-flags.json
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "specguard" / "data" / "sglang-history.json"
# Read only by ``specguard explain``; apart from the history so ``specguard check`` never loads it.
DEFAULTS_OUTPUT = OUTPUT.with_name("sglang-serverargs-defaults.json")
DEFAULT_RELEASES_FILE = ROOT.parent / "shared" / "design" / "sglang-releases.yaml"
OLDEST, NEWEST = Version("0.4.0"), Version("0.5.23")
ENV_NAME = re.compile(r"SGLANG_[A-Z0-9_]*[A-Z0-9]")
# An env var a module reads: a quoted literal of its text.
QUOTED_ENV_NAME = re.compile(r"[\"'](SGLANG_[A-Z0-9_]*[A-Z0-9])[\"']")
# A model module's registry entry: ``EntryClass = Name`` or ``EntryClass = [A, B]`` at top level.
ENTRY_CLASS = re.compile(r"^EntryClass\s*=\s*(\[[^\]]*\]|\([^)]*\)|[A-Za-z_]\w*)", re.MULTILINE)
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# argparse adds these to every parser built with add_help=True (SGLang's are).
ARGPARSE_HELP = ("-h", "--help")


# ---------------------------------------------------------------------------------------------
# Wheels
# ---------------------------------------------------------------------------------------------


def wheel_path(version: str, cache: Path) -> Path | None:
    found = sorted(cache.glob(f"sglang-{version}-*.whl"))
    return found[0] if found else None


def download(version: str, cache: Path) -> Path:
    """The cached wheel, downloaded first when missing (0.5.11+ ship CPython 3.11 wheels only)."""
    if (path := wheel_path(version, cache)) is not None:
        return path
    cache.mkdir(parents=True, exist_ok=True)
    base = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"sglang=={version}", "-d", str(cache)]
    result = subprocess.run(base, capture_output=True, text=True)
    if result.returncode != 0 or wheel_path(version, cache) is None:
        binary = ["--only-binary=:all:", "--python-version", "3.11", "--platform", "manylinux_2_34_x86_64"]
        result = subprocess.run(base + binary, capture_output=True, text=True)
    if (path := wheel_path(version, cache)) is None:
        raise RuntimeError(f"pip download sglang=={version} failed: {result.stderr.strip()[-300:]}")
    return path


# ---------------------------------------------------------------------------------------------
# Static reading of one wheel
# ---------------------------------------------------------------------------------------------


def _literal(node: ast.AST | None, constants: dict[str, object]) -> object:
    """A constant, a list/tuple/set of constants, or a module-level name bound to one; else None."""
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_literal(element, constants) for element in node.elts]
        return None if any(item is None for item in items) else items
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.Attribute):
        return constants.get(node.attr)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"list", "sorted", "tuple", "set"} and node.args:
        return _literal(node.args[0], constants)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left, constants), _literal(node.right, constants)
        if isinstance(left, list) and isinstance(right, list):
            return left + right
    return None


def module_constants(trees: Iterable[ast.Module]) -> dict[str, object]:
    """Module-level ``NAME = [literal, ...]`` bindings (choice lists), resolved in order."""
    constants: dict[str, object] = {}
    for tree in trees:
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) or isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                value = _literal(node.value, constants)
            else:
                continue
            if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
                name = node.targets[0].id if isinstance(node, ast.Assign) else node.target.id
                constants[name] = value
    return constants


def _keyword(call: ast.Call, name: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _name_of(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _argument(names: list[str], dest: str | None, switch: bool, choices: object, new_flag: object, action: str | None = None) -> dict:
    if action == "BooleanOptionalAction":  # argparse adds --no-X for every --X
        names = names + ["--no-" + n[2:] for n in names if n.startswith("--")]
        switch = True
    entry: dict = {"names": names, "dest": dest or names[0].lstrip("-").replace("-", "_"), "switch": switch}
    if isinstance(choices, list):
        entry["choices"] = [str(c) for c in choices]
    if isinstance(new_flag, str):
        entry["new_flag"] = new_flag
    return entry


def add_argument_calls(tree: ast.Module, constants: dict[str, object]) -> Iterator[dict]:
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
            continue
        names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not names or not names[0].startswith("-"):
            continue
        action = _name_of(_keyword(node, "action")) or ""
        switch = action in {"store_true", "store_false", "store_const"} or action.endswith(("StoreTrueAction", "StoreFalseAction"))
        dest = _literal(_keyword(node, "dest"), constants)
        yield _argument(names, dest if isinstance(dest, str) else None, switch, _literal(_keyword(node, "choices"), constants), _literal(_keyword(node, "new_flag"), constants), action)


def _is_bool(node: ast.AST) -> bool:
    """``bool`` or ``Optional[bool]`` (what arg_utils turns into store_true)."""
    if isinstance(node, ast.Name):
        return node.id == "bool"
    if isinstance(node, ast.Subscript) and _name_of(node.value) == "Optional":
        return _is_bool(node.slice)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # bool | None
        sides = [side for side in (node.left, node.right) if not (isinstance(side, ast.Constant) and side.value is None)]
        return len(sides) == 1 and _is_bool(sides[0])
    return False


def _literal_choices(node: ast.AST) -> list | None:
    if isinstance(node, ast.Subscript) and _name_of(node.value) == "Optional":
        return _literal_choices(node.slice)
    if isinstance(node, ast.Subscript) and _name_of(node.value) == "Literal":
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        values = [_literal(item, {}) for item in items]
        return values if all(v is not None for v in values) else None
    return None


def dataclass_fields(tree: ast.Module, constants: dict[str, object], only: str | None = None) -> Iterator[dict]:
    """The CLI arguments ``add_cli_args_from_dataclass`` derives from ``A[T, meta]`` fields
    (of the class ``only``, when given)."""
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and only in (None, n.name)):
        for node in cls.body:
            if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
                continue
            annotation = node.annotation
            if not (isinstance(annotation, ast.Subscript) and _name_of(annotation.value) in {"A", "Annotated"}):
                continue
            parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
            if len(parts) < 2:
                continue
            kind, meta = parts[0], parts[1]
            field = node.target.id
            if isinstance(meta, ast.Constant) and isinstance(meta.value, str):
                yield _argument(["--" + field.replace("_", "-")], field, _is_bool(kind), _literal_choices(kind), None)
                continue
            if not (isinstance(meta, ast.Call) and _name_of(meta.func) == "Arg"):
                continue  # Derived(...) and bare types are not CLI arguments
            if _literal(_keyword(meta, "no_cli"), constants) is True:
                continue
            cli_name = _literal(_keyword(meta, "cli_name"), constants)
            aliases = _literal(_keyword(meta, "aliases"), constants) or []
            names = [cli_name if isinstance(cli_name, str) else "--" + field.replace("_", "-"), *aliases]
            action = _name_of(_keyword(meta, "action"))
            if action is not None:
                switch = action in {"store_true", "store_false"} or action.endswith("StoreTrueAction")
            else:
                switch = _is_bool(kind)
            choices = _literal(_keyword(meta, "choices"), constants)
            if choices is None:
                choices = _literal_choices(kind)
            yield _argument(names, field, switch, choices, None, action)


# ---------------------------------------------------------------------------------------------
# ServerArgs field defaults
# ---------------------------------------------------------------------------------------------

REQUIRED = {"required": True}  # a field without a default (``model_path``, in every release)
# ``default_factory=list`` and the like: the empty value each builds (as JSON holds it).
EMPTY_FACTORIES = {"list": [], "dict": {}, "tuple": [], "set": []}


def literal_bindings(tree: ast.Module) -> dict[str, object]:
    """Module-level ``NAME = <literal>`` bindings: a default that names one is that literal."""
    bound: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        try:
            bound[target.id] = _jsonable(ast.literal_eval(value))
        except (ValueError, TypeError, SyntaxError, RecursionError):
            bound.pop(target.id, None)  # rebound to something else: no longer that literal
    return bound


def _jsonable(value: object) -> object:
    """A literal as JSON holds it (tuples and sets as lists); TypeError for one it cannot hold."""
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_jsonable(v) for v in value)
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("a dict with non-string keys")
        return {k: _jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, bool, int)) or isinstance(value, float) and math.isfinite(value):
        return value
    raise TypeError(f"not JSON: {type(value).__name__}")


def _default(node: ast.expr | None, bound: dict[str, object]) -> dict:
    """A field's default as data: ``{"literal": value}``, ``{"expression": source}`` where the
    value is computed (an env lookup, a factory), or REQUIRED where the field has none."""
    if node is None:
        return REQUIRED
    if isinstance(node, ast.Call) and _name_of(node.func) == "field":  # dataclasses.field / msgspec.field
        if (default := _keyword(node, "default")) is not None:
            return _default(default, bound)
        factory = _keyword(node, "default_factory")
        if isinstance(factory, ast.Name) and factory.id in EMPTY_FACTORIES:
            return {"literal": EMPTY_FACTORIES[factory.id]}
        if isinstance(factory, ast.Lambda):
            return _default(factory.body, bound)
        return {"expression": ast.unparse(node)} if factory is not None else REQUIRED
    try:
        return {"literal": _folded(node, bound)}
    except (ValueError, TypeError, SyntaxError, RecursionError, IndexError, KeyError):
        return {"expression": ast.unparse(node)}


# What a default written as arithmetic on numbers (``10 * 1000 * 1000``) evaluates to.
ARITHMETIC = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b}


def _folded(node: ast.expr, bound: dict[str, object]) -> object:
    """The value of a default that is a literal, a module-level name bound to one, a copy of one
    (``list(NAME)``), an item of one (``NAME[0]``) or arithmetic on numbers; ValueError else."""
    if isinstance(node, ast.Name):
        if node.id not in bound:
            raise ValueError(f"{node.id} is bound to no literal")
        return bound[node.id]
    if isinstance(node, ast.Call) and _name_of(node.func) in {"list", "tuple"} and len(node.args) == 1 and not node.keywords:
        value = _folded(node.args[0], bound)
        if not isinstance(value, list):
            raise TypeError("a copy of no list")
        return value
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
        value = _folded(node.value, bound)
        if not isinstance(value, list):
            raise TypeError("an item of no list")
        return value[node.slice.value]
    if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
        left, right = _folded(node.left, bound), _folded(node.right, bound)
        if not all(isinstance(side, (int, float)) and not isinstance(side, bool) for side in (left, right)):
            raise TypeError("arithmetic on no numbers")
        return ARITHMETIC[type(node.op)](left, right)
    return _jsonable(ast.literal_eval(node))


def _is_class_var(annotation: ast.expr) -> bool:
    target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return _name_of(target) == "ClassVar"


def class_field_defaults(cls: ast.ClassDef, bound: dict[str, object]) -> Iterator[tuple[str, dict]]:
    """A dataclass's (or msgspec Struct's) fields, in order, with their defaults: its annotated
    assignments other than ClassVars (``Derived(...)`` declarations are plain assignments)."""
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and not _is_class_var(node.annotation):
            yield node.target.id, _default(node.value, bound)


def _namespace_names(tree: ast.Module) -> list[str] | None:
    """The classes ``_INPUT_NAMESPACES = [...]`` lists (0.5.20+: ServerArgs's fields are theirs)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and [_name_of(t) for t in node.targets] == ["_INPUT_NAMESPACES"] and isinstance(node.value, ast.List):
            return [name for element in node.value.elts if (name := _name_of(element))]
    return None


def serverargs_defaults(trees: dict[str, ast.Module], server_args: str, field_modules: list[str]) -> dict[str, dict]:
    """Every ``ServerArgs`` field of one release and its default.

    Up to 0.5.19 the fields are ``ServerArgs``'s own (a dataclass in server_args.py); from 0.5.20
    ``msgspec.defstruct`` assembles ServerArgs from the classes ``_INPUT_NAMESPACES`` lists
    (``arg_groups/fields/*.py``, ``collect_input_fields``), plus ServerArgs's own annotations."""
    defaults: dict[str, dict] = {}
    namespaces = _namespace_names(trees[server_args])
    if namespaces is not None:
        classes = {node.name: (node, name) for name in field_modules for node in trees[name].body if isinstance(node, ast.ClassDef)}
        missing = [n for n in namespaces if n not in classes]
        if missing:
            raise RuntimeError(f"_INPUT_NAMESPACES names classes no arg_groups/fields module declares: {missing}")
        for name in namespaces:
            cls, module = classes[name]
            defaults.update(class_field_defaults(cls, literal_bindings(trees[module])))
    own = next(n for n in trees[server_args].body if isinstance(n, ast.ClassDef) and n.name == "ServerArgs")
    defaults.update(class_field_defaults(own, literal_bindings(trees[server_args])))
    return defaults


def read_wheel(wheel: Path) -> dict:
    """Flags, env vars and architectures of one release, read from its wheel.

    Only the argument modules and ``environ.py`` are parsed with ``ast`` (a wheel holds ~4,700
    modules; parsing them all takes minutes per release on a shared machine). Env vars are the
    quoted ``"SGLANG_*"`` literals of the package's text (tests excluded); architectures are the
    names of each model module's top-level ``EntryClass = ...`` statement.
    """
    server_args = "sglang/srt/server_args.py"
    with zipfile.ZipFile(wheel) as archive:
        sources = {name: archive.read(name).decode("utf-8", "replace") for name in archive.namelist() if name.endswith(".py") and name.startswith("sglang/")}
    field_modules = sorted(n for n in sources if n.startswith("sglang/srt/arg_groups/fields/") or n == "sglang/srt/arg_groups/choices.py")
    trees = {name: ast.parse(sources[name]) for name in [server_args, "sglang/srt/environ.py", *field_modules] if name in sources}
    constants = module_constants(trees[n] for n in [*field_modules, server_args] if n in trees)
    arguments: list[dict] = [_argument(list(ARGPARSE_HELP), "help", True, None, None)]
    arguments += add_argument_calls(trees[server_args], constants)
    if "add_cli_args_from_dataclass(parser, ServerArgs)" in sources[server_args]:
        # 0.5.14-0.5.19 declare the fields on ServerArgs itself; 0.5.20+ in arg_groups/fields.
        arguments += dataclass_fields(trees[server_args], constants, only="ServerArgs")
    for name in field_modules:
        arguments += dataclass_fields(trees[name], constants)

    env: set[str] = set()
    for name, text in sources.items():
        if "/test/" not in name and not name.startswith("sglang/test"):
            env.update(QUOTED_ENV_NAME.findall(text))
    if (environ := trees.get("sglang/srt/environ.py")) is not None:
        for cls in (n for n in environ.body if isinstance(n, ast.ClassDef)):
            for node in cls.body:
                target = node.target if isinstance(node, ast.AnnAssign) else (node.targets[0] if isinstance(node, ast.Assign) else None)
                if isinstance(target, ast.Name) and ENV_NAME.fullmatch(target.id):
                    env.add(target.id)

    architectures: set[str] = set()
    for name, text in sources.items():
        if name.startswith("sglang/srt/models/"):
            for value in ENTRY_CLASS.findall(text):
                architectures.update(IDENTIFIER.findall(re.sub(r"#.*", "", value)))
    defaults = serverargs_defaults(trees, server_args, field_modules)
    return {"arguments": arguments, "env": sorted(env), "architectures": sorted(architectures), "defaults": defaults}


# ---------------------------------------------------------------------------------------------
# Compacting across releases
# ---------------------------------------------------------------------------------------------


def spans(indexes: Iterable[int]) -> list[list[int]]:
    """[1, 2, 3, 7] -> [[1, 3], [7, 7]]."""
    result: list[list[int]] = []
    for index in sorted(indexes):
        if result and result[-1][1] == index - 1:
            result[-1][1] = index
        else:
            result.append([index, index])
    return result


def compact(releases: list[str], per_release: dict[str, dict]) -> dict:
    flag_info: dict[str, dict[str, list[int]]] = {}  # flag -> description (json) -> release indexes
    env_at: dict[str, list[int]] = {}
    arch_at: dict[str, list[int]] = {}
    dest_at: dict[tuple[str, int], set[str]] = {}
    renames: set[tuple[str, str]] = set()
    for index, version in enumerate(releases):
        data = per_release[version]
        for argument in data["arguments"]:
            for name in argument["names"]:
                description = {k: v for k, v in argument.items() if k not in {"names", "dest"}}
                description["group"] = argument["names"]
                if "new_flag" in argument:
                    description["deprecated"] = True
                    renames.update((name, new) for new in argument["new_flag"].split("/") if new.startswith("--") and "{" not in new)
                description.pop("new_flag", None)
                key = json.dumps(description, sort_keys=True)
                flag_info.setdefault(name, {}).setdefault(key, []).append(index)
                dest_at.setdefault((argument["dest"], index), set()).add(name)
        for name in data["env"]:
            env_at.setdefault(name, []).append(index)
        for name in data["architectures"]:
            arch_at.setdefault(name, []).append(index)
    # A spelling gone in release i+1 while a new spelling of the same dest appears there.
    present = {name: {i for indexes in infos.values() for i in indexes} for name, infos in flag_info.items()}
    for (dest, index), names in dest_at.items():
        following = dest_at.get((dest, index + 1), set())
        for old in names - following:
            for new in following - names:
                if index not in present[new] and index + 1 not in present[old]:
                    renames.add((old, new))
    infos: list[str] = []
    flags: dict[str, list[list[int]]] = {}
    for name in sorted(flag_info):
        rows = []
        for key, indexes in flag_info[name].items():
            if key not in infos:
                infos.append(key)
            rows += [[first, last, infos.index(key)] for first, last in spans(indexes)]
        flags[name] = sorted(rows)
    return {
        "generated_by": "scripts/extract_sglang_flags.py",
        "note": "Spans are [first, last] indexes into releases; a flag's third number indexes infos.",
        "releases": releases,
        "infos": [json.loads(key) for key in infos],
        "flags": flags,
        "renames": sorted([old, new] for old, new in renames if old in flags and new in flags),
        "env": {name: spans(indexes) for name, indexes in sorted(env_at.items())},
        "architectures": {name: spans(indexes) for name, indexes in sorted(arch_at.items())},
    }


def compact_defaults(releases: list[str], per_release: dict[str, dict]) -> dict:
    """Each ServerArgs field's defaults across releases: spans of release indexes per default."""
    at: dict[str, dict[str, list[int]]] = {}  # field -> default (json) -> release indexes
    for index, version in enumerate(releases):
        for name, default in per_release[version]["defaults"].items():
            at.setdefault(name, {}).setdefault(json.dumps(default, sort_keys=True), []).append(index)
    values: list[str] = []
    fields: dict[str, list[list[int]]] = {}
    for name in sorted(at):
        rows = []
        for key, indexes in at[name].items():
            if key not in values:
                values.append(key)
            rows += [[first, last, values.index(key)] for first, last in spans(indexes)]
        fields[name] = sorted(rows)
    return {
        "generated_by": "scripts/extract_sglang_flags.py",
        "note": "Each ServerArgs field's default per release, read from the wheels' dataclasses. Spans are [first, last] "
        "indexes into releases, the third number indexes values: {literal: v}, {expression: source} (computed; no "
        "literal) or {required: true} (no default).",
        "releases": releases,
        "values": [json.loads(key) for key in values],
        "fields": fields,
    }


# ---------------------------------------------------------------------------------------------
# Release list, parity, command line
# ---------------------------------------------------------------------------------------------


def release_list(path: Path | None) -> list[str]:
    """Releases from 0.4.0 to 0.5.23 in order: the releases file, else the shipped data's list."""
    if path is not None and path.exists():
        found = re.findall(r"^- version:\s*([0-9][^\s]*)", path.read_text(encoding="utf-8"), flags=re.MULTILINE)
    else:
        found = json.loads(OUTPUT.read_text(encoding="utf-8"))["releases"]
    return sorted({v for v in found if OLDEST <= Version(v) <= NEWEST}, key=Version)


def parity(data: dict, real_path: Path) -> tuple[set[str], set[str]]:
    """Option strings the real parser has that the static data lacks, and the reverse."""
    real = json.loads(real_path.read_text(encoding="utf-8"))
    index = data["releases"].index(real["sglang_version"])
    static = {name for name, rows in data["flags"].items() if any(a <= index <= b for a, b, _ in rows)}
    parsed = {option for flag in real["flags"] for option in flag["option_strings"]}
    return parsed - static, static - parsed


def generate(releases: list[str], cache: Path, jobs: int) -> tuple[dict, dict]:
    """The history (flags, env vars, architectures) and the ServerArgs defaults of ``releases``."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        wheels = list(pool.map(lambda v: download(v, cache), releases))
    with ProcessPoolExecutor(max_workers=min(jobs, os.cpu_count() or 1)) as pool:
        read = dict(zip(releases, pool.map(read_wheel, wheels)))
    return compact(releases, read), compact_defaults(releases, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--releases", type=Path, default=DEFAULT_RELEASES_FILE, help="YAML with '- version: X' rows (default: shared/design/sglang-releases.yaml; else the shipped data's list)")
    parser.add_argument("--wheels", type=Path, default=Path("/tmp/sgl-wheels"), help="wheel cache (downloaded into when missing)")
    parser.add_argument("--jobs", type=int, default=3, help="parallel downloads")
    parser.add_argument("--only", help="comma-separated releases: regenerate these and compare them with the shipped data (implies --check)")
    parser.add_argument("--check", action="store_true", help="compare with the shipped data instead of writing it")
    parser.add_argument("--parity", type=Path, help="also compare one release with a flag table dumped from SGLang's real parser")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--defaults-output", type=Path, default=DEFAULTS_OUTPUT, help="where the ServerArgs defaults go")
    args = parser.parse_args(argv)

    if args.only:
        shipped = json.loads(args.output.read_text(encoding="utf-8"))
        shipped_defaults = json.loads(args.defaults_output.read_text(encoding="utf-8"))
        wanted = [v.strip() for v in args.only.split(",") if v.strip()]
        differences = []
        for version in wanted:
            history, defaults = generate([version], args.wheels, args.jobs)
            if release_view(history, version) != release_view(shipped, version) or defaults_view(defaults, version) != defaults_view(shipped_defaults, version):
                differences.append(version)
        print("equal" if not differences else f"differ: {', '.join(differences)}")
        return 1 if differences else 0
    data, defaults = generate(release_list(args.releases), args.wheels, args.jobs)
    if args.parity:
        missing, extra = parity(data, args.parity)
        print(f"parity with {args.parity.name}: {len(missing)} flags only in the real parser {sorted(missing)}; {len(extra)} only in the static extraction {sorted(extra)}")
    outputs = {args.output: data, args.defaults_output: defaults}
    texts = {path: json.dumps(content, separators=(",", ":"), sort_keys=False) + "\n" for path, content in outputs.items()}
    if args.check:
        stale = [path for path, text in texts.items() if not (path.exists() and path.read_text(encoding="utf-8") == text)]
        print("equal" if not stale else "; ".join(f"{path} differs from the generator's output" for path in stale))
        return 1 if stale else 0
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")
    print(f"wrote {args.output} ({len(data['releases'])} releases, {len(data['flags'])} flags, {len(data['env'])} env vars, {len(data['architectures'])} architectures)")
    print(f"wrote {args.defaults_output} ({len(defaults['fields'])} ServerArgs fields, {len(defaults['values'])} distinct defaults)")
    return 0


def release_view(data: dict, version: str) -> dict:
    """One release's flags (with their description), env vars and architectures, from compact data."""
    index = data["releases"].index(version)

    def at(table: dict) -> list[str]:
        return sorted(name for name, rows in table.items() if any(row[0] <= index <= row[1] for row in rows))

    flags = {name: next(data["infos"][row[2]] for row in rows if row[0] <= index <= row[1]) for name, rows in data["flags"].items() if any(row[0] <= index <= row[1] for row in rows)}
    return {"flags": flags, "env": at(data["env"]), "architectures": at(data["architectures"])}


def defaults_view(data: dict, version: str) -> dict:
    """One release's ServerArgs fields and their defaults, from compact defaults data."""
    index = data["releases"].index(version)
    return {name: data["values"][row[2]] for name, rows in data["fields"].items() for row in rows if row[0] <= index <= row[1]}


if __name__ == "__main__":
    sys.exit(main())
