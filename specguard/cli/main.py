"""The ``specguard`` command: the registry of commands and the one place usage errors are reported.

Each command is a module of ``specguard.cli`` with ``OPTIONS`` (its options as a typed record per
command name, from which its parser is built: ``cli/parsing.py``), ``run(invocation) -> exit
code`` and, where needed, ``configure(parser, name)`` (a module may serve two names: ``rules`` and
``rule``); it is
imported only when it runs, so ``specguard check`` does not import the launch, accept or models
modules. A module's ``DETAILS[name]`` adds paragraphs to that command's help.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

from specguard import __version__
from specguard.cli.errors import print_error
from specguard.cli.launch_forms import HELP_OPTIONS, wants_help
from specguard.cli.parsing import (
    Invocation,
    Parser,
    Subcommands,
    UsageError,
    build_parser,
    read_options,
)
from specguard.records import Record
from specguard.spelling import closest

INTERRUPTED = 130  # Ctrl-C, in every command
HELP = "Validate, correct and launch speculative decoding for SGLang, slime and sgl-jax."


class Command(Record, kw_only=False):
    module: str  # under specguard.cli
    summary: str  # the line `specguard --help` lists; the first line of the command's own help
    server_args: bool = False  # takes SERVER_ARGS: options not its own, and words, pass through
    sarif: bool = False  # writes SARIF under --format sarif; elsewhere that format is a usage error


COMMANDS: dict[str, Command] = {
    "check": Command("check", "Check speculative-decoding launches (SERVER_ARGS, a command as text, or a script).", server_args=True, sarif=True),
    "rules": Command("rules_cmd", "List every rule."),
    "rule": Command("rules_cmd", "Print one rule's documentation."),
    "presets": Command("presets_cmd", "List the shipped presets, show one, or print the preset JSON Schema."),
    "render": Command("render_cmd", "Render a preset's corrected launch: safe fixes applied (unsafe ones with --unsafe-fixes).", server_args=True),
    "launch": Command("launch_cmd", "Check and correct a launch, start the runtime, wait until it serves, verify it, and supervise it.", server_args=True),
    "models": Command("models_cmd", "List the model catalog (public config.json copies), or show the facts used for one model."),
    "explain": Command("explain_cmd", "Explain a crash log: its cause, its fix and the release that fixes it.", sarif=True),
    "accept": Command("accept_cmd", "Measure accept length and per-position acceptance for a grid of speculative settings."),
    "hook": Command("hook_cmd", "Check each file a pre-commit hook passes: launch scripts or presets (.pre-commit-hooks.yaml)."),
    "completion": Command("completion_cmd", "Print a shell completion script (bash, zsh or fish) for every command and its options."),
}


def run() -> None:
    """The console script (and ``python -m specguard``)."""
    try:
        code = main(sys.argv[1:])
        sys.stdout.flush()
    except BrokenPipeError:  # `specguard rules --format json | head`: the reader left, not an error of ours
        # Python's own advice: point stdout at devnull so the flush at exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader went away
    if code == INTERRUPTED:
        # CPython kills itself with SIGINT at exit (status -2, not 130) once a KeyboardInterrupt
        # has left code run through PyRun_* (pythonrun.c sets _Py_UnhandledKeyboardInterrupt;
        # a C extension may run Python that way), even after main() caught it: seen in about
        # one full test run in five, Ctrl-C during the tiny build. Flushed, the process ends
        # here with the code it chose.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def main(argv: list[str]) -> int:
    """Run the command ``argv`` names; returns the exit code."""
    if not argv or argv[0] in HELP_OPTIONS:
        print(top_help())
        return 0 if argv else 2
    if argv[0] == "--version":
        print(f"specguard {__version__}")
        return 0
    name, rest = argv[0], argv[1:]
    command = COMMANDS.get(name)
    try:
        if command is None:
            raise UsageError(f"no such command {name!r}{_did_you_mean(name)}")
        module, parser, options = command_parser(name, command)
        if not command.server_args:
            return int(module.run(Invocation(name, read_options(options, parser.parse_args(rest), parser.prog))))
        own, server_args = parser.split_own(rest)
        if wants_help(server_args):  # `-- -h` too: help, never a run
            print(parser.format_help())
            return 0
        parsed = read_options(options, parser.parse_args(own), parser.prog)
        return int(module.run(Invocation(name, parsed, tuple(server_args), tuple(parser.own_options()))))
    except UsageError as error:
        return _usage_error(error, argv, sarif=command is not None and command.sarif)
    except SystemExit as stop:  # --help printed, or an error already reported (cli/errors.py)
        return stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    except KeyboardInterrupt:
        # A second Ctrl-C while the interpreter shuts down would kill it by the signal instead of
        # exiting 130 (CPython restores SIGINT's default action during finalization).
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        # 128 + SIGINT, as a shell reports it: 1 means "error findings remain", and a CI script
        # must tell an interrupted run from a failed check.
        print("specguard: aborted", file=sys.stderr)
        return INTERRUPTED


def command_parser(name: str, command: Command) -> tuple[ModuleType, Parser, type[Record] | Subcommands]:
    """The command's module, its parser (built from the command's options record: ``OPTIONS[name]``
    in the module, after the module's ``configure`` if it has one), and that record."""
    module = importlib.import_module(f"specguard.cli.{command.module}")
    parser = Parser(prog=f"specguard {name}", description=command.summary + _details(module, name))
    configure = getattr(module, "configure", None)
    if configure is not None:
        configure(parser, name)
    options = module.OPTIONS[name]
    build_parser(parser, options)
    return module, parser, options


def top_help() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["Usage: specguard [--version] COMMAND [ARGS]...", "", HELP, "", "Commands:"]
    lines += [f"  {name:<{width}}  {command.summary}" for name, command in COMMANDS.items()]
    lines += ["", "`specguard COMMAND --help` shows a command's options."]
    return "\n".join(lines)


def _details(module: object, name: str) -> str:
    details = getattr(module, "DETAILS", {}).get(name)
    return f"\n\n{details}" if details else ""


def _did_you_mean(name: str) -> str:
    close = closest(name, COMMANDS)
    return f"; did you mean {close[0]!r}?" if close else ""


def _usage_error(error: UsageError, argv: list[str], *, sarif: bool) -> int:
    """A usage error as one line (a JSON or SARIF document under --format json/sarif), exit code 2.
    A command that writes no SARIF (``sarif``) refuses that format in one line, not a SARIF log."""
    machine: dict[str | None, bool | str] = {"json": True, "sarif": "sarif" if sarif else False}
    print_error(error.message.replace("\n", " "), machine.get(_requested_format(argv), False), see=error.prog)
    return 2


def _requested_format(argv: list[str]) -> str | None:
    for index, token in enumerate(argv):
        if token == "--":
            break
        if token == "--format" and index + 1 < len(argv):
            return argv[index + 1].lower()
        if token.startswith("--format="):
            return token.split("=", 1)[1].lower()
    return None
