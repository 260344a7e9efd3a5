"""The ``specguard`` command: assembles the commands, nothing else."""

from __future__ import annotations

import typer

from specguard import __version__
from specguard.cli.check import check_command
from specguard.cli.launch_cmd import launch_command
from specguard.cli.presets_cmd import presets_app
from specguard.cli.render_cmd import render_command
from specguard.cli.rules_cmd import rule_command, rules_command

SERVER_ARGS = {"allow_extra_args": True, "ignore_unknown_options": True}

app = typer.Typer(
    name="specguard",
    help="Validate, correct and launch speculative decoding for SGLang, slime and sgl-jax.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command("check", context_settings=SERVER_ARGS)(check_command)
app.command("rules")(rules_command)
app.command("rule")(rule_command)
app.add_typer(presets_app, name="presets")
app.command("render", context_settings=SERVER_ARGS)(render_command)
app.command("launch", context_settings=SERVER_ARGS)(launch_command)


def _version(value: bool) -> None:
    if value:
        print(f"specguard {__version__}")
        raise typer.Exit()


@app.callback()
def main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version.")) -> None:
    """specguard: speculative decoding, configured safely."""
