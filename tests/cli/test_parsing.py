"""The command line's parser (specguard/cli/parsing.py) and the top-level command (cli/main.py)."""

from __future__ import annotations

import pytest

from specguard.cli.options import FORMAT, GPU, GPU_COUNT, OFFLINE, OutputFormat
from specguard.cli.parsing import (
    Option,
    Parser,
    UsageError,
    add_options,
    at_least,
    choice,
)
from tests.conftest import run_cli


def _check_like() -> Parser:
    parser = Parser("specguard check")
    add_options(parser, GPU, GPU_COUNT, OFFLINE, FORMAT, Option("--env", "KEY=VALUE", repeat=True))
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


def test_values_are_parsed_and_checked() -> None:
    parser = _check_like()
    options = parser.parse_args(["--gpu-count", "4", "--format", "JSON", "--env", "A=1", "--env", "B=2"])
    assert options.gpu_count == 4 and options.output_format is OutputFormat.json and options.env == ["A=1", "B=2"]
    assert options.gpu is None and options.offline is False


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
