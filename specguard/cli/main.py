"""The ``specguard`` command: assembles the commands, nothing else."""

from __future__ import annotations

import sys
from collections.abc import Callable

import typer

from specguard import __version__
from specguard.cli.accept_cmd import accept_command
from specguard.cli.check import check_command
from specguard.cli.launch_cmd import launch_command
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


_REGISTER: dict[str, Callable[[typer.Typer], None]] = {
    "check": lambda app: app.command("check", context_settings=SERVER_ARGS)(check_command),
    "rules": lambda app: app.command("rules")(rules_command),
    "rule": lambda app: app.command("rule")(rule_command),
    "presets": lambda app: app.add_typer(presets_app, name="presets"),
    "render": lambda app: app.command("render", context_settings=SERVER_ARGS)(render_command),
    "launch": lambda app: app.command("launch", context_settings=SERVER_ARGS)(launch_command),
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
    if name in _REGISTER and not {"--help", "-h"} & set(argv):
        build_app((name,))(prog_name="specguard")
    else:
        app(prog_name="specguard")
