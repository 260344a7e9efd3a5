"""`SGLANG_RAGGED_VERIFY_MODE` (0.5.16+): target verify of DSPARK (and DFLASH) padded to the full draft width
(`static`, the default) or per request (`compact`, `cap-accept`), which many backends and features refuse or
run worse; the rules that judge a ragged mode share its name and the fix that drops it."""

from __future__ import annotations

from specguard.models import Applicability, Edit, Fix
from specguard.rules.base import fix_of

RAGGED = "SGLANG_RAGGED_VERIFY_MODE"
RAGGED_MODES = ("cap-accept", "compact")  # the modes other than the default static


def unset_ragged() -> Fix:
    """Back to static verify, which every backend and feature takes (unsafe: it changes how verify runs)."""
    return fix_of(f"unset {RAGGED} (static is the default)", Applicability.UNSAFE, Edit(target="env", name=RAGGED, value=None))
