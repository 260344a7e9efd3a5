"""The span of SGLang releases specguard's tables cover (``data/sglang-history.json``; a test holds
these to it): a version newer than the newest is checked as the newest, with a note."""

from __future__ import annotations

NEWEST_KNOWN_SGLANG = "0.5.23"
OLDEST_KNOWN_SGLANG = "0.4.0"
