"""DM344 dflash-draft-sliding-layers-ignored."""

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

DRAFT = {
    "architectures": ("DFlashDraftModel",),
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
    ):
        return
    sliding = [
        index
        for index, kind in enumerate(draft.layer_types)
        if kind == "sliding_attention"
    ]
    yield RULE.finding(
        f"The DFLASH draft's config.json makes layer(s) {', '.join(map(str, sliding))} sliding_attention, but SGLang "
        f"{ctx.version} does not read layer_types: every draft layer attends bidirectionally over the whole context, "
        "not the causal sliding window it was trained with, so its proposals are poor and few are accepted (the "
        "output stays correct). SGLang 0.5.14 and later build those layers with the draft's sliding window",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM344",
    category=Category.PERF,
    name="dflash-draft-sliding-layers-ignored",
    summary="DFLASH draft with sliding_attention layers runs them as full bidirectional attention before 0.5.14",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a draft whose config.json `layer_types` (top level or "
        "`text_config`) include `sliding_attention`, SGLang 0.5.11 (the first release with DFLASH) to 0.5.13.",
        why="Through 0.5.13 `DFlashAttention.__init__` builds every draft layer as `RadixAttention(..., "
        "attn_type=AttentionType.ENCODER_ONLY)` with no sliding window and never reads `layer_types` (0.5.11 "
        "`models/dflash.py:112-119`, 0.5.13 :116-123). 0.5.14 reads them: `_get_dflash_layer_attention_params` gives "
        "a `sliding_attention` layer the config's `sliding_window` (less one) and a causal (`DECODER`) mask "
        "(`models/dflash.py:44-66, 141-152`; `speculative/dflash_utils.py:329-356`). A draft trained with sliding "
        "layers that attends over the whole context, both ways, proposes poorly; the target's output is unchanged. "
        "DM177 covers the causality a draft declares with `is_causal`.",
        fix="Use SGLang 0.5.14 or later with this draft.",
        fix_safety="No automatic fix: the release and the draft checkpoint are the user's choice.",
    ),
    bad=Example(argv=QWEN3_8B_DFLASH, draft=DRAFT, sglang_version="0.5.13"),
    good=Example(argv=QWEN3_8B_DFLASH, draft=DRAFT, sglang_version="0.5.14"),
    sources=(
        "sglang 0.5.11: python/sglang/srt/models/dflash.py:112-119",
        "sglang 0.5.13: python/sglang/srt/models/dflash.py:116-123",
        "sglang 0.5.14: python/sglang/srt/models/dflash.py:44-66, 141-152",
        "sglang 0.5.14: python/sglang/srt/speculative/dflash_utils.py:329-356",
    ),
    sglang_versions=">=0.5.11,<0.5.14",
)
