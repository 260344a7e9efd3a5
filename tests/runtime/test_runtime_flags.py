"""SGLang flag spelling and resolution in the reference runtime (pure, no torch)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from specguard.runtime import SUPPORTED_ALGORITHMS
from specguard.runtime.errors import RuntimeInputError
from specguard.runtime.flags import (
    GPU_ONLY_IGNORED_FLAGS,
    WARN_CHAIN_DRAFT_TOKENS,
    WARN_MAX_RUNNING,
    WARN_NGRAM_DRAFT_TOKENS,
    max_draft_tokens,
    parse_flags,
)

BASE = ["--model-path", "/m"]
STANDALONE = [*BASE, "--speculative-algorithm", "standalone", "--speculative-draft-model", "/d"]


def test_defaults_follow_sglang():
    args = parse_flags(BASE).args
    assert (args.host, args.port, args.decode_log_interval, args.device) == ("127.0.0.1", 30000, 40, "cpu")
    assert args.speculative_algorithm is None
    assert SUPPORTED_ALGORITHMS == {"STANDALONE", "NGRAM", "EAGLE", "EAGLE3"}


def test_standalone_auto_params_and_chain_rule():
    parsed = parse_flags(STANDALONE)
    a = parsed.args
    assert (
        a.speculative_algorithm,
        a.speculative_num_steps,
        a.speculative_eagle_topk,
        a.speculative_num_draft_tokens,
    ) == (
        "STANDALONE",
        3,
        1,
        4,
    )
    assert a.speculative_draft_model_path == "/d"
    assert WARN_MAX_RUNNING in parsed.warnings and a.max_running_requests == 48
    parsed = parse_flags(
        [
            *STANDALONE,
            "--speculative-num-steps",
            "5",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "3",
        ]
    )
    assert parsed.args.speculative_num_draft_tokens == 6
    assert WARN_CHAIN_DRAFT_TOKENS in parsed.warnings


def test_ngram_resolution():
    parsed = parse_flags([*BASE, "--speculative-algorithm", "NGRAM", "--speculative-ngram-max-bfs-breadth", "4"])
    a = parsed.args
    assert (a.speculative_eagle_topk, a.speculative_num_draft_tokens, a.speculative_num_steps) == (4, 12, 3)
    assert WARN_NGRAM_DRAFT_TOKENS in parsed.warnings


@given(steps=st.integers(1, 6), topk=st.integers(2, 6), extra=st.integers(-3, 3))
def test_tree_capacity_check(steps, topk, extra):
    ndt = max_draft_tokens(steps, topk) + extra
    argv = [
        *STANDALONE,
        "--speculative-num-steps",
        str(steps),
        "--speculative-eagle-topk",
        str(topk),
        "--speculative-num-draft-tokens",
        str(ndt),
    ]
    if 2 <= ndt <= 1 + topk + (steps - 1) * topk * topk:
        assert parse_flags(argv).args.speculative_num_draft_tokens == ndt
    else:
        with pytest.raises(RuntimeInputError, match="num-draft-tokens"):
            parse_flags(argv)


@pytest.mark.parametrize("algo", ["NEXTN", "DFLASH"])
def test_refused_algorithms_name_sglang(algo):
    with pytest.raises(RuntimeInputError, match=f"{algo} is not supported.*SGLang"):
        parse_flags([*BASE, "--speculative-algorithm", algo, "--speculative-draft-model", "/d"])


def test_gpu_only_flags_are_ignored_with_a_warning_and_unknown_flags_too():
    parsed = parse_flags(
        [
            *BASE,
            "--mem-fraction-static",
            "0.8",
            "--enable-torch-compile",
            "--attention-backend",
            "fa3",
            "--brand-new-flag",
            "x",
        ]
    )
    assert parsed.args.ignored_flags == [
        "--mem-fraction-static 0.8",
        "--enable-torch-compile",
        "--attention-backend fa3",
        "--brand-new-flag x",
    ]
    assert sum("GPU-only" in w for w in parsed.warnings) == 3
    assert any("--brand-new-flag x: unknown flag" in w for w in parsed.warnings)
    assert "--mem-fraction-static" in GPU_ONLY_IGNORED_FLAGS


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--tp-size", "2"], "--tp-size 2"),
        (["--dp", "4"], "--dp-size 4"),
        (["--quantization", "fp8"], "--quantization fp8"),
        (["--kv-cache-dtype", "fp8_e5m2"], "--kv-cache-dtype"),
        (["--speculative-algorithm", "STANDALONE"], "needs --speculative-draft-model-path"),
        (
            [
                "--speculative-algorithm",
                "STANDALONE",
                "--speculative-draft-model",
                "/d",
                "--speculative-accept-threshold-single",
                "0.5",
            ],
            "lossy",
        ),
        (
            [
                "--speculative-algorithm",
                "STANDALONE",
                "--speculative-draft-model",
                "/d",
                "--speculative-eagle-topk",
                "4",
            ],
            "need --speculative-num-steps",
        ),
        (["--port", "abc"], "bad flag"),
    ],
)
def test_flags_whose_meaning_cannot_be_honoured_are_refused(argv, message):
    with pytest.raises(RuntimeInputError, match=message):
        parse_flags([*BASE, *argv])
    with pytest.raises(RuntimeInputError, match="required"):
        parse_flags([])


def _head_dir(tmp_path, arch: str):  # type: ignore[no-untyped-def]
    import json

    head = tmp_path / "head"
    head.mkdir()
    (head / "config.json").write_text(json.dumps({"architectures": [arch]}))
    return str(head)


@pytest.mark.parametrize(
    "target_arch,expected",
    [("LlamaForCausalLM", (5, 4, 8)), ("Qwen2ForCausalLM", (3, 1, 4))],
)
@pytest.mark.parametrize("algo", ["EAGLE", "EAGLE3"])
def test_eagle_auto_parameters_follow_sglang_by_target_architecture(tmp_path, algo, target_arch, expected):
    """speculative_hook.py _auto_choose_speculative_params: (5, 4, 8) for Llama targets, else (3, 1, 4)."""
    import json

    target = tmp_path / "target"
    target.mkdir()
    (target / "config.json").write_text(json.dumps({"architectures": [target_arch]}))
    arch = "LlamaForCausalLMEagle3" if algo == "EAGLE3" else "LlamaForCausalLMEagle"
    args = parse_flags(
        ["--model-path", str(target), "--speculative-algorithm", algo, "--speculative-draft-model-path", _head_dir(tmp_path, arch)]
    ).args
    assert (args.speculative_num_steps, args.speculative_eagle_topk, args.speculative_num_draft_tokens) == expected


@pytest.mark.parametrize(
    "algo,arch,message",
    [
        ("EAGLE3", "LlamaForCausalLMEagle", "is an EAGLE head"),
        ("EAGLE", "LlamaForCausalLMEagle3", "is an EAGLE3 head"),
        ("EAGLE3", "LlamaForCausalLM", "not an EAGLE head the reference runtime loads"),
    ],
)
def test_eagle_heads_the_runtime_cannot_load_are_refused_in_one_line(tmp_path, algo, arch, message):
    with pytest.raises(RuntimeInputError, match=message) as info:
        parse_flags([*BASE, "--speculative-algorithm", algo, "--speculative-draft-model-path", _head_dir(tmp_path, arch)])
    assert "\n" not in str(info.value)


def test_eagle_head_must_be_a_local_checkpoint():
    with pytest.raises(RuntimeInputError, match="no config.json there"):
        parse_flags([*BASE, "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "lmsys/some-head"])
