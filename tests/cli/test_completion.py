"""``specguard completion SHELL``: scripts generated from the command registry, run by the real shells."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from specguard.cli.main import COMMANDS
from tests.conftest import run_cli


def _script(shell: str, tmp_path: Path) -> Path:
    result = run_cli("completion", shell)
    assert result.returncode == 0, result.stderr
    path = tmp_path / f"specguard.{shell}"
    path.write_text(result.stdout)
    return path


def _bash_complete(script: Path, *words: str) -> list[str]:
    """What bash offers after ``specguard WORDS`` (the last word being completed), through the
    function the script registers with ``complete``."""
    line = " ".join(["specguard", *words])
    program = (
        f"source {script}\n"
        f"COMP_WORDS=(specguard {' '.join(words)}); COMP_CWORD={len(words)}; COMP_LINE='{line}'; COMP_POINT={len(line)}\n"
        "$(complete -p specguard | sed -E 's/.*-F ([^ ]+) .*/\\1/') specguard\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_bash_completes_a_command_name(tmp_path: Path) -> None:
    script = _script("bash", tmp_path)
    assert _bash_complete(script, "ch") == ["check"]
    assert set(_bash_complete(script, "")) >= set(COMMANDS)


def test_bash_completes_an_option_of_the_command(tmp_path: Path) -> None:
    script = _script("bash", tmp_path)
    assert _bash_complete(script, "check", "--explain-m") == ["--explain-memory"]
    assert _bash_complete(script, "check", "--gpu-") == ["--gpu-count"]
    assert set(_bash_complete(script, "models", "--")) >= {"--format", "--verbose"}
    assert _bash_complete(script, "launch", "--dry") == ["--dry-run"]


def test_bash_completes_a_subcommand_and_leaves_a_value_to_file_names(tmp_path: Path) -> None:
    script = _script("bash", tmp_path)
    assert _bash_complete(script, "models", "") == ["list", "show"]
    assert _bash_complete(script, "presets", "s") == ["show", "schema"]
    assert _bash_complete(script, "check", "--script", "") == []  # complete -o default: bash offers files


def test_the_scripts_follow_the_options_of_today(tmp_path: Path) -> None:
    """A new option reaches every script with no edit to it: the scripts read each command's parser."""
    for shell in ("bash", "zsh", "fish"):
        text = _script(shell, tmp_path).read_text()
        assert all(name in text for name in COMMANDS), shell
        assert "explain-memory" in text and "retry-with-fix" in text and "batch-sizes" in text, shell


@pytest.mark.parametrize(("shell", "parse_only"), [("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])])
def test_zsh_and_fish_scripts_parse(shell: str, parse_only: list[str], tmp_path: Path) -> None:
    script = _script(shell, tmp_path)
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    result = subprocess.run([*parse_only, str(script)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr


def test_an_unknown_shell_is_one_line() -> None:
    result = run_cli("completion", "powershell")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "bash, zsh, fish" in result.stderr


def test_fish_completes_a_command_name_and_an_option(tmp_path: Path) -> None:
    script = _script("fish", tmp_path)
    if shutil.which("fish") is None:
        pytest.skip("fish is not installed")

    def offered(line: str) -> list[str]:
        result = subprocess.run(["fish", "--no-config", "-c", f"source {script}; complete -C '{line}'"], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        return [row.split("\t")[0] for row in result.stdout.splitlines()]

    assert offered("specguard ch") == ["check"]
    assert offered("specguard check --explain-m") == ["--explain-memory"]
