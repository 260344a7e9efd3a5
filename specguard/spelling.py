"""The closest known name to a misspelled one, for every "did you mean ...?" specguard says.

difflib is imported only when something is misspelled: a clean check never pays for it.
"""

from __future__ import annotations

from collections.abc import Iterable


def closest(word: str, known: Iterable[str], *, cutoff: float = 0.6, count: int = 1) -> list[str]:
    """Up to ``count`` names of ``known`` close to ``word`` (difflib's ratio >= ``cutoff``), best first."""
    import difflib

    return difflib.get_close_matches(word, list(known), n=count, cutoff=cutoff)
