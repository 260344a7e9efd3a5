"""``python -m specguard`` with one barrier in the sweep of ``specguard accept``.

Once the first setting is measured, the sweep says so on stderr (``READY``) and waits there for a
signal before it measures the next. A test then sends Ctrl-C at a point the code has reached (one
setting measured, the others not) instead of after a guessed delay, which under load may come
before the first setting or after the last. Everything else is the real command.

    python tests/runtime/accept_barrier.py accept --target ... --draft ... --format json
"""

from __future__ import annotations

import sys
import time
from typing import Any

from specguard.cli.main import run
from specguard.runtime import acceptance

READY = "accept_barrier: one setting measured; waiting for a signal"

_measure = acceptance.measure
_measured = 0


def _measure_then_wait(*args: Any, **kwargs: Any) -> Any:
    global _measured
    if _measured == 1:
        print(READY, file=sys.stderr, flush=True)
        # Not signal.pause(): a signal that lands between the print and the call would leave it
        # waiting forever; a sleep returns to the interpreter, which runs the SIGINT handler.
        while True:
            time.sleep(0.1)
    result = _measure(*args, **kwargs)
    _measured += 1
    return result


if __name__ == "__main__":
    # accept_cmd imports ``measure`` from the module when the command runs, so it finds this one.
    acceptance.measure = _measure_then_wait
    run()
