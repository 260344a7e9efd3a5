"""Which launches a command line asks about, in whichever form it gives them.

- server arguments after ``--`` (``specguard check -- --model-path ...``);
- one string holding a whole command (``specguard check "SGLANG_X=1 python -m sglang.launch_server ..."``,
  a ``docker run ... lmsysorg/sglang:TAG ...`` line, several lines pasted);
- ``-``: that text on stdin;
- ``--script FILE`` (``-`` for stdin): a slime or SGLang launch script, every launch in it.

The text forms go through ``specguard.launch_text``, the one reader of launch text.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from specguard.errors import InputError
from specguard.records import Record
from specguard.spelling import closest

if TYPE_CHECKING:  # the reader of launch text is imported only when a launch comes as text
    from specguard.launch_text import FoundLaunch

HELP_OPTIONS = ("-h", "--help")
_ENTRY_HINT = "python -m sglang.launch_server ..., python -m sgl_jax.launch_server ..., sglang serve ..., slime's train.py ..."


class LaunchRequest(Record, kw_only=False):
    """One launch to check: its server arguments and what the text around it said."""

    server_args: tuple[str, ...]
    found: FoundLaunch | None = None  # None: the argv came after `--`


def wants_help(args: Sequence[str]) -> bool:
    """``-h``/``--help`` anywhere among the words: print help and run nothing (SGLang's own
    launcher does the same with its -h, so nothing is lost)."""
    return any(arg in HELP_OPTIONS for arg in args)


def reject_misspelled_options(args: Sequence[str], own_options: Sequence[str]) -> None:
    """A misspelled specguard option (``--unsafe-fix``) is an error with a suggestion, never
    taken as a server argument: click cannot tell it from one, since it keeps unknown options."""
    from specguard.flags import FLAGS_BY_NAME
    from specguard.versions import history

    # A flag of any SGLang release is the server's (the version rules judge it); history is
    # read by every check anyway, SGLang 0.5.23's full parser table would be read only for this.
    known = history().flags.keys() | FLAGS_BY_NAME.keys()
    for arg in args:
        option = arg.split("=", 1)[0]
        # slime's --sglang-X stands for SGLang's --X: a known X is slime's, not a typo of ours.
        sglang_name = "--" + option[len("--sglang-") :] if option.startswith("--sglang-") else option
        if not option.startswith("--") or option in known or sglang_name in known:
            continue
        if option in own_options:  # click leaves it only when it came after `--`
            raise InputError(f"{option} after -- would go to SGLang, which has no such flag", hint=f"put {option} before --")
        close = closest(option, own_options, cutoff=0.8)
        if close:
            raise InputError(f"no such option {option}", hint=f"did you mean {close[0]}?")


def requests_from(args: Sequence[str], script: str | None, *, preset: str | None) -> list[LaunchRequest]:
    """The launches ``args`` (click's extra arguments) and ``--script`` ask about."""
    if script is not None or (args and not args[0].startswith("-")) or list(args) == ["-"]:
        from specguard.launch_text import find_launches, read_launches
    if script is not None:
        if args:
            raise InputError("--script takes the launches from the script", hint=f"drop {' '.join(args[:3])} or drop --script")
        found = _read_stdin("--script -") if script == "-" else None
        launches = find_launches(found, "<stdin>") if found is not None else read_launches(Path(script))
        where = "stdin" if script == "-" else script
        return _requests(launches, f"--script {where}")
    if list(args) == ["-"]:
        return _requests(find_launches(_read_stdin("-"), "<stdin>"), "stdin")
    if args and not args[0].startswith("-"):
        text = args[0] if len(args) == 1 else shlex.join(args)
        return _requests(find_launches(text, "<command>"), "the command given")
    if not args:
        if preset:
            return [LaunchRequest(server_args=())]
        raise InputError(
            "nothing to check",
            hint="give server arguments after --, a launch command as one string, - to read it from stdin, --script FILE or --preset NAME",
        )
    return [LaunchRequest(server_args=tuple(args))]


def _requests(launches: list[FoundLaunch], where: str) -> list[LaunchRequest]:
    if not launches:
        raise InputError(f"{where} holds no launch", hint=f"specguard looks for {_ENTRY_HINT}")
    return [LaunchRequest(server_args=launch.argv, found=launch) for launch in launches]


def _read_stdin(option: str) -> str:
    """Stdin's text, at most the launch text specguard reads (``< /dev/zero`` ends at once)."""
    from specguard.launch_text import MAX_LAUNCH_TEXT_BYTES
    from specguard.text_input import read_stream_bounded

    if sys.stdin is None or sys.stdin.isatty():
        raise InputError(f"{option} reads the launch from stdin, but stdin is a terminal", hint="pipe a command or a script into it")
    return read_stream_bounded(sys.stdin.buffer, f"{option}: stdin", limit=MAX_LAUNCH_TEXT_BYTES, hint="pipe a shell command or script of a few KiB")
