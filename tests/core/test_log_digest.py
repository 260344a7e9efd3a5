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


@pytest.mark.parametrize(
    "raw",
    [
        # A slime job on a cluster runner: job timestamp, pod name, Ray actor, SGLang rank
        # (THUDM/slime#1022, https://github.com/THUDM/slime/issues/1022).
        (
            "[2025-12-18T16:24:02+08:00] leihaodi-qwen3-8b-rl-eagle3-20251218-162008s-3da56-cfcd2 >> (SGLangEngine pid=3111) "
            "[2025-12-18 08:24:01 TP7] Scheduler hit an exception: Traceback (most recent call last):"
        ),
        # A Kubernetes (CRI) container log: timestamp and stream tag before SGLang's own prefix
        # (sgl-project/sglang#8336, https://github.com/sgl-project/sglang/issues/8336).
        (
            "2025-07-25T07:53:08.21748708+08:00 stdout F [2025-07-25 07:53:08 TP2] Scheduler hit an exception: "
            "Traceback (most recent call last):"
        ),
    ],
)
def test_stacked_prefixes_of_public_job_logs_are_cleaned(raw: str) -> None:
    assert clean(raw) == "Scheduler hit an exception: Traceback (most recent call last):"


def test_a_command_continued_with_backslashes_is_kept_whole() -> None:
    # The launch block of sgl-project/sglang#19125 (https://github.com/sgl-project/sglang/pull/19125), first lines.
    lines = [
        "sglang serve --model-path stepfun-ai/Step-3.5-Flash-FP8 \\",
        "  --served-model-name step3p5-flash \\",
        "  --tp-size 8 \\",
        "  --port 8000",
        "[2026-02-21 14:12:48 TP4 EP4] Capture draft extend cuda graph begin (step 2). This can take up to several minutes.",
    ]
    commands = digest(lines, "log", NOTHING).commands
    assert commands == [("log:1", "\n".join(lines[:4]))]


def test_an_enum_repr_is_not_a_literal_but_a_string_that_looks_like_one_is() -> None:
    fields, skipped = server_args_fields("ServerArgs(model_path='m', load_format=<LoadFormat.AUTO: 'auto'>, watermark_config='<redacted>')")
    assert fields == {"model_path": "m", "watermark_config": "<redacted>"} and skipped == ("load_format",)
    assert argv_from_fields(fields)[0] == ["--model-path", "m"]  # a redacted value is no launch's


# Defaults read in the wheels (specguard/data/sglang-serverargs-defaults.json holds them):
# sglang 0.4.3.post2: python/sglang/srt/server_args.py:47 trust_remote_code: bool = True,
#   :70 schedule_policy: str = "lpm", :95 file_storage_pth: str = "sglang_storage",
#   :126-128 speculative_num_steps = 5, speculative_num_draft_tokens = 64, speculative_eagle_topk = 8;
# sglang 0.4.0: python/sglang/srt/server_args.py:88 file_storage_pth: str = "SGLang_storage";
# sglang 0.5.23: python/sglang/srt/arg_groups/fields/model.py:106-109 trust_remote_code = False,
#   schedule.py:86-102 schedule_policy = "fcfs", spec.py:58-69 speculative_num_steps,
#   speculative_eagle_topk, speculative_num_draft_tokens = None.
AT_0_4_3_POST2_DEFAULTS = {
    "model_path": "m", "trust_remote_code": True, "schedule_policy": "lpm",
    "speculative_num_steps": 5, "speculative_num_draft_tokens": 64, "speculative_eagle_topk": 8,
}


def test_a_field_at_its_own_releases_default_is_no_flag() -> None:
    assert argv_from_fields(AT_0_4_3_POST2_DEFAULTS, release="0.4.3.post2") == (["--model-path", "m"], [])


def test_the_same_fields_logged_by_0_5_23_are_flags() -> None:
    argv, _ = argv_from_fields(AT_0_4_3_POST2_DEFAULTS, release="0.5.23")
    assert argv == ["--model-path", "m", "--trust-remote-code", "--schedule-policy", "lpm", "--speculative-num-steps", "5",
                    "--speculative-num-draft-tokens", "64", "--speculative-eagle-topk", "8"]
    assert argv_from_fields(AT_0_4_3_POST2_DEFAULTS)[0] == argv  # no release named: 0.5.23's defaults


def test_a_field_only_an_old_release_has_is_judged_by_that_releases_default() -> None:
    # --file-storage-pth: up to 0.4.3.post2 (sglang-history.json); 0.5.23's parser has no such dest.
    assert argv_from_fields({"model_path": "m", "file_storage_pth": "SGLang_storage"}, release="0.4.0")[0] == ["--model-path", "m"]
    assert argv_from_fields({"model_path": "m", "file_storage_pth": "sglang_storage"}, release="0.4.3.post2")[0] == ["--model-path", "m"]
    changed = argv_from_fields({"model_path": "m", "file_storage_pth": "sglang_storage"}, release="0.4.0")[0]
    assert changed == ["--model-path", "m", "--file-storage-pth", "sglang_storage"]


def test_an_unlisted_post_release_reads_the_release_before_it() -> None:
    # 0.4.3.post3 was never published; its fields would be 0.4.3.post2's.
    assert argv_from_fields(AT_0_4_3_POST2_DEFAULTS, release="0.4.3.post3")[0] == ["--model-path", "m"]
