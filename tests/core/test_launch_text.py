"""The one reader of launch text (specguard/launch_text.py): each shell form on its own."""

from __future__ import annotations

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
