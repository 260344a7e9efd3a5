"""Untrusted text cannot make specguard hang or eat the machine: each bomb, device, FIFO and
oversize file ends within seconds with one error line naming the file (and line) and the limit.

Each case runs the real CLI in a subprocess with its address space capped (RLIMIT_AS), its CPU
time capped (RLIMIT_CPU: the kernel kills it past the limit) and a wall-clock timeout for what
uses no CPU (a read blocked on a FIFO). Before the reader had budgets these took minutes, all
memory (a MemoryError under the cap, reported as an internal error), or forever.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

SECONDS = 5
MEMORY = 512 * 1024 * 1024
LAUNCH = "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct\n"


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (SECONDS, SECONDS))


def run_bounded(*args: str, stdin: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_", "HF_"))}
    env.update({"HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "200"})
    with open(stdin or os.devnull, "rb") as source:
        return subprocess.run(
            [sys.executable, "-m", "specguard", *args], stdin=source, capture_output=True, text=True,
            env=env, cwd=REPO, timeout=SECONDS, preexec_fn=_limits,
        )


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    return lines[0]


@dataclass(frozen=True)
class Bomb:
    id: str
    text: str
    needles: tuple[str, ...]  # "{file}" is the script's path


BOMBS = [
    Bomb(
        "array-doubled-into-itself",
        "A=(x x)\n" + 'A=("${A[@]}" "${A[@]}" "${A[@]}" "${A[@]}" "${A[@]}" "${A[@]}" "${A[@]}" "${A[@]}")\n' * 8 + LAUNCH,
        ("{file}:6:", "the array A", "64 KiB"),
    ),
    Bomb("variable-doubled-40-times", "A=xx\n" + "A=$A$A\n" * 40 + LAUNCH, ("{file}:16:", "A=$A$A", "64 KiB")),
    Bomb("index-of-5000-digits", "A=(x)\npython -m sglang.launch_server --model-path ${A[" + "9" * 5000 + "]}\n", ("{file}:2:", "9 digits")),
    Bomb("2000-launches", LAUNCH * 2000, ("{file}:65:", "more than 64 launches")),
    Bomb("10-MB-script", LAUNCH * (10 * 1024 * 1024 // len(LAUNCH)), ("--script {file}", "larger than 256 KiB")),
]


@pytest.mark.parametrize("bomb", BOMBS, ids=[b.id for b in BOMBS])
def test_script_bombs_end_with_one_line(tmp_path: Path, bomb: Bomb) -> None:
    script = tmp_path / "run.sh"
    script.write_text(bomb.text)
    line = one_error_line(run_bounded("check", "--offline", "--gpu", "H100", "--script", str(script)))
    for needle in bomb.needles:
        assert needle.format(file=script) in line, line


def test_the_same_bomb_on_stdin_ends_with_one_line() -> None:
    line = one_error_line(run_bounded("check", "--offline", "--script", "-", stdin=Path("/dev/zero")))
    assert line == "specguard: error: --script -: stdin is larger than 256 KiB, the most specguard reads: pipe a shell command or script of a few KiB"


def test_a_script_that_sources_itself_four_times_is_checked_with_a_note(tmp_path: Path) -> None:
    """4^8 reads before: each file is now read once per chain, and the cycle is said in a note."""
    script = tmp_path / "run.sh"
    script.write_text("source ./run.sh\n" * 4 + LAUNCH)
    result = run_bounded("check", "--offline", "--gpu", "H100", "--format", "json", "--script", str(script))
    assert result.returncode in (0, 1), result.stderr[-2000:]
    [launch] = json.loads(result.stdout)["launches"]
    cycles = [note for note in launch["notes"] if "(a source cycle)" in note]
    assert [note.split(" skipped: ")[0] for note in cycles] == [f"{script}:{line}: source ./run.sh" for line in (1, 2, 3, 4)]


@pytest.mark.parametrize("option", ["--script", "--requirements"])
@pytest.mark.parametrize(("kind", "words"), [("device", "a character device"), ("fifo", "a FIFO (named pipe)"), ("directory", "a directory")])
def test_a_path_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path, option: str, kind: str, words: str) -> None:
    path = {"device": Path("/dev/zero"), "fifo": tmp_path / "pipe", "directory": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    server_args = () if option == "--script" else ("--", "--model-path", "meta-llama/Llama-3.1-8B-Instruct")
    line = one_error_line(run_bounded("check", "--offline", option, str(path), *server_args))
    assert line.startswith(f"specguard: error: {option} {path} is {words}, not a file: "), line


def test_a_requirements_file_of_blank_lines_is_read_in_linear_time(tmp_path: Path) -> None:
    """A megabyte of newlines: the pin's pattern rescanned the blank lines from each of them."""
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("\n" * (1024 * 1024 - 1))
    line = one_error_line(run_bounded("check", "--offline", "--requirements", str(requirements), "--", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"))
    assert f"--requirements {requirements} pins no sglang release" in line


def test_a_requirements_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("sglang==0.5.9\n" + "#\n" * (1024 * 1024))
    line = one_error_line(run_bounded("check", "--offline", "--requirements", str(requirements), "--", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"))
    assert f"--requirements {requirements} is larger than 1 MiB" in line
