"""DM177 dflash-draft-causality-ignored."""

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
from specguard.sglang_facts.changes import Change

# The draft's declared causality, per layer type, and the first release that builds it as declared.
# Before, full-attention layers were always bidirectional (0.5.11-0.5.13: every layer) and
# sliding-attention layers (read from 0.5.14) always causal.
SLIDING_LAYERS_READ = Change(
    "0.5.14", "0.5.14 models/dflash.py:44-66 reads layer_types"
)
CAUSAL_FULL_HONOURED = Change("0.5.17", "0.5.17 models/dflash.py:59-66")
NON_CAUSAL_SLIDING_HONOURED = Change("0.5.18", "0.5.18 models/dflash.py:46-52, 72-77")

DRAFT = {
    "architectures": ("DFlashDraftModel",),
    "layer_types": ("sliding_attention", "full_attention"),
    "is_causal": False,
}


def ignored_causality(ctx: CheckContext) -> tuple[str, str, Change] | None:
    """(layer type, how this release builds it, the release that follows is_causal) when they disagree."""
    draft = ctx.draft
    if draft is None or draft.is_causal is None or not draft.layer_types:
        return None
    if (
        draft.is_causal
        and "full_attention" in draft.layer_types
        and not CAUSAL_FULL_HONOURED.present_in(ctx.version)
    ):
        return "full_attention", "bidirectional (non-causal)", CAUSAL_FULL_HONOURED
    sliding_built_causal = SLIDING_LAYERS_READ.present_in(
        ctx.version
    ) and not NON_CAUSAL_SLIDING_HONOURED.present_in(ctx.version)
    if (
        not draft.is_causal
        and "sliding_attention" in draft.layer_types
        and sliding_built_causal
    ):
        return "sliding_attention", "causal", NON_CAUSAL_SLIDING_HONOURED
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DFLASH"
        or ctx.draft is None
        or (ignored := ignored_causality(ctx)) is None
    ):
        return
    layer_type, built, honoured = ignored
    yield RULE.finding(
        f"The DFLASH draft's config.json declares is_causal: {str(ctx.draft.is_causal).lower()} with layer_types "
        f"including {layer_type}, but SGLang {ctx.version} builds those layers {built}: the draft attends with another "
        "mask than it was trained with, so its proposals are poor and few are accepted (the output stays correct). "
        f"SGLang {honoured.first_release} and later build them as declared",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM177",
    category=Category.PERF,
    name="dflash-draft-causality-ignored",
    summary="DFLASH draft whose declared is_causal the release does not build (full layers to 0.5.16, sliding to 0.5.17)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a draft config.json whose `layer_types` include `full_attention` "
        "and that sets `is_causal: true` (SGLang 0.5.11-0.5.16), or include `sliding_attention` and set "
        "`is_causal: false` (0.5.14-0.5.17).",
        why="0.5.11-0.5.13 build every draft layer bidirectional (0.5.13 models/dflash.py:115-123, "
        "`AttentionType.ENCODER_ONLY`); 0.5.14 reads `layer_types` but builds full-attention layers bidirectional and "
        "sliding ones causal whatever `is_causal` says (0.5.14 models/dflash.py:56-62; 0.5.16 :58-64). 0.5.17 honours "
        "`is_causal` for full-attention layers (:59-66) and 0.5.18 for sliding ones too (`_get_dflash_attention_type`, "
        "0.5.18 :46-52, 72-77). A draft built with another mask than it was trained with drafts poorly; the target's "
        "verify keeps the output correct. Without `layer_types` every release builds the draft bidirectional, so that "
        "case is not reported.",
        fix="Use SGLang 0.5.17 (full-attention layers) or 0.5.18 (sliding layers) or later for this draft.",
        fix_safety="No automatic fix: the release is the user's choice.",
    ),
    bad=Example(argv=QWEN3_8B_DFLASH, draft=DRAFT, sglang_version="0.5.17"),
    good=Example(argv=QWEN3_8B_DFLASH, draft=DRAFT, sglang_version="0.5.18"),
    sources=(
        "sglang 0.5.13: python/sglang/srt/models/dflash.py:115-123 (every layer ENCODER_ONLY)",
        "sglang 0.5.14: python/sglang/srt/models/dflash.py:44-66 (full: ENCODER_ONLY, sliding: DECODER)",
        "sglang 0.5.16: python/sglang/srt/models/dflash.py:46-68",
        "sglang 0.5.17: python/sglang/srt/models/dflash.py:46-74 (full layers follow is_causal; sliding: DECODER)",
        "sglang 0.5.18: python/sglang/srt/models/dflash.py:46-81 (both follow is_causal)",
        "sglang 0.5.23: python/sglang/srt/models/dflash.py:166-191",
    ),
    sglang_versions=">=0.5.11,<0.5.18",
)
