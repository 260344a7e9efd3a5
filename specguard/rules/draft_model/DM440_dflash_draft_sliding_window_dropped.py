"""DM440 dflash-draft-sliding-window-dropped."""

from __future__ import annotations

from collections.abc import Iterator

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

# The config class transformers builds for the DFLASH drafts' model_type: its __post_init__ keeps sliding_window only
# when use_sliding_window is true (transformers 5.8.1 and 5.19.0 models/qwen3/configuration_qwen3.py:77-87), so a
# draft without it reaches SGLang with sliding_window None whatever its config.json says.
WINDOW_DROPPING_MODEL_TYPE = "qwen3"

# What SGLang raises, from 0.5.14 (speculative/dflash_utils.py get_dflash_attention_sliding_window_size):
# "DFLASH sliding_attention layers require config.sliding_window."

DRAFT = {
    "architectures": ("DFlashDraftModel",),
    "model_type": "qwen3",
    "num_hidden_layers": 2,
    "layer_types": ("sliding_attention", "full_attention"),
}


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if (
        ctx.algorithm != "DFLASH"
        or draft is None
        or not draft.layer_types
        or "sliding_attention" not in draft.layer_types
        or draft.model_type != WINDOW_DROPPING_MODEL_TYPE
        or draft.use_sliding_window
        # 0.5.19+ takes dflash_config.swa_window_size for Nemotron-3.5 drafts: such a draft says where its window is.
        or draft.dflash_swa_window_size is not None
    ):
        return
    yield RULE.finding(
        "The DFLASH draft's config.json has sliding_attention layers but not use_sliding_window: true, and "
        f"transformers' Qwen3Config (model_type {WINDOW_DROPPING_MODEL_TYPE}) sets sliding_window to None without it. "
        f"SGLang {ctx.version} then raises 'DFLASH sliding_attention layers require config.sliding_window.' while it "
        'builds the draft, after the target has loaded. Add "use_sliding_window": true and the trained '
        '"sliding_window" to the draft\'s config.json',
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM440",
    category=Category.START,
    name="dflash-draft-sliding-window-dropped",
    summary="A qwen3-type DFLASH draft with sliding_attention layers but no use_sliding_window fails to build (0.5.14+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a draft whose config.json has `model_type` `qwen3` (the DFlash "
        "drafts' own) and `layer_types` with a `sliding_attention` entry, but not `use_sliding_window: true` (and no "
        "`dflash_config.swa_window_size`), SGLang 0.5.14 or later.",
        why="0.5.14 builds each `sliding_attention` draft layer with the window from "
        "`get_dflash_attention_sliding_window_size`, which reads `sliding_window` from the draft's HF config and "
        "raises `ValueError: DFLASH sliding_attention layers require config.sliding_window.` when it is None "
        "(0.5.14 `speculative/dflash_utils.py:341-356`, called from `models/dflash.py:44-66` in `DFlashAttention`; "
        "0.5.23 `dflash_utils.py:400-420`, `models/dflash.py:166-191`). The draft's config is transformers' "
        "`Qwen3Config`, whose `__post_init__` sets `sliding_window = sliding_window if use_sliding_window else None` "
        "(transformers 5.8.1, pinned by 0.5.14, and 5.19.0, pinned by 0.5.23: `configuration_qwen3.py:77-87`), so a "
        "window written in config.json without `use_sliding_window: true` is dropped before SGLang reads it. From "
        "0.5.19 a Nemotron-3.5 draft may give the window as `dflash_config.swa_window_size` instead "
        "(0.5.19 `dflash_utils.py:418`); this rule stays quiet for any draft that sets it. 0.5.13 never read "
        "`layer_types` (DM344: the layers ran as full attention). Other model types keep or default the window "
        "their own way, so this rule does not judge them.",
        fix='Add `"use_sliding_window": true` and the `"sliding_window"` the draft was trained with to its config.json.',
        fix_safety="No automatic fix: the draft's config.json is not a launch flag.",
    ),
    bad=Example(argv=QWEN3_8B_DFLASH, draft=DRAFT, sglang_version="0.5.14"),
    good=Example(
        argv=QWEN3_8B_DFLASH,
        draft={**DRAFT, "use_sliding_window": True},
        sglang_version="0.5.14",
    ),
    sources=(
        "sglang 0.5.13: python/sglang/srt/models/dflash.py:116-123 (layer_types not read)",
        "sglang 0.5.14: python/sglang/srt/speculative/dflash_utils.py:329-356",
        "sglang 0.5.14: python/sglang/srt/models/dflash.py:44-66, 142-153",
        "sglang 0.5.19: python/sglang/srt/speculative/dflash_utils.py:408-421",
        "sglang 0.5.23: python/sglang/srt/speculative/dflash_utils.py:388-420",
        "sglang 0.5.23: python/sglang/srt/models/dflash.py:166-191",
        "transformers 5.8.1 and 5.19.0: src/transformers/models/qwen3/configuration_qwen3.py:77-87",
    ),
    sglang_versions=">=0.5.14",
    log_signatures=(r"DFLASH sliding_attention layers require config\.sliding_window",),
)
