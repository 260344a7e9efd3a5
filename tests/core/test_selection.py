"""Rule selection with ruff's semantics (specguard/selection.py), on the real rule registry."""

from __future__ import annotations

import pytest

from specguard.errors import InputError
from specguard.models import Category
from specguard.rules import ALL_RULES, RULES_BY_CODE
from specguard.selection import Layer, Selection

EVERY = {rule.code for rule in ALL_RULES}
PERF = {rule.code for rule in ALL_RULES if rule.category is Category.PERF}


def enabled(*layers: Layer, per_file: tuple[str, ...] = ()) -> set[str]:
    return set(Selection.from_layers(ALL_RULES, layers, per_file).enabled)


def test_no_selector_runs_every_rule_and_names_none() -> None:
    selection = Selection.from_options(ALL_RULES)
    assert set(selection.enabled) == EVERY and not selection.named


def test_select_replaces_the_set_by_code_prefix_and_category() -> None:
    assert enabled(Layer(select=("MM003",))) == {"MM003"}
    assert enabled(Layer(select=("MM",))) == {code for code in EVERY if code.startswith("MM")}
    assert enabled(Layer(select=("FX08",))) == {code for code in EVERY if code.startswith("FX08")}
    assert enabled(Layer(select=("perf",))) == PERF
    assert enabled(Layer(select=("ALL",))) == EVERY


def test_ignore_removes_and_extend_select_adds() -> None:
    assert enabled(Layer(ignore=("MM",))) == {code for code in EVERY if not code.startswith("MM")}
    assert enabled(Layer(select=("SV001",), extend_select=("MM003",))) == {"SV001", "MM003"}


def test_the_more_specific_selector_wins_and_ignore_wins_a_tie() -> None:
    assert enabled(Layer(select=("MM",), ignore=("MM003",))) == {code for code in EVERY if code.startswith("MM")} - {"MM003"}
    assert enabled(Layer(select=("MM003",), ignore=("MM",))) == {"MM003"}
    assert enabled(Layer(select=("MM003",), ignore=("perf",))) == {"MM003"}  # a code over a category
    assert enabled(Layer(select=("MM",), ignore=("MM",))) == set()


def test_a_later_layer_select_replaces_an_earlier_one_and_keeps_its_ignores_otherwise() -> None:
    settings = Layer(origin="specguard.toml: ", select=("MM",), ignore=("MM003",))
    assert enabled(settings, Layer(select=("SV001",))) == {"SV001"}
    assert enabled(settings, Layer(extend_select=("SV001",))) == {code for code in EVERY if code.startswith("MM")} - {"MM003"} | {"SV001"}
    assert enabled(settings, Layer(extend_select=("MM003",))) == {code for code in EVERY if code.startswith("MM")}


def test_per_file_ignores_win_over_every_layer() -> None:
    assert enabled(Layer(select=("MM003",)), per_file=("MM",)) == set()


def test_only_named_rules_are_explicitly_selected() -> None:
    selection = Selection.from_options(ALL_RULES, extend_select=["perf"], ignore=["MM003"])
    assert selection.explicitly_selects(RULES_BY_CODE["SP006"])
    assert not selection.includes(RULES_BY_CODE["MM003"]) and not selection.explicitly_selects(RULES_BY_CODE["MM003"])
    assert selection.includes(RULES_BY_CODE["SV001"]) and not selection.explicitly_selects(RULES_BY_CODE["SV001"])


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("pref", "--select: no rule, prefix or category 'pref': did you mean perf?"),
        ("MM03", "--select: no rule, prefix or category 'MM03': did you mean MM003?"),
        ("XQ", "--select: no rule, prefix or category 'XQ': give a rule code"),
    ],
)
def test_an_unknown_selector_is_an_error_with_a_suggestion(selector: str, message: str) -> None:
    with pytest.raises(InputError) as error:
        Selection.from_options(ALL_RULES, select=[selector])
    assert error.value.one_line().startswith(message)
