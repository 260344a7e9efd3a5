"""The ``specguard`` command: assembles the commands, nothing else."""

from __future__ import annotations

import sys
from collections.abc import Callable

import typer

from specguard import __version__
from specguard.cli.accept_cmd import accept_command
from specguard.cli.check import check_command
from specguard.cli.launch_cmd import launch_command
from specguard.cli.models_cmd import models_app
from specguard.cli.presets_cmd import presets_app
from specguard.cli.render_cmd import render_command
from specguard.cli.rules_cmd import rule_command, rules_command

SERVER_ARGS = {"allow_extra_args": True, "ignore_unknown_options": True}


def _version(value: bool) -> None:
    if value:
        print(f"specguard {__version__}")
        raise typer.Exit()


def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version.")) -> None:
    """specguard: speculative decoding, configured safely."""


_REGISTER: dict[str, Callable[[typer.Typer], object]] = {
    "check": lambda app: app.command("check", context_settings=SERVER_ARGS)(check_command),
    "rules": lambda app: app.command("rules")(rules_command),
    "rule": lambda app: app.command("rule")(rule_command),
    "presets": lambda app: app.add_typer(presets_app, name="presets"),
    "render": lambda app: app.command("render", context_settings=SERVER_ARGS)(render_command),
    "launch": lambda app: app.command("launch", context_settings=SERVER_ARGS)(launch_command),
    "models": lambda app: app.add_typer(models_app, name="models"),
    "accept": lambda app: app.command("accept")(accept_command),
}


def build_app(commands: tuple[str, ...] = tuple(_REGISTER)) -> typer.Typer:
    application = typer.Typer(
        name="specguard",
        help="Validate, correct and launch speculative decoding for SGLang, slime and sgl-jax.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    for name in commands:
        _REGISTER[name](application)
    application.callback()(_main)
    return application


app = build_app()


def run() -> None:
    """The console script. Typer inspects the signature of every registered command on each call
    (about 20 ms for all of them), so a run of one command registers that command alone; help and
    anything unrecognised go through the full app."""
    argv = sys.argv[1:]
    name = argv[0] if argv else None
    application = build_app((name,)) if name in _REGISTER and not {"--help", "-h"} & set(argv) else app
    sys.exit(invoke(application, argv))


def invoke(application: typer.Typer, argv: list[str]) -> int:
    """Run the app; click's usage errors become one line (a JSON or SARIF document under
    --format json/sarif) and exit code 2, like every other input error."""
    try:  # typer >= 0.20 vendors click as typer._click; its usage errors are not re-exported
        from typer._click.exceptions import NoArgsIsHelpError, UsageError
    except ImportError:  # pragma: no cover - older typer runs on click itself
        from click.exceptions import NoArgsIsHelpError, UsageError  # type: ignore[no-redef, assignment]

    try:
        result = application(args=argv, prog_name="specguard", standalone_mode=False)
    except NoArgsIsHelpError as error:
        print(error.ctx.get_help() if error.ctx else "specguard --help")
        return 2
    except UsageError as error:
        message = error.format_message().replace("\n", " ")
        command = error.ctx.command_path if error.ctx else "specguard"
        fmt = _requested_format(argv)
        if fmt == "json":
            from specguard.report import error_json

            print(error_json(message))
        elif fmt == "sarif":
            from specguard.report import error_sarif

            print(error_sarif(message))
        else:
            print(f"specguard: error: {message} (see {command} --help)", file=sys.stderr)
        return 2
    except typer.Abort:
        print("specguard: aborted", file=sys.stderr)
        return 1
    return result if isinstance(result, int) else 0


def _requested_format(argv: list[str]) -> str | None:
    for index, token in enumerate(argv):
        if token == "--":
            break
        if token == "--format" and index + 1 < len(argv):
            return argv[index + 1].lower()
        if token.startswith("--format="):
            return token.split("=", 1)[1].lower()
    return None
