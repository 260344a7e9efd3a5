"""`specguard launch`'s exit codes and how each run ends: one table, from which the command's
help and the table in docs/launch.md are rendered (a test holds the docs to it)."""

from __future__ import annotations

from enum import IntEnum, StrEnum


class LaunchExit(IntEnum):
    OK = 0
    ERRORS_REMAIN = 1
    INPUT_ERROR = 2
    NOT_READY = 3
    NOT_SERVING = 4


class RunKind(StrEnum):
    """How a supervised run ended (``RunResult.kind``)."""

    STOPPED = "stopped"  # by Ctrl-C or a signal to the launcher
    EXITED = "exited"  # the runtime exited on its own after serving
    CRASHED = "crashed"  # the runtime exited during start-up
    TIMEOUT = "timeout"  # not ready within --ready-timeout
    UNHEALTHY = "unhealthy"  # up, but the smoke request or /health failed


# (code, short meaning for --help, full meaning for docs/launch.md)
EXIT_CODE_TABLE: tuple[tuple[str, str, str], ...] = (
    (str(LaunchExit.OK.value), "ok (dry run, or the runtime exited 0)",
     "`--dry-run` with nothing blocking; or the runtime exited 0 on its own"),
    (str(LaunchExit.ERRORS_REMAIN.value), "errors remain (no --force)",
     "error findings remain and `--force` was not given; nothing started"),
    (str(LaunchExit.INPUT_ERROR.value), "usage/input error (port in use, runtime missing)",
     "usage or input error: flags, preset, model, port already in use, runtime not installed or refusing the launch"),
    (str(LaunchExit.NOT_READY.value), "not ready within --ready-timeout",
     "the runtime was not ready within `--ready-timeout` (it was stopped)"),
    (str(LaunchExit.NOT_SERVING.value), "started but not serving (smoke request or /health failed)",
     "the runtime started but does not serve: the smoke request failed, or `/health` failed 3 times in a row (it was stopped)"),
    ("130 / 143 / 129 / 131", "130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP, 131 after SIGQUIT",
     "stopped by Ctrl-C / SIGTERM / SIGHUP (terminal closed) / SIGQUIT, and the runtime shut down cleanly (the shell's 128 + N)"),
    ("137", "137 when the runtime had to be killed after --stop-timeout",
     "stopped, but the runtime had to be killed after `--stop-timeout`"),
    ("other", "else the runtime's own code (128+N for signal N)",
     "the runtime's own exit code (a start-up crash: its code, or 1 if it exited 0 without serving; killed by signal N: 128 + N)"),
)


def help_text() -> str:
    return "Exit codes: " + "; ".join(
        short if code in ("130 / 143 / 129 / 131", "137", "other") else f"{code} {short}" for code, short, _ in EXIT_CODE_TABLE
    ) + "."


def markdown_table() -> str:
    rows = "\n".join(f"| {code} | {meaning} |" for code, _, meaning in EXIT_CODE_TABLE)
    return f"| code | meaning |\n|---|---|\n{rows}\n"
