"""Stop the runtime's process group when the launcher dies, however it dies.

The launcher stops the runtime itself on Ctrl-C, SIGTERM, SIGHUP and SIGQUIT. What it cannot
handle is its own SIGKILL (an OOM killer, ``kill -9``, a CI runner tearing down), after which a
runtime in its own process group would serve on with no parent, holding the GPU. So next to the
runtime the launcher starts this small process: it asks the kernel for SIGTERM when the launcher
dies (Linux ``PR_SET_PDEATHSIG``; elsewhere it polls its parent every half second) and then stops
the runtime's group as the launcher would have: SIGTERM, then SIGKILL after the grace period.
It runs in a session of its own: a kill of the launcher's whole process group (``kill -9 -PGID``,
how CI teardowns end a job) must not take it along. The launcher kills the watchdog once it has
stopped the runtime itself. (The runtime also gets SIGTERM from the kernel when the launcher
dies, ``parent_death.py``; the watchdog adds the SIGKILL for a runtime that does not stop.)

    python -m specguard.launch.watchdog LAUNCHER_PID RUNTIME_PGID GRACE_SECONDS
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from specguard.launch.parent_death import ask_for_death_signal
from specguard.launch.supervisor import group_members

POLL_SECONDS = 0.5


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
    # The terminal's signals are the launcher's to answer (it stops the runtime itself); this
    # process has left the terminal's session, and ignores them should one be sent to it anyway.
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_IGN)
    orphaned = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: orphaned.set())
    ask_for_death_signal(signal.SIGTERM)
    while not orphaned.is_set() and os.getppid() == launcher_pid:  # checked after prctl: no race with an early death
        orphaned.wait(POLL_SECONDS)
    stop_group(pgid, grace)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
