#!/usr/bin/env python3
"""Extract SGLang's real CLI flag table into specguard/data/sglang-<version>-flags.json.

Run INSIDE the SGLang venv (see scripts/sglang_env/setup.sh):

    .venv-sglang/bin/python scripts/sglang_env/extract_flags.py            # writes the default path
    .venv-sglang/bin/python scripts/sglang_env/extract_flags.py -o out.json
    .venv-sglang/bin/python scripts/sglang_env/extract_flags.py --check    # exit 1 if the committed table differs

It builds the parser exactly as ``sglang.srt.server_args.prepare_server_args`` does
(``argparse.ArgumentParser(prog="sglang serve")`` + ``ServerArgs.add_cli_args``) and
dumps one entry per argparse action (``-h/--help`` included, marked ``action: "help"``).

Environment variables that change the parser (``SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE``
adds a ``--sampling-backend`` choice) are removed before the import so the table
describes a default launch.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import enum
import json
import os
import sys
from pathlib import Path

# Parser-shaping env vars: strip them so the table is the default surface.
for _k in list(os.environ):
    if _k.startswith("SGLANG_KV_CANARY"):
        del os.environ[_k]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO_ROOT = Path(__file__).resolve().parents[2]

_ACTION_KINDS = {
    argparse._StoreAction: "store",
    argparse._StoreTrueAction: "store_true",
    argparse._StoreFalseAction: "store_false",
    argparse._StoreConstAction: "store_const",
    argparse._AppendAction: "append",
    argparse._AppendConstAction: "append_const",
    argparse._CountAction: "count",
    argparse._HelpAction: "help",
    argparse._VersionAction: "version",
    argparse.BooleanOptionalAction: "boolean_optional",
}


def _jsonable(value):
    """Return (json_value, is_exact). Non-JSON values become their repr()."""
    if value is argparse.SUPPRESS:
        return "==SUPPRESS==", True
    if isinstance(value, enum.Enum):
        return _jsonable(value.value)[0], False
    if isinstance(value, (set, frozenset)):
        try:
            return sorted(value), False
        except TypeError:
            return [repr(v) for v in value], False
    if isinstance(value, tuple):
        value = list(value)
    try:
        json.dumps(value, allow_nan=False)
        return value, True
    except (TypeError, ValueError):
        return repr(value), False


def _type_name(t):
    if t is None:
        return None
    if t is json.loads:
        return "json"
    name = getattr(t, "__name__", None) or type(t).__name__
    mod = getattr(t, "__module__", "") or ""
    if name in ("int", "float", "str", "bool") and mod == "builtins":
        return name
    if name == "<lambda>":
        return f"lambda@{mod}"
    return name


def _action_kind(action):
    kind = _ACTION_KINDS.get(type(action))
    if kind is not None:
        return kind
    return type(action).__name__


def _choices(action):
    ch = action.choices
    if ch is None:
        return None
    if isinstance(ch, (set, frozenset)):
        items = sorted(ch, key=str)
    else:
        items = list(ch)
    return [_jsonable(c)[0] for c in items]


def _ver(dist):
    import importlib.metadata as md

    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def build_parser():
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    return parser


def extract(parser) -> list[dict]:
    entries = []
    for action in parser._actions:
        default, exact = _jsonable(action.default)
        help_text = action.help if isinstance(action.help, str) else None
        entry = {
            "option_strings": list(action.option_strings),
            "dest": action.dest,
            "nargs": action.nargs,
            "action": _action_kind(action),
            "type": _type_name(action.type),
            "choices": _choices(action),
            "default": default,
            "default_is_repr": not exact,
            "const": _jsonable(action.const)[0],
            "required": bool(action.required),
            "metavar": _jsonable(action.metavar)[0],
            "help": (help_text or "")[:200],
        }
        # Deprecated/custom actions carry their replacement pointer.
        for extra in ("new_flag", "error_message", "const_value"):
            if hasattr(action, extra):
                entry[extra] = _jsonable(getattr(action, extra))[0]
        entries.append(entry)
    return entries


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", type=Path, default=None)
    ap.add_argument(
        "--check",
        action="store_true",
        help="compare with the existing file (ignoring generated_at); exit 1 on drift",
    )
    args = ap.parse_args(argv)

    import importlib.metadata as md

    version = md.version("sglang")
    out = args.output or REPO_ROOT / "specguard" / "data" / f"sglang-{version}-flags.json"

    parser = build_parser()
    flags = extract(parser)
    # Ambiguity is part of the surface: argparse prefix-matching (allow_abbrev) is on.
    doc = {
        "sglang_version": version,
        "generated_by": "scripts/sglang_env/extract_flags.py",
        "generated_at": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
        "parser": {
            "prog": parser.prog,
            "allow_abbrev": parser.allow_abbrev,
            "prefix_chars": parser.prefix_chars,
            "built_by": "argparse.ArgumentParser(prog='sglang serve'); ServerArgs.add_cli_args(parser)",
            "python": sys.version.split()[0],
            "torch": _ver("torch"),
            "transformers": _ver("transformers"),
        },
        "count": len(flags),
        "flags": flags,
    }
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    if args.check:
        # Compare the surface only; generated_at and the interpreter/package versions
        # in "parser" are provenance, not part of the flag table.
        keys = ("sglang_version", "count", "flags")
        old_doc = json.loads(out.read_text())
        old = {k: old_doc.get(k) for k in keys}
        new = json.loads(json.dumps({k: doc[k] for k in keys}))
        if old != new:
            print(f"DRIFT: {out} differs from the live parser", file=sys.stderr)
            return 1
        print(f"OK: {out} matches ({len(flags)} actions)")
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"wrote {out} ({len(flags)} actions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
