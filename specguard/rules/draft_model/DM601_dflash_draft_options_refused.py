"""DM601 dflash-draft-options-refused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.sglang_facts.changes import selector_draft_class

# The dflash_config keys that must come in pairs, as parse_dflash_draft_config names them in its errors (0.5.19
# speculative/dflash_utils.py:616-646): "DFLASH grouped convolution needs conv_kernel_size and conv_group_size
# together. Got conv_kernel_size=4, conv_group_size=0." and "DFLASH selector needs rank and top_k together. Got
# rank=0, top_k=8."; each value first goes through _parse_optional_int (:509-524), which raises "Invalid DFLASH
# conv_kernel_size='x'." or "DFLASH selector rank must be >= 0, got -1.".
_PAIRS = (
    (
        "conv_kernel_size",
        "DFLASH conv_kernel_size",
        "conv_group_size",
        "DFLASH conv_group_size",
        "grouped convolution",
    ),
    (
        "selector_rank",
        "DFLASH selector rank",
        "selector_top_k",
        "DFLASH selector top_k",
        "selector",
    ),
)
# And then: "DFLASH output_multiplier must be positive." (:648-650).


def _parsed_int(value: Any, field: str) -> tuple[int | None, str | None]:
    """_parse_optional_int with min_value 0: (the value, None) or (None, SGLang's error)."""
    if value is None:
        return None, None
    # SGLang wraps whatever int() raises into its ValueError; these are what int() raises on a JSON value.
    try:
        parsed = int(value)
    except (TypeError, ValueError, OverflowError):
        return None, f"Invalid {field}={value!r}."
    if parsed < 0:
        return None, f"{field} must be >= 0, got {parsed}."
    return parsed, None


def _pair_problem(
    options: dict[str, Any], pair: tuple[str, str, str, str, str]
) -> str | None:
    first_key, first_field, second_key, second_field, what = pair
    first, problem = _parsed_int(options.get(first_key, 0), first_field)
    if problem:
        return problem
    second, problem = _parsed_int(options.get(second_key, 0), second_field)
    if problem:
        return problem
    if bool(first) != bool(second):
        return f"DFLASH {what} needs {first_key} and {second_key} together (got {first_key}={first}, {second_key}={second})."
    return None


def _multiplier_problem(options: dict[str, Any]) -> str | None:
    try:
        multiplier = float(options.get("output_multiplier", 1.0))
    except (TypeError, ValueError):
        return f"output_multiplier={options.get('output_multiplier')!r} is no number (float() raises)."
    return "DFLASH output_multiplier must be positive." if multiplier <= 0 else None


def first_problem(options: dict[str, Any], *, selector_class: bool) -> str | None:
    """The first error parse_dflash_draft_config raises for these dflash_config options, in its order; a selector
    draft class with no rank is DM411's (its constructor's message says more)."""
    for pair in _PAIRS:
        if (
            selector_class
            and pair[0] == "selector_rank"
            and not options.get("selector_rank")
        ):
            continue
        if problem := _pair_problem(options, pair):
            return problem
    return _multiplier_problem(options)


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if not (ctx.algorithm == "DFLASH" or ctx.algorithm == "DSPARK") or draft is None:
        return
    options = draft.dflash_parsed_options
    if not options:
        return
    problem = first_problem(
        options, selector_class=selector_draft_class(draft.architecture, ctx.version)
    )
    if problem is None:
        return
    yield RULE.finding(
        f"The draft's config.json dflash_config is refused by SGLang {ctx.version}'s parse_dflash_draft_config, "
        f"which {ctx.algorithm} runs at start: {problem} The server fails with that ValueError before serving. Fix "
        "the draft's dflash_config (set both keys of a pair, or neither; a positive output_multiplier)",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM601",
    category=Category.START,
    name="dflash-draft-options-refused",
    summary="A DFLASH/DSPARK draft whose dflash_config sets one key of the conv or selector pair, a negative or "
    "non-integer one, or output_multiplier <= 0 fails at start (0.5.19+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` or `DSPARK` with a draft whose config.json `dflash_config` sets only "
        "one of `conv_kernel_size`/`conv_group_size` (as a non-zero value) or of `selector_rank`/`selector_top_k`, "
        "one of them negative or not castable to an integer, or an `output_multiplier` that is not a positive "
        "number, SGLang 0.5.19 or later.",
        why="0.5.19 added these dflash_config options to `parse_dflash_draft_config`, which casts each of the four "
        "integers with `_parse_optional_int(..., min_value=0)` (raising `Invalid DFLASH conv_kernel_size=...` or "
        "`... must be >= 0`), refuses a pair with one side zero (`DFLASH grouped convolution needs conv_kernel_size "
        "and conv_group_size together`, `DFLASH selector needs rank and top_k together`) and raises `DFLASH "
        "output_multiplier must be positive.` (0.5.19 speculative/dflash_utils.py:509-524, 616-650; 0.5.23 "
        ":501-516, 619-653). It runs at start for DFLASH (arg_groups/speculative_hook.py:286, the target's "
        "capture setup, the draft worker) and for DSPARK through `parse_dspark_draft_config` (0.5.19 "
        "speculative/dspark_components/dspark_config.py:209; 0.5.23 :215). 0.5.18's parser reads none of these keys "
        "(0.5.18 speculative/dflash_utils.py). A `DFlash2DraftModel` selector draft with no rank is DM411's.",
        fix="Correct the draft's `dflash_config`: both keys of a pair or neither, non-negative integers, a positive "
        "`output_multiplier` (or none: it defaults to 1.0).",
        fix_safety="No automatic fix: the draft checkpoint's config is the checkpoint author's.",
    ),
    bad=Example(
        argv=QWEN3_8B_DFLASH,
        draft={
            "architectures": ("DFlashDraftModel",),
            "dflash_parsed_options": {"conv_kernel_size": 4},
        },
        sglang_version="0.5.19",
    ),
    good=Example(
        argv=QWEN3_8B_DFLASH,
        draft={
            "architectures": ("DFlashDraftModel",),
            "dflash_parsed_options": {"conv_kernel_size": 4, "conv_group_size": 2},
        },
        sglang_version="0.5.19",
    ),
    sources=(
        "sglang 0.5.18: python/sglang/srt/speculative/dflash_utils.py (parse_dflash_draft_config reads no conv/selector/output_multiplier keys)",
        "sglang 0.5.19: python/sglang/srt/speculative/dflash_utils.py:509-524,616-650",
        "sglang 0.5.19: python/sglang/srt/speculative/dspark_components/dspark_config.py:209",
        "sglang 0.5.23: python/sglang/srt/speculative/dflash_utils.py:501-516,619-653",
        "sglang 0.5.23: python/sglang/srt/speculative/dspark_components/dspark_config.py:215",
    ),
    sglang_versions=">=0.5.19",
    log_signatures=(
        r"DFLASH grouped convolution needs conv_kernel_size and conv_group_size together",
        r"DFLASH selector needs rank and top_k together",
        r"DFLASH output_multiplier must be positive",
        r"Invalid DFLASH (conv_kernel_size|conv_group_size|selector rank|selector top_k)=",
        r"DFLASH (conv_kernel_size|conv_group_size|selector rank|selector top_k) must be >= 0",
    ),
)
