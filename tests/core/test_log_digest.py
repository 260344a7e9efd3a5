"""Reading a crash log: prefixes and colours cleaned, the ServerArgs line parsed without evaluating it."""

from __future__ import annotations

import re

import pytest

from specguard.log_digest import (
    TruncatedServerArgs,
    argv_from_fields,
    clean,
    digest,
    normalised,
    server_args_fields,
)

NOTHING = re.compile(r"(?!)")


@pytest.mark.parametrize(
    "raw",
    [
        "[2026-01-02 10:11:12 TP3] ValueError: x",
        "[2026-01-02 10:11:12 DP0 TP3 EP3] ValueError: x",
        "(SGLangEngine pid=123) ValueError: x",
        "(SGLangEngine pid=123, ip=10.0.0.7) [2026-01-02 10:11:12 TP0] ValueError: x",
        "2026-01-02T10:11:12.123456789Z ValueError: x",
        "\x1b[31m[2026-01-02 10:11:12]\x1b[0m ValueError: x\r\n",
        "sglang-1  | ValueError: x",
    ],
)
def test_prefixes_and_colours_are_cleaned(raw: str) -> None:
    assert clean(raw) == "ValueError: x"


def test_ranks_repeating_one_error_are_kept_once() -> None:
    lines = [f"[2026-01-02 10:11:12 TP{rank}] RuntimeError: shape [{rank}, 4096] at /tmp/x{rank}.py" for rank in range(8)]
    assert len(digest(lines, "log", NOTHING).errors) == 1
    assert normalised("RuntimeError: shape [3, 4096] at /a/b.py:12") == "RuntimeError: shape <shape> at <path>:<n>"


def test_server_args_literals_only_never_evaluated() -> None:
    fields, skipped = server_args_fields(
        "ServerArgs(model_path='m', tp_size=2, mem_fraction_static=-0.5, json_model_override_args='{}', "
        "cuda_graph_bs=[1, 2, 4], load_format=<LoadFormat.AUTO: 'auto'>, x=__import__('os').system('false'), "
        "kwargs={'a': (1, None)})"
    )
    assert fields == {"model_path": "m", "tp_size": 2, "mem_fraction_static": -0.5, "json_model_override_args": "{}",
                      "cuda_graph_bs": [1, 2, 4], "kwargs": {"a": [1, None]}}
    assert skipped == ("load_format", "x")


def test_a_cut_server_args_line_is_refused() -> None:
    with pytest.raises(TruncatedServerArgs):
        server_args_fields("ServerArgs(model_path='m', speculative_alg")


def test_only_fields_off_their_default_become_flags() -> None:
    argv, unmapped = argv_from_fields(
        {"model_path": "m", "port": 30000, "tp_size": 2, "disable_cuda_graph": True, "enable_torch_compile": False,
         "cuda_graph_bs": [1, 2], "not_a_field_of_sglang": 3}
    )
    assert argv == ["--model-path", "m", "--tp-size", "2", "--disable-cuda-graph", "--cuda-graph-bs", "1", "2"]
    assert unmapped == ["not_a_field_of_sglang"]


def test_a_message_printed_over_several_lines_is_read_joined() -> None:
    lines = [
        "[2026-01-02 10:11:12] ValueError: Speculative decoding for Qwen3_5MoeForConditionalGeneration is not compatible",
        "with radix cache when using --mamba-scheduler-strategy no_buffer.",
        "[2026-01-02 10:11:13] the next logger line",
        "not a continuation any more",
    ]
    found = digest(lines, "log", re.compile("not compatible with radix cache"))
    joined = "ValueError: Speculative decoding for Qwen3_5MoeForConditionalGeneration is not compatible with radix cache when using --mamba-scheduler-strategy no_buffer."
    assert found.errors == [("log:1", joined)]
    assert found.candidates == [("log:1", joined)]
