"""Parsing and rendering flags in every dialect: nothing the user wrote is lost or changed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specguard.dialects import parse, render, render_command
from specguard.errors import InputError
from specguard.flag_values import refused_values
from specguard.flags import FLAGS_BY_NAME, MODELED_FLAGS, ValueKind
from specguard.models import Dialect
from specguard.spec import FlagItem, LaunchSpec


def test_value_forms_and_aliases() -> None:
    spec = parse(["--model", "m", "--speculative-num-steps=3", "--cuda-graph-bs", "1", "2", "4", "8", "--trust-remote-code"])
    assert spec.get("model_path") == "m"
    assert spec.get("speculative_num_steps") == 3
    assert spec.get("cuda_graph_bs") == [1, 2, 4, 8]
    assert spec.get("trust_remote_code") is True
    assert spec.get("enable_dp_attention") is False
    assert render(spec) == ["--model", "m", "--speculative-num-steps=3", "--cuda-graph-bs", "1", "2", "4", "8", "--trust-remote-code"]


def test_unknown_flags_are_kept_verbatim_and_in_order() -> None:
    argv = ["--foo-bar", "x", "y", "--speculative-algorithm", "eagle3", "--zzz", "--log-level", "warning"]
    spec = parse(argv)
    assert render(spec) == ["--foo-bar", "x", "y", "--speculative-algorithm", "EAGLE3", "--zzz", "--log-level", "warning"]
    assert spec.get("speculative_algorithm") == "EAGLE3"


def test_last_occurrence_wins_like_argparse() -> None:
    spec = parse(["--context-length", "4096", "--context-length", "2048"])
    assert spec.get("context_length") == 2048



def test_last_value_is_the_last_word_written_for_a_flag_modeled_or_not() -> None:
    spec = parse(["--model", "m", "--moe-a2a-backend", "deepep", "--moe-a2a-backend", "deepep_v2",
                  "--cuda-graph-bs", "1", "2", "4", "--trust-remote-code"])
    assert spec.last_value("--moe-a2a-backend") == "deepep_v2"  # not a modeled flag
    assert spec.last_value("--cuda-graph-bs") == "4"
    assert spec.last_value("--trust-remote-code") is None  # a switch carries no value
    assert spec.last_value("--disaggregation-mode") is None  # absent

def test_slime_dialect_is_detected_and_maps_slime_fields() -> None:
    argv = ["--hf-checkpoint", "/root/Llama", "--rollout-num-gpus-per-engine", "1", "--sglang-speculative-algorithm", "EAGLE3",
            "--sglang-speculative-num-steps", "5", "--fp16", "--rollout-max-response-len", "1024"]
    spec = parse(argv)
    assert spec.dialect is Dialect.SLIME
    assert spec.get("model_path") == "/root/Llama"
    assert spec.get("dtype") == "float16"
    assert spec.get("tp_size") == 1
    assert spec.get("speculative_num_steps") == 5
    assert render(spec) == argv
    sglang = render(spec, Dialect.SGLANG)
    assert sglang == ["--model-path", "/root/Llama", "--tp-size", "1", "--speculative-algorithm", "EAGLE3",
                      "--speculative-num-steps", "5", "--dtype", "float16"]
    assert parse(sglang).get("dtype") == "float16"


def test_aliases_keep_their_spelling_in_every_dialect() -> None:
    argv = ["--sglang-model", "x", "--sglang-tp", "2", "--sglang-tp-size", "4", "--rollout-num-gpus-per-engine", "1",
            "--sglang-speculative-algorithm", "EAGLE"]
    spec = parse(argv)
    assert render(spec) == argv
    assert [item.written for item in spec.items] == ["--sglang-model", "--sglang-tp", "--sglang-tp-size", None, None]
    assert parse(["--model", "m"]).item("--model-path").written == "--model"


def test_sglang_to_slime_rendering() -> None:
    spec = parse(["--model-path", "m", "--tp-size", "2", "--dtype", "float16", "--speculative-eagle-topk", "1"])
    assert render(spec, Dialect.SLIME) == ["--hf-checkpoint", "m", "--rollout-num-gpus-per-engine", "2", "--sglang-dtype", "float16",
                                           "--sglang-speculative-eagle-topk", "1"]


def test_render_command_shapes() -> None:
    spec = parse(["--sglang-speculative-algorithm", "EAGLE", "--sglang-speculative-num-steps", "3"], env=[("SGLANG_ENABLE_SPEC_V2", "1")])
    slime = render_command(spec)
    assert slime.startswith("export SGLANG_ENABLE_SPEC_V2=1\nSGLANG_ARGS=(\n")
    assert "   --sglang-speculative-num-steps 3" in slime
    jax = render_command(parse(["--speculative-algorithm", "EAGLE3"], Dialect.SGL_JAX))
    assert jax.startswith("python -m sgl_jax.launch_server")


def test_a_missing_value_is_unreadable_input() -> None:
    with pytest.raises(InputError) as error:
        parse(["--speculative-num-steps"])
    assert "--speculative-num-steps expects a value" in error.value.one_line()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--speculative-num-steps", "three"], "--speculative-num-steps expects an integer"),
        (["--speculative-algorithm", "MTP"], "use NEXTN"),
        (["--speculative-algorithm", "FOO"], "'FOO' is not one of SGLang 0.5.23's choices"),
        (["--mem-fraction-static", "lots"], "expects a number"),
        (["--trust-remote-code=yes"], "is a switch"),
        (["--sglang-speculative-num-steps", "x"], "--sglang-speculative-num-steps expects an integer"),
    ],
)
def test_refused_values_are_kept_and_name_the_flag(argv: list[str], needle: str) -> None:
    # A refused value is a finding (VB013), so the launch parses with it and every rule runs;
    # typed reads see it as unset.
    spec = parse(argv)
    assert spec.items[0].values
    [refusal] = refused_values(spec)
    assert needle in f"{refusal.problem}: {refusal.hint}"


def test_negative_numbers_are_values_not_flags() -> None:
    spec = parse(["--speculative-eagle-topk", "-2"])
    assert spec.get("speculative_eagle_topk") == -2


# ------------------------------------------------------------------------------ property test

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_./", min_size=1, max_size=12)


def _value_for(kind: ValueKind, choices) -> st.SearchStrategy[tuple[str, ...]]:
    if kind is ValueKind.SWITCH:
        return st.just(())
    if kind is ValueKind.INT:
        return st.integers(-5, 100000).map(lambda v: (str(v),))
    if kind is ValueKind.FLOAT:
        return st.floats(0, 1, allow_nan=False).map(lambda v: (repr(v),))
    if kind is ValueKind.INT_LIST:
        return st.lists(st.integers(1, 512).map(str), min_size=1, max_size=6).map(tuple)
    if kind is ValueKind.STR_LIST:
        return st.lists(_WORD, min_size=1, max_size=3).map(tuple)
    if choices:
        return st.sampled_from(choices).map(lambda v: (v,))
    return _WORD.map(lambda v: (v,))


@st.composite
def modeled_items(draw) -> FlagItem:
    spec = draw(st.sampled_from(MODELED_FLAGS))
    values = draw(_value_for(spec.kind, spec.choices))
    inline = len(values) == 1 and draw(st.booleans())
    return FlagItem(flag=spec.flag, values=values, inline=inline)


@st.composite
def unknown_items(draw) -> FlagItem:
    name = "--x-" + draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=10)).strip("-") + "z"
    values = tuple(draw(st.lists(_WORD, max_size=3)))
    return FlagItem(flag=name, values=values, known=True)


@st.composite
def launch_specs(draw) -> LaunchSpec:
    dialect = draw(st.sampled_from([Dialect.SGLANG, Dialect.SGL_JAX, Dialect.SLIME]))
    items = tuple(draw(st.lists(st.one_of(modeled_items(), unknown_items()), max_size=8)))
    if dialect is Dialect.SLIME:
        # A slime launch is recognised by its --sglang-* flags: make sure one is there.
        items = (FlagItem(flag="--speculative-algorithm", values=("EAGLE",)), *items)
    return LaunchSpec(dialect=dialect, items=items)


@settings(max_examples=300, deadline=None)
@given(launch_specs())
def test_parse_render_roundtrip(spec: LaunchSpec) -> None:
    assert parse(render(spec), spec.dialect) == spec


@settings(max_examples=200, deadline=None)
@given(launch_specs())
def test_modeled_values_survive_a_change_of_dialect(spec: LaunchSpec) -> None:
    for target in Dialect:
        moved = parse(render(spec, target), target)
        for item in spec.items:
            if item.flag in FLAGS_BY_NAME:
                dest = FLAGS_BY_NAME[item.flag].dest
                assert moved.get(dest) == spec.get(dest), (target, item)


def test_abbreviations_are_read_as_the_release_parser_reads_them() -> None:
    """argparse's allow_abbrev (catalogue P02): a unique prefix is that flag, in the release at hand."""
    from specguard.dialects import parse

    argv = ["--model-path", "m", "--speculative-algo", "EAGLE3", "--speculative-draft", "d", "--tp", "2"]
    old = {item.flag: (item.written, item.values) for item in parse(argv, release="0.5.1").items}
    assert old["--speculative-algorithm"] == ("--speculative-algo", ("EAGLE3",))
    assert old["--speculative-draft-model-path"] == ("--speculative-draft", ("d",))  # unique before 0.5.2
    assert old["--tp-size"] == ("--tp", ("2",))
    new = {item.flag for item in parse(argv).items}  # 0.5.23: --speculative-draft prefixes several arguments
    assert "--speculative-algorithm" in new and "--speculative-draft" in new and "--speculative-draft-model-path" not in new


def test_slime_command_puts_only_sglang_flags_in_the_array() -> None:
    spec = parse(["--actor-num-nodes", "1", "--hf-checkpoint", "/m", "--rollout-num-gpus-per-engine", "2", "--colocate",
                  "--sglang-mem-fraction-static", "0.7", "--sglang-speculative-algorithm", "EAGLE"], Dialect.SLIME)
    array, train = render_command(spec).split("\n)\n")
    assert array == "SGLANG_ARGS=(\n   --sglang-mem-fraction-static 0.7\n   --sglang-speculative-algorithm EAGLE"
    assert train == ("python3 train.py \\\n    --actor-num-nodes 1 \\\n    --hf-checkpoint /m \\\n"
                     "    --rollout-num-gpus-per-engine 2 \\\n    --colocate \\\n    \"${SGLANG_ARGS[@]}\"")
