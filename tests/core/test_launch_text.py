"""The one reader of launch text (specguard/launch_text.py): each shell form on its own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from specguard.errors import InputError
from specguard.launch_text import find_launches
from specguard.models import Dialect


def only(text: str, **kwargs):
    launches = find_launches(text, "<t>", **kwargs)
    assert len(launches) == 1, launches
    return launches[0]


def test_continuations_comments_and_env_prefix() -> None:
    launch = only(
        "# serve\n"
        "SGLANG_ENABLE_SPEC_V2=True python3 -m sglang.launch_server \\\n"
        "  --model-path Qwen/Qwen3-8B \\\n"
        "  --speculative-algorithm STANDALONE  # draft model\n"
    )
    assert launch.argv == ("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "STANDALONE")
    assert launch.env == (("SGLANG_ENABLE_SPEC_V2", "True"),)
    assert launch.dialect is Dialect.SGLANG
    assert launch.line == 2
    assert [line for _, line in launch.arg_locations] == [3, 3, 4, 4]


def test_arrays_keep_the_line_of_each_element() -> None:
    launch = only(
        "SGLANG_ARGS=(\n"
        "   --rollout-num-gpus-per-engine 1\n"
        "   # a comment inside the array\n"
        "   --sglang-speculative-num-steps 3\n"
        ")\n"
        "SGLANG_ARGS+=(--sglang-cuda-graph-bs $(seq 1 3) $(seq 8 8 24))\n"
        "ray job submit --address=x -- python3 train.py \\\n"
        "   ${SGLANG_ARGS[@]}\n"
    )
    assert launch.dialect is Dialect.SLIME
    assert launch.argv == (
        "--rollout-num-gpus-per-engine", "1", "--sglang-speculative-num-steps", "3",
        "--sglang-cuda-graph-bs", "1", "2", "3", "8", "16", "24",
    )
    lines = dict(zip(launch.argv, (line for _, line in launch.arg_locations)))
    assert lines["--rollout-num-gpus-per-engine"] == 2
    assert lines["--sglang-speculative-num-steps"] == 4
    assert lines["--sglang-cuda-graph-bs"] == 6


def test_a_mktemp_path_stays_one_word_through_an_unquoted_array() -> None:
    """slime's run-glm5.2-744B-A40B.sh (624b824a): the path mktemp prints, put in an array that is
    expanded unquoted; its placeholder's space once split it into a stray argument."""
    launch = only(
        "CONFIG=$(mktemp /tmp/sglang_XXXXXX.yaml)\n"
        'SGLANG_ARGS=(--sglang-config "${CONFIG}")\n'
        "python3 train.py ${SGLANG_ARGS[@]}\n"
    )
    assert launch.argv == ("--sglang-config", "/tmp/sglang_XXXXXX.yaml")


def test_variables_quotes_and_defaults() -> None:
    launch = only(
        'MODEL="meta-llama/Llama-3.1-8B-Instruct"\n'
        "STEPS=3\n"
        "export SGLANG_ENABLE_SPEC_V2=1\n"
        "export PYTHONUNBUFFERED=1\n"
        'python -m sglang.launch_server --model-path "$MODEL" --speculative-num-steps ${STEPS} '
        "--port ${PORT:-30001} --served-model-name 'a b' --tp $UNSET_ELSEWHERE/x\n"
    )
    assert launch.argv == (
        "--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-num-steps", "3",
        "--port", "30001", "--served-model-name", "a b", "--tp", "$UNSET_ELSEWHERE/x",
    )
    # Exported SGLang variables reach the launch; the others are not SGLang's business.
    assert launch.env == (("SGLANG_ENABLE_SPEC_V2", "1"),)


def test_docker_run_image_and_env() -> None:
    launch = only(
        "docker run --gpus all --shm-size 32g -p 30000:30000 -v ~/.cache/huggingface:/root/.cache/huggingface "
        '--env "HF_TOKEN=secret" -e SGLANG_ENABLE_SPEC_V2=1 --ipc=host lmsysorg/sglang:v0.5.3-cu129 '
        "python3 -m sglang.launch_server --model-path a/b --speculative-algorithm NGRAM 2>&1 | tee log.txt\n"
    )
    assert launch.image == "lmsysorg/sglang:v0.5.3-cu129"
    assert launch.env == (("SGLANG_ENABLE_SPEC_V2", "1"),)  # HF_TOKEN is not carried
    assert launch.argv == ("--model-path", "a/b", "--speculative-algorithm", "NGRAM")


@pytest.mark.parametrize(
    ("text", "dialect", "argv"),
    [
        ("python3 -u -m sgl_jax.launch_server --model-path Qwen/Qwen3-32B --device=tpu", Dialect.SGL_JAX, ("--model-path", "Qwen/Qwen3-32B", "--device=tpu")),
        ("sglang serve --model-path a/b --speculative-algorithm NGRAM", Dialect.SGLANG, ("--model-path", "a/b", "--speculative-algorithm", "NGRAM")),
        ("/usr/bin/python3.11 -m sglang.launch_server --model-path a/b", Dialect.SGLANG, ("--model-path", "a/b")),
        ("nohup python3 train_async.py --hf-checkpoint /x > log 2>&1 &", Dialect.SLIME, ("--hf-checkpoint", "/x")),
    ],
)
def test_entry_points(text: str, dialect: Dialect, argv: tuple[str, ...]) -> None:
    launch = only(text)
    assert launch.dialect is dialect
    assert launch.argv == argv


def test_several_launches_and_non_launches() -> None:
    text = (
        "pip install sglang\n"
        "python -m sglang.launch_server --model-path a/b --port 30000 &\n"
        "python3 -m sglang.bench_serving --port 30000\n"
        "if true; then python -m sglang.launch_server --model-path c/d; fi\n"
    )
    launches = find_launches(text, "<t>")
    assert [(launch.line, launch.argv[1]) for launch in launches] == [(2, "a/b"), (4, "c/d")]
    assert find_launches("echo hello\nls -la\n", "<t>") == []


def test_sourced_file_next_to_the_script(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.sh").write_text("MODEL_ARGS=(\n  --num-layers 2\n)\n")
    script = tmp_path / "run.sh"
    script.write_text(
        'SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null && pwd)"\n'
        'source "${SCRIPT_DIR}/models/m.sh"\n'
        "python3 train.py ${MODEL_ARGS[@]} --sglang-speculative-num-steps 2\n"
    )
    launch = only(script.read_text(), script_dir=tmp_path)
    assert launch.argv == ("--num-layers", "2", "--sglang-speculative-num-steps", "2")
    assert launch.arg_locations[0] == (str(tmp_path / "models" / "m.sh"), 2)
    assert launch.arg_locations[2] == ("<t>", 3)


@pytest.mark.parametrize("text", ["python -m sglang.launch_server --model-path 'a/b", 'python -m sglang.launch_server --x "y', "X=$(seq 1 3"])
def test_unterminated_quotes_are_input_errors(text: str) -> None:
    with pytest.raises(InputError, match="<t>:1: unterminated"):
        find_launches(text, "<t>")


# ------------------------------------------------------------------ bounded reading of untrusted text
# Each is now one InputError naming the file, the line and the limit. The texts here are only
# just past each limit, so that a reader without budgets stays within this process's memory;
# tests/cli/test_bounded_inputs.py runs the full-size bombs through the CLI under a CPU-time and
# memory limit.

LAUNCH = "python -m sglang.launch_server --model-path a/b\n"


def error_of(text: str, **kwargs) -> str:
    with pytest.raises(InputError) as caught:
        find_launches(text, "<t>", **kwargs)
    return caught.value.one_line()


def test_an_array_doubled_into_itself_stops_at_the_expansion_limit() -> None:
    text = "A=(x x)\n" + 'A=("${A[@]}" "${A[@]}" "${A[@]}" "${A[@]}" "${A[@]}" "${A[@]}" "${A[@]}" "${A[@]}")\n' * 5 + LAUNCH
    message = error_of(text)
    assert message.startswith("<t>:6: the array A expands to more than 64 KiB"), message


def test_a_variable_doubled_forty_times_stops_at_the_expansion_limit() -> None:
    message = error_of("A=xx\n" + "A=$A$A\n" * 16 + LAUNCH)
    assert message.startswith("<t>:16: the word A=$A$A expands to more than 64 KiB"), message


def test_many_expansions_of_a_large_array_stop_at_the_total_budget() -> None:
    """Each copy stays under the per-value limit; together they pass the 4 MiB of expansion."""
    text = "A=($(seq 1 9000))\n" + 'B=("${A[@]}")\n' * 200 + LAUNCH
    message = error_of(text)
    assert "expand to more than 4 MiB in all" in message and message.startswith("<t>:"), message


def test_a_command_of_too_many_words_is_refused() -> None:
    message = error_of("python -m sglang.launch_server " + "{ " * 40000 + "\n")
    assert message.startswith("<t>:1: the command expands to more than 64 KiB"), message


def test_more_launches_than_the_limit_name_the_first_one_over() -> None:
    message = error_of(LAUNCH * 100)
    assert message.startswith("<t>:65: more than 64 launches in one text"), message
    assert len(find_launches(LAUNCH * 64, "<t>")) == 64


def test_launch_text_over_the_size_limit_is_refused_before_it_is_read() -> None:
    message = error_of(LAUNCH * (300 * 1024 // len(LAUNCH)))
    assert message.startswith("<t> is larger than 256 KiB"), message


@pytest.mark.parametrize("index", ["9" * 5000, "9" * 10, "1@"])
def test_an_array_index_of_thousands_of_digits_is_a_named_error(index: str) -> None:
    message = error_of("A=(x)\npython -m sglang.launch_server --model-path ${A[" + index + "]}\n")
    assert message.startswith("<t>:2: the array index of ${A[...]}") and "at most 9 digits" in message, message


def test_seq_of_huge_numbers_is_left_unknown() -> None:
    """Its digits alone could be megabytes; no batch size has ten digits."""
    first = 10**4000
    launch = only(f"python -m sglang.launch_server --cuda-graph-bs $(seq {first} {first + 99})\n")
    assert launch.argv == ("--cuda-graph-bs", f"$(seq {first} {first + 99})")


def test_a_script_that_sources_itself_is_read_once_with_a_note(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("STEPS=3\n" + "source ./run.sh\n" * 2 + "python -m sglang.launch_server --speculative-num-steps $STEPS\n")
    launch = only(script.read_text(), script_dir=tmp_path, script_path=script)
    assert launch.argv == ("--speculative-num-steps", "3")
    assert len(launch.notes) == 2
    assert launch.notes[0].startswith(f"<t>:2: source ./run.sh skipped: {script} is already being read (a source cycle)")


def test_two_scripts_that_source_each_other_are_each_read_once(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_text("A=1\nsource b.sh\n")
    (tmp_path / "b.sh").write_text("source a.sh\nB=2\n")
    launch = only("source a.sh\npython -m sglang.launch_server --x $A --y $B\n", script_dir=tmp_path)
    assert launch.argv == ("--x", "1", "--y", "2")
    [note] = launch.notes
    assert note.startswith(f"{tmp_path}/b.sh:1: source a.sh skipped") and "source cycle" in note


def test_a_file_sourced_in_turn_many_times_is_bounded_by_the_text_budget(tmp_path: Path) -> None:
    (tmp_path / "lib.sh").write_text("X=1\n" * 2000)  # 8000 bytes, read anew by each source line
    message = error_of("source lib.sh\n" * 40 + LAUNCH, script_dir=tmp_path)
    assert message.startswith("<t>:33: sourcing")  # 33 reads are 264000 bytes and "past 256 KiB" in message, message


def test_a_sourced_fifo_or_device_is_skipped_with_a_note(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.sh"
    os.mkfifo(fifo)
    launch = only(f"source {fifo}\nsource /dev/zero\n" + LAUNCH)
    assert launch.notes == (
        f"<t>:1: source {fifo} skipped: {fifo} is a FIFO (named pipe), not a file",
        "<t>:2: source /dev/zero skipped: /dev/zero is a character device, not a file",
    )


def test_a_sourced_file_over_the_limit_names_the_line_that_sources_it(tmp_path: Path) -> None:
    (tmp_path / "huge.sh").write_text("# padding\n" * 30000)
    message = error_of("X=1\nsource huge.sh\n" + LAUNCH, script_dir=tmp_path)
    assert message.startswith(f"<t>:2: sourcing {tmp_path / 'huge.sh'} takes the launch text past 256 KiB"), message


def test_a_long_word_and_many_placeholders_read_in_linear_time() -> None:
    """A 200 KiB word and 20k `<` used to cost a call (or a copy of the rest of the text) per character."""
    launch = only("python -m sglang.launch_server --x " + "a" * 60000 + " --y <your-model>\n")
    assert launch.argv == ("--x", "a" * 60000, "--y", "<your-model>")
    assert find_launches("echo " + "< " * 60000, "<t>") == []
