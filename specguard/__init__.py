"""specguard: validate, correct and launch speculative-decoding configurations.

The check path (``specguard check``) imports neither torch nor sglang; the bundled reference
runtime lives in ``specguard.runtime`` and is only imported when it runs.

``specguard.check(argv, ...)`` runs the check from Python (``specguard/api.py``). Every CLI
run imports this module, so the API is imported on first use (PEP 562's module ``__getattr__``),
not here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from specguard.api import CheckResult as CheckResult
    from specguard.api import check as check

__version__ = "0.1.0"
__all__ = ["CheckResult", "__version__", "check"]


def __getattr__(name: str) -> Any:
    if name in ("check", "CheckResult"):
        from specguard import api

        return getattr(api, name)
    raise AttributeError(f"module 'specguard' has no attribute {name!r}")
