"""The values a release refuses (``flag_values.refused_values``), read per release."""

from __future__ import annotations

import pytest

from specguard.dialects import parse
from specguard.errors import InputError
from specguard.flag_values import check_positionals, refused_values
from specguard.models import Dialect


@pytest.mark.parametrize(
    ("argv", "release", "problem", "replacement", "accepted_from"),
    [
        (["--attention-backend", "fa4"], "0.5.2", "not one of SGLang 0.5.2's choices", "fa3", "0.5.3rc2"),
        (["--attention-backend", "flashinfr"], "0.5.23", "not one of SGLang 0.5.23's choices", "flashinfer", None),
        (["--speculative-algorithm", "NEXTN"], "0.4.3", "not one of SGLang 0.4.3's choices", None, "0.4.3.post2"),
        (["--port", "abc"], "0.5.23", "--port expects an integer", None, None),
        (["--tp-size", "0"], "0.5.2", "--tp-size '0' is out of range", None, None),
        (["--disable-cuda-graph", "true"], "0.5.23", "--disable-cuda-graph is a switch", None, None),
        (["--enable-dp-attention=yes"], "0.5.23", "--enable-dp-attention is a switch", None, None),
    ],
)
def test_a_refused_value_names_the_flag_and_what_would_do(
    argv: list[str], release: str, problem: str, replacement: str | None, accepted_from: str | None
) -> None:
    [refusal] = refused_values(parse(["--model-path", "m", *argv]), release)
    assert problem in refusal.problem
    assert (refusal.replacement, refusal.accepted_from) == (replacement, accepted_from)


def test_values_a_release_takes_are_not_refused() -> None:
    assert refused_values(parse(["--model-path", "m", "--attention-backend", "fa4", "--port", "30000"]), "0.5.23") == ()
    assert refused_values(parse(["--model-path", "m", "--attention-backend", "fa3"]), "0.5.2") == ()


def test_sgl_jax_choices_are_its_own() -> None:
    # sgl-jax's --attention-backend fa is no SGLang choice; the SGLang history does not judge it.
    assert refused_values(parse(["--model-path", "m", "--attention-backend", "fa"], Dialect.SGL_JAX)) == ()


def test_a_stray_argument_is_unreadable_input_and_a_switch_value_is_not() -> None:
    with pytest.raises(InputError, match="stray argument 'extra'"):
        check_positionals(parse(["--model-path", "m", "extra"]))
    check_positionals(parse(["--model-path", "m", "--disable-cuda-graph", "true"]))
