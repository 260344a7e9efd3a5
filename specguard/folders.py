"""Names a file writes for a folder's own files (a checkpoint's shards, a preset's snapshot), kept inside it.

A downloaded model folder is someone else's text: ``model.safetensors.index.json`` may name
``../../../../etc/passwd`` or ``/etc/hostname`` as a shard, and a cloned repo may hold a symlink
to anywhere. specguard reads nothing such a name leads to outside the folder: absolute names,
``..`` that climbs out, and symlinks whose real path lies elsewhere are refused by the caller,
in one line naming the file that wrote the name.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path


def escape(folder: Path, name: str, *, also_inside: Sequence[Path] = ()) -> str | None:
    """Why ``name`` (relative to ``folder``) leads outside it, in words; None when it stays.

    ``also_inside``: other trees its real path may end in (the Hugging Face cache, whose snapshot
    files are symlinks to ``../../blobs/``)."""
    if not name or "\x00" in name:
        return "is not a file name"
    if name.startswith("~") or Path(name).is_absolute():
        return "is not a path relative to the folder"
    lexical = Path(os.path.normpath(folder / name))
    if not lexical.is_relative_to(Path(os.path.normpath(folder))):
        return "climbs out of the folder with '..'"
    real = lexical.resolve()
    roots = (folder, *also_inside)
    if not any(real.is_relative_to(root.resolve()) for root in roots):
        return f"is a symlink to {real}, outside the folder"
    return None
