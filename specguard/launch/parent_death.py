"""Start a command that stops when the process that started it dies, whatever killed whom.

The launcher stops the runtime itself on the signals it can catch, and its watchdog
(``watchdog.py``, in a session of its own) stops it after the launcher's SIGKILL. Neither helps
when both die at once: ``kill -9`` of every process of a CI job, or an OOM kill of several. So
the runtime is started through this module: it asks Linux to send the process SIGTERM (the
runtime's clean shutdown, SGLang's and the reference runtime's alike) the moment its parent
exits (``PR_SET_PDEATHSIG``), then replaces itself with the runtime's command. The setting
survives ``execve`` (it is cleared only for set-user-ID binaries), so no runtime needs to know
about it; elsewhere than Linux the command runs as it is and only the watchdog guards it.

    python -m specguard.launch.parent_death PARENT_PID COMMAND...
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def ask_for_death_signal(signum: int = signal.SIGTERM) -> None:
    """``signum`` to this process the moment its parent exits (Linux); a no-op elsewhere.

    The kernel ties the signal to the parent *thread* that forked this process: a parent must
    start its children from a thread that lives as long as it does (the launcher's main thread)."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)


def wrap(argv: list[str], parent_pid: int) -> list[str]:
    """``argv`` started through this module, bound to ``parent_pid``'s life."""
    return [sys.executable, "-m", "specguard.launch.parent_death", str(parent_pid), *argv]


def main(argv: list[str]) -> int:
    parent_pid, command = int(argv[0]), argv[1:]
    ask_for_death_signal(signal.SIGTERM)
    # Checked after prctl: a parent that died before it was asked is seen here instead.
    if os.getppid() != parent_pid:
        print("specguard: the launcher exited before the runtime started; not starting it", file=sys.stderr)
        return 1
    try:
        os.execvp(command[0], command)
    except OSError as error:
        print(f"specguard: cannot start {command[0]}: {error.strerror or error}", file=sys.stderr)
        return 127  # the shell's code for a command that cannot be run


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
