"""The names users write for models and code: Hugging Face repo ids and git commits.

Pure string checks, shared by the facts loader, the rules and the version sources, so that one
spelling is judged one way everywhere.
"""

from __future__ import annotations

import re

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_FULL_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_COMMIT_PREFIX = re.compile(r"^[0-9a-f]{7,40}$")


def looks_like_repo_id(reference: str | None) -> bool:
    """``org/name``, and not a relative, absolute or home path."""
    if not reference:
        return False
    return bool(_REPO_ID.match(reference)) and not reference.startswith((".", "/", "~"))


def is_full_commit(revision: str | None) -> bool:
    """A 40-digit commit hash: the only revision that pins what a hub download holds."""
    return bool(revision and _FULL_COMMIT.match(revision))


def is_commit_prefix(ref: str) -> bool:
    """A commit as people write it: 7 to 40 hex digits (any case)."""
    return bool(_COMMIT_PREFIX.match(ref.lower()))


def same_commit(ref: str, known: str) -> bool:
    """Whether two commit names, each possibly abbreviated, can name one commit."""
    a, b = ref.lower(), known.lower()
    return is_commit_prefix(a) and is_commit_prefix(b) and (a.startswith(b) or b.startswith(a))
