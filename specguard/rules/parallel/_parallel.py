"""Launch readings shared by the PL rules (and the attention rules that depend on parallelism)."""

from __future__ import annotations

from specguard.rules.base import CheckContext

# SGLang's decode-context-parallel size and its alias (0.5.15 server_args.py:823-829).
DCP_FLAGS = ("--dcp-size", "--decode-context-parallel-size")


def dcp_size(ctx: CheckContext) -> tuple[int, str] | None:
    """The decode-context-parallel size and the flag it was written with, or None when unset or unreadable."""
    items = [item for item in ctx.spec.items if item.flag in DCP_FLAGS and item.values]
    if not items:
        return None
    try:
        return int(items[-1].values[-1]), items[-1].flag  # argparse: the last one wins
    except ValueError:
        return None
