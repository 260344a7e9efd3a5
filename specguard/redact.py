"""Secrets in a launch are shown masked wherever specguard or its runtime prints or serves them.

One table of the flags that carry a secret (SGLang 0.5.23 server_args: ``--api-key``,
``--admin-api-key``, ``--ssl-keyfile-password``), in any dialect's spelling (slime prefixes
``--sglang-``). The command that runs keeps the real value; only what is displayed is masked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

SECRET_FLAGS = ("--api-key", "--admin-api-key", "--ssl-keyfile-password")
MASK = "***"

_NAMES = "|".join(re.escape(flag[2:]) for flag in SECRET_FLAGS)
_FLAG = re.compile(rf"^--(?:sglang-)?(?:{_NAMES})$")
# In a shell line: the flag, then '=' or spaces, then one shell word (quoted or bare).
_IN_TEXT = re.compile(rf"(--(?:sglang-)?(?:{_NAMES}))(=|\s+)('[^']*'|\"[^\"]*\"|\S+)")


def is_secret_flag(token: str) -> bool:
    return bool(_FLAG.match(token.split("=", 1)[0]))


def redact_argv(argv: Sequence[str]) -> list[str]:
    out: list[str] = []
    hide_next = False
    for token in argv:
        if hide_next:
            out.append(MASK)
            hide_next = False
        elif is_secret_flag(token) and "=" in token:
            out.append(token.split("=", 1)[0] + "=" + MASK)
        else:
            out.append(token)
            hide_next = is_secret_flag(token)
    return out


def redact_text(text: str) -> str:
    return _IN_TEXT.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
