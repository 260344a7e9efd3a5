"""How wide human output is drawn."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence


def output_width(piped: int = 120) -> int | None:
    """None (rich's own rule: the terminal, or COLUMNS) on a terminal or when COLUMNS is set;
    ``piped`` columns otherwise, since rich draws 80 into a pipe and a table read in a log or a
    file reads better wider."""
    if sys.stdout.isatty() or os.environ.get("COLUMNS"):
        return None
    return piped


def columns_that_fit(rows: Sequence[Mapping[str, str | None]], columns: tuple[str, ...], droppable: tuple[str, ...], width: int | None) -> tuple[str, ...]:
    """``columns`` less as many of ``droppable`` (in its order) as a table of ``rows`` needs to
    lose to fit ``width`` unwrapped; what is still too wide then folds. The dropped columns are
    in the JSON output (--format json)."""
    if width is None:
        import shutil

        width = shutil.get_terminal_size().columns
    kept = list(columns)

    def natural(column: str) -> int:
        return max([len(column), *(len(row[column] or "") for row in rows)])

    for column in droppable:
        if sum(natural(c) + 3 for c in kept) + 1 <= width:
            break
        kept.remove(column)
    return tuple(kept)
