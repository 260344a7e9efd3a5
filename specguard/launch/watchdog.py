"""Stop the runtime's process group when the launcher dies, however it dies.

The launcher stops the runtime itself on Ctrl-C, SIGTERM, SIGHUP and SIGQUIT. What it cannot
handle is its own SIGKILL (an OOM killer, ``kill -9``, a CI runner tearing down), after which a
runtime in its own process group would serve on with no parent, holding the GPU. So next to the
runtime the launcher starts this small process: it asks the kernel for SIGTERM when the launcher
dies (Linux ``PR_SET_PDEATHSIG``; elsewhere it polls its parent every half second) and then stops
the runtime's group as the launcher would have: SIGTERM, then SIGKILL after the grace period.
The launcher kills the watchdog once it has stopped the runtime itself.

    python -m specguard.launch.watchdog LAUNCHER_PID RUNTIME_PGID GRACE_SECONDS
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

from specguard.launch.supervisor import group_members

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
POLL_SECONDS = 0.5


def _ask_for_death_signal() -> None:
    """SIGTERM to this process the moment its parent exits (Linux); a no-op elsewhere."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def stop_group(pgid: int, grace: float) -> None:
    """SIGTERM the group, SIGKILL whatever is left after ``grace`` seconds."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, signum)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + grace
        while group_members(pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not group_members(pgid):
            return


def main(argv: list[str]) -> int:
    launcher_pid, pgid, grace = int(argv[0]), int(argv[1]), float(argv[2])
    # The terminal's signals reach the launcher's whole process group, this process included;
    # the launcher answers them by stopping the runtime itself, so they are not ours to act on.
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_IGN)
    orphaned = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: orphaned.set())
    _ask_for_death_signal()
    while not orphaned.is_set() and os.getppid() == launcher_pid:  # checked after prctl: no race with an early death
        orphaned.wait(POLL_SECONDS)
    stop_group(pgid, grace)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
