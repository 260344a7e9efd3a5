"""Put corrected values into a preset's own YAML text by editing only the lines they change.

A YAML dump of a round-tripped tree re-indents lists, re-wraps long strings and drops the
comment of a value it replaces; a user who rewrites their preset in place must get back their
file with only the fixed values changed. So the text is edited line by line: a changed scalar is
replaced where it stands (the comment after it kept), a removed key loses its lines, a new key
is added after its mapping's last entry, in the mapping's own indentation. Positions come from
ruamel.yaml's round-trip tree of the same text.

Pure: text and values in, text out.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

# The comment naming a YAML file's JSON Schema for editors (yaml-language-server's "modeline").
MODELINE = re.compile(r"^(#\s*yaml-language-server:\s*\$schema=)(\S+)(.*)$", re.MULTILINE)

# (first line, line after the last, the lines that replace them); an insertion has first == last.
_Splice = tuple[int, int, list[str]]


def edit_sections(
    text: str, tree: Any, document: Mapping[str, Any], keys: tuple[str, ...], renames: Callable[[str], Iterable[str]] = lambda key: ()
) -> str:
    """``text`` (whose ruamel.yaml round-trip tree is ``tree``) with the top-level ``keys`` made
    equal to ``document``'s (a key absent from ``document`` is removed). ``renames(key)`` names
    the keys a key may have been renamed to: such a rename is made where the key stands."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    splices: list[_Splice] = []
    appended: list[str] = []
    for key in keys:
        if key not in tree:
            if key in document:
                appended.extend(_block(key, document[key], 0))
            continue
        start = tree.lc.key(key)[0]
        end = _entry_end(lines, start, tree.lc.key(key)[1])
        if key not in document:
            splices.append((start, end, []))
        elif _is_block_mapping(tree[key]) and isinstance(document[key], Mapping) and document[key]:
            splices.extend(_mapping_splices(lines, tree[key], document[key], end, renames))
        elif tree[key] != document[key]:
            splices.append((start, end, _block(key, document[key], tree.lc.key(key)[1])))
    for start, end, new in sorted(splices, key=lambda s: (s[0], s[1]), reverse=True):
        lines[start:end] = new
    return "".join(lines + appended)


def _mapping_splices(
    lines: list[str], mapping: Any, values: Mapping[str, Any], mapping_end: int, renames: Callable[[str], Iterable[str]]
) -> list[_Splice]:
    splices: list[_Splice] = []
    column = None
    new_keys = [key for key in values if key not in mapping]
    for key in mapping:
        line, column = mapping.lc.key(key)
        end = _entry_end(lines, line, column)
        if key not in values:
            # A flag renamed across releases with its value kept (VB003) is renamed where it stands.
            renamed = next((new for new in renames(key) if new in new_keys and values[new] == mapping[key] and end == line + 1), None)
            if renamed is None:
                splices.append((line, end, []))
                continue
            new_keys.remove(renamed)
            text = lines[line]
            splices.append((line, end, [text[:column] + _inline(renamed) + text[text.index(":", column):]]))
        elif mapping[key] != values[key]:
            splices.append((line, end, _replaced(lines, mapping, key, values[key], end)))
    added = [f"{' ' * (column or 0)}{_inline(key)}: {_inline(values[key])}\n" for key in new_keys]
    if added:
        splices.append((mapping_end, mapping_end, added))
    return splices


def _replaced(lines: list[str], mapping: Any, key: str, value: Any, end: int) -> list[str]:
    """The entry's lines with ``value`` in place of the old one; a one-line scalar keeps the
    comment after it, a multi-line value becomes one line."""
    line, column = mapping.lc.key(key)
    value_line, value_column = mapping.lc.value(key)
    text = lines[line]
    if value_line == line and end == line + 1:
        rest = text[value_column:].rstrip("\n")
        old = _scalar_text(rest)
        return [text[:value_column] + _inline(value) + rest[len(old):] + "\n"]
    colon = text.index(":", column)
    return [text[: colon + 1] + " " + _inline(value) + "\n"]


def _scalar_text(rest: str) -> str:
    """The scalar at the start of ``rest`` (a line's tail), without the comment after it."""
    if rest[:1] in ("'", '"'):
        quote, index = rest[0], 1
        while index < len(rest):
            if rest[index] == "\\" and quote == '"':
                index += 2
                continue
            if rest[index] == quote:
                if quote == "'" and rest[index + 1 : index + 2] == "'":
                    index += 2
                    continue
                return rest[: index + 1]
            index += 1
        return rest
    comment = rest.find(" #")
    return (rest if comment < 0 else rest[:comment]).rstrip()


def _entry_end(lines: list[str], start: int, column: int) -> int:
    """The line after the entry that starts at ``start`` (its key at ``column``): continuation
    lines are indented deeper; comments and blank lines after it belong to what follows."""
    end = start + 1
    index = start + 1
    while index < len(lines):
        stripped = lines[index].strip()
        if stripped and not stripped.startswith("#"):
            indent = len(lines[index]) - len(lines[index].lstrip(" "))
            # A block sequence may sit at its key's own indentation (``key:`` then ``- item``).
            if indent < column or (indent == column and not stripped.startswith("- ")):
                break
            end = index + 1
        index += 1
    return end


def _is_block_mapping(node: Any) -> bool:
    from ruamel.yaml.comments import CommentedMap

    return isinstance(node, CommentedMap) and bool(node) and not node.fa.flow_style()


def _block(key: str, value: Any, column: int) -> list[str]:
    import yaml

    dumped = yaml.safe_dump({key: value}, sort_keys=False, allow_unicode=True, width=10**6)
    return [" " * column + line + "\n" for line in dumped.splitlines()]


def _inline(value: Any) -> str:
    """``value`` as one line of YAML flow style (``[1, 2]``, ``'True'``, ``0.5``)."""
    import yaml

    dumped = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10**6)
    return dumped.removesuffix("\n").removesuffix("\n...").strip()


def repoint_modeline(text: str, old_dir: str, new_dir: str | None) -> str:
    """``text``, moved from ``old_dir`` to ``new_dir``, with its modeline's relative schema path
    made to name the same file from there (an absolute path where ``new_dir`` is None: the text
    goes to stdout, nobody knows where). A URL or an absolute path is left as it is."""

    def repointed(match: re.Match[str]) -> str:
        schema = match.group(2)
        if "://" in schema or os.path.isabs(schema):
            return match.group(0)
        target = os.path.normpath(os.path.join(old_dir, schema))
        moved = target if new_dir is None else os.path.relpath(target, new_dir)
        return f"{match.group(1)}{moved}{match.group(3)}"

    return MODELINE.sub(repointed, text)
