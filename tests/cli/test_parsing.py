"""The command line's parser (specguard/cli/parsing.py) and the top-level command (cli/main.py)."""

from __future__ import annotations

from typing import Annotated

import pytest

from specguard.cli.options import FORMAT, GPU, GPU_COUNT, OFFLINE, OutputFormat
from specguard.cli.parsing import (
    Option,
    Parser,
    Positional,
    Subcommands,
    UsageError,
    at_least,
    build_parser,
    choice,
    read_options,
)
from specguard.records import Record, field
from tests.conftest import run_cli


class CheckLike(Record):
    gpu: Annotated[str | None, GPU] = None
    gpu_count: Annotated[int | None, GPU_COUNT] = None
    offline: Annotated[bool, OFFLINE] = False
    output_format: Annotated[OutputFormat, FORMAT] = OutputFormat.human
    env: Annotated[list[str] | None, Option("--env", "KEY=VALUE", repeat=True)] = None


def _check_like() -> Parser:
    parser = Parser("specguard check")
    build_parser(parser, CheckLike)
    return parser


def test_own_options_are_taken_with_their_values_and_the_rest_passes_through_in_order() -> None:
    own, server = _check_like().split_own(
        ["--model-path", "/m", "--gpu", "H100", "--tp", "2", "--offline", "--format=json", "--speculative-algorithm", "EAGLE3"]
    )
    assert own == ["--gpu", "H100", "--offline", "--format=json"]
    assert server == ["--model-path", "/m", "--tp", "2", "--speculative-algorithm", "EAGLE3"]


def test_after_the_double_dash_everything_is_the_servers_even_an_own_option() -> None:
    own, server = _check_like().split_own(["--gpu", "H100", "--", "--model-path", "/m", "--offline", "--", "x"])
    assert own == ["--gpu", "H100"]
    assert server == ["--model-path", "/m", "--offline", "--", "x"]


def test_a_launch_given_as_text_is_a_word_that_passes_through() -> None:
    own, server = _check_like().split_own(["--offline", "python -m sglang.launch_server --model-path /m"])
    assert own == ["--offline"] and server == ["python -m sglang.launch_server --model-path /m"]


def test_an_option_value_that_looks_like_a_flag_is_still_the_value() -> None:
    # click took the next word as the value whatever it looked like; so does split_own.
    own, _ = _check_like().split_own(["--gpu", "--tp", "2"])
    assert own == ["--gpu", "--tp"]


def test_values_are_parsed_and_checked_into_the_commands_record() -> None:
    parser = _check_like()
    options = read_options(CheckLike, parser.parse_args(["--gpu-count", "4", "--format", "JSON", "--env", "A=1", "--env", "B=2"]), parser.prog)
    assert options == CheckLike(gpu_count=4, output_format=OutputFormat.json, env=["A=1", "B=2"])
    assert read_options(CheckLike, parser.parse_args([]), parser.prog) == CheckLike()  # the record's defaults are argparse's


class Files(Record):
    files: Annotated[list[str], Positional("FILE", "files", nargs="*")] = field(default_factory=list)
    verbose: Annotated[bool, Option("--verbose", "say more", switch=True)] = False


class Shown(Record):
    name: Annotated[str, Positional("NAME", "what to show")]
    verbose: Annotated[bool, Option("--verbose", "say more", switch=True)] = False


def test_positionals_and_subcommands_each_read_into_their_own_record() -> None:
    parser = Parser("specguard demo")
    build_parser(parser, Files)
    assert read_options(Files, parser.parse_args(["a", "b", "--verbose"]), parser.prog) == Files(files=["a", "b"], verbose=True)
    spec = Subcommands({"list": (Files, "list them"), "show": (Shown, "show one")}, default="list", shared=("verbose",))
    parser = Parser("specguard demo")
    build_parser(parser, spec)
    assert read_options(spec, parser.parse_args([]), parser.prog) == Files()
    assert read_options(spec, parser.parse_args(["show", "x"]), parser.prog) == Shown(name="x")
    # A shared option counts given before the subcommand as after it.
    assert read_options(spec, parser.parse_args(["--verbose", "show", "x"]), parser.prog) == Shown(name="x", verbose=True)
    assert read_options(spec, parser.parse_args(["show", "x", "--verbose"]), parser.prog) == Shown(name="x", verbose=True)


def test_a_field_that_names_no_argument_is_refused_when_the_parser_is_built() -> None:
    class Broken(Record):
        gpu: str | None = None

    with pytest.raises(TypeError, match="Broken.gpu names no Option or Positional"):
        build_parser(Parser("specguard broken"), Broken)


def test_every_commands_record_builds_its_parser_and_reads_its_defaults() -> None:
    # A misspelled option name is a type error (mypy checks each `o.<name>` against the record);
    # here every command's record and parser are checked to agree at run time too.
    from specguard.cli.main import COMMANDS, command_parser

    for name, command in COMMANDS.items():
        _, parser, options = command_parser(name, command)
        records = [record for record, _ in options.commands.values()] if isinstance(options, Subcommands) else [options]
        dests = {action.dest for action in parser._actions if action.dest not in ("help", "subcommand")}
        subparsers = [a for a in parser._actions if a.dest == "subcommand"]
        for sub in (subparsers[0].choices.values() if subparsers else ()):  # type: ignore[union-attr]
            dests |= {action.dest for action in sub._actions if action.dest != "help"}
        assert dests == {field for record in records for field in record.__struct_fields__}, name


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--gpu-count", "0"], "argument --gpu-count: 0 is not between 1 and 1024"),
        (["--gpu-count", "two"], "argument --gpu-count: 'two' is not a valid int"),
        (["--format", "xml"], "argument --format: 'xml' is not one of human, json, sarif"),
        (["--gpu"], "argument --gpu: expected one argument"),
        (["--no-such"], "unrecognized arguments: --no-such"),
    ],
)
def test_a_bad_value_is_a_usage_error_naming_the_option(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError) as error:
        _check_like().parse_args(argv)
    assert error.value.message == message and error.value.prog == "specguard check"


def test_no_abbreviation_of_an_own_option() -> None:
    # --off could be a server flag's prefix as well as ours: argparse's allow_abbrev is off.
    with pytest.raises(UsageError):
        _check_like().parse_args(["--off"])


def test_bounds_and_choices() -> None:
    port = at_least(int, 1, 65535)
    assert port("8080") == 8080
    with pytest.raises(Exception, match="between 1 and 65535"):
        port("70000")
    assert choice(OutputFormat)("Sarif") is OutputFormat.sarif


def test_top_level_help_lists_every_command_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    from specguard.cli.main import COMMANDS, main

    assert main([]) == 2  # nothing asked: the help, and a usage exit code
    listing = capsys.readouterr().out
    assert all(f"  {name} " in listing for name in COMMANDS)
    assert main(["--help"]) == 0
    assert main(["--version"]) == 0 and capsys.readouterr().out.strip().endswith("specguard 0.1.0")


def test_an_unknown_command_is_one_line_with_a_suggestion() -> None:
    result = run_cli("chek", "--", "--model-path", "/m")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip() == "specguard: error: no such command 'chek'; did you mean 'check'? (see specguard --help)"


def test_every_command_has_help() -> None:
    from specguard.cli.main import COMMANDS

    for name in COMMANDS:
        result = run_cli(name, "--help", timeout=60)
        assert result.returncode == 0, (name, result.stderr)
        assert result.stdout.startswith(f"Usage: specguard {name}"), (name, result.stdout[:200])


def test_a_reader_that_leaves_early_gets_no_traceback() -> None:
    """`specguard rules --format json | head`: the pipe closes while specguard writes (the JSON is
    over 64 KiB, more than a pipe holds), which is the reader's choice, not an error to report."""
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-m", "specguard", "rules", "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(16).startswith(b"[")
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141
    assert "Traceback" not in stderr and stderr == ""
