"""The ``specguard`` command: assembles the commands, nothing else."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

import typer

from specguard import __version__

SERVER_ARGS = {"allow_extra_args": True, "ignore_unknown_options": True}


def _version(value: bool) -> None:
    if value:
        print(f"specguard {__version__}")
        raise typer.Exit()


def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version.")) -> None:
    """specguard: speculative decoding, configured safely."""


def _command(module: str, name: str) -> Any:
    """A command's function or sub-app, imported only when that command is registered: a run of
    `check` does not import the launch, accept or models modules (or what they import)."""
    return getattr(importlib.import_module(f"specguard.cli.{module}"), name)


_REGISTER: dict[str, Callable[[typer.Typer], object]] = {
    "check": lambda app: app.command("check", context_settings=SERVER_ARGS)(_command("check", "check_command")),
    "rules": lambda app: app.command("rules")(_command("rules_cmd", "rules_command")),
    "rule": lambda app: app.command("rule")(_command("rules_cmd", "rule_command")),
    "presets": lambda app: app.add_typer(_command("presets_cmd", "presets_app"), name="presets"),
    "render": lambda app: app.command("render", context_settings=SERVER_ARGS)(_command("render_cmd", "render_command")),
    "launch": lambda app: app.command("launch", context_settings=SERVER_ARGS)(_command("launch_cmd", "launch_command")),
    "models": lambda app: app.add_typer(_command("models_cmd", "models_app"), name="models"),
    "accept": lambda app: app.command("accept")(_command("accept_cmd", "accept_command")),
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


def __getattr__(name: str) -> typer.Typer:
    """``app``, the full application (every command), is built on first use: the console script
    builds only the command it runs."""
    if name == "app":
        application = build_app()
        globals()["app"] = application
        return application
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run() -> None:
    """The console script. Typer inspects the signature of every registered command on each call
    (about 20 ms for all of them), so a run of one command registers that command alone; help and
    anything unrecognised go through the full app."""
    argv = sys.argv[1:]
    name = argv[0] if argv else None
    application = build_app((name,)) if name in _REGISTER and not {"--help", "-h"} & set(argv) else build_app()
    sys.exit(invoke(application, argv))


def invoke(application: typer.Typer, argv: list[str]) -> int:
    """Run the app; click's usage errors become one line (a JSON or SARIF document under
    --format json/sarif) and exit code 2, like every other input error."""
    try:  # typer >= 0.20 vendors click as typer._click; its usage errors are not re-exported
        from typer._click.exceptions import NoArgsIsHelpError, UsageError
    except ImportError:  # pragma: no cover - older typer runs on click itself
        from click.exceptions import NoArgsIsHelpError, UsageError  # type: ignore[no-redef, assignment]

    from specguard.cli import light_params

    # What ``application(...)`` does, with the options' coercion made light first (light_params).
    click_command = typer.main.get_command(application)
    light_params.install(click_command)
    try:
        result = click_command(args=argv, prog_name="specguard", standalone_mode=False)
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
