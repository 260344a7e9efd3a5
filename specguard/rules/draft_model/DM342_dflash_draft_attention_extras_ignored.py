"""DM342 dflash-draft-attention-extras-ignored."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, ModelFacts, Severity
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
    "dflash_attention_sink_bias": True,
    "dflash_attention_value_scale": 0.707,
}


def declared_extras(draft: ModelFacts) -> list[str]:
    """The attention extras the draft's config.json asks for, as the message names them."""
    extras = []
    if draft.dflash_attention_sink_bias is True:
        extras.append(
            "dflash_config.attention_sink_bias: true (a learned per-head attention sink)"
        )
    if (
        draft.dflash_attention_value_scale is not None
        and draft.dflash_attention_value_scale != 1.0
    ):
        extras.append(
            f"dflash_config.attention_value_scale: {draft.dflash_attention_value_scale:g} (V scaled)"
        )
    if draft.partial_rotary_factor is not None and draft.partial_rotary_factor < 1.0:
        extras.append(
            f"partial_rotary_factor: {draft.partial_rotary_factor:g} (RoPE on part of each head)"
        )
    return extras


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DFLASH"
        or ctx.draft is None
        or not (extras := declared_extras(ctx.draft))
    ):
        return
    yield RULE.finding(
        f"The DFLASH draft's config.json sets {'; '.join(extras)}, but SGLang {ctx.version}'s DFlash attention "
        "builds none of these (full-width RoPE, no sink, V unscaled) and drops the sink weights: the draft attends "
        "unlike its training, so its proposals are poor and few are accepted (the output stays correct). "
        "SGLang 0.5.20 and later build them",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM342",
    category=Category.PERF,
    name="dflash-draft-attention-extras-ignored",
    summary="DFLASH draft with an attention sink, a V scale or partial RoPE runs without them before 0.5.20",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a draft whose config.json sets `dflash_config.attention_sink_bias: "
        "true`, a `dflash_config.attention_value_scale` other than 1, or a top-level `partial_rotary_factor` below 1, "
        "SGLang 0.5.11 (the first release with DFLASH) to 0.5.19.",
        why="Through 0.5.19 `DFlashAttention.__init__` builds its rotary embedding over the whole head "
        "(`get_rope(head_dim, rotary_dim=head_dim, ...)`, 0.5.11 `models/dflash.py:101-108`, 0.5.19 :209-216), has no "
        "value scale, and makes an attention-sink parameter only for Nemotron 3.5 drafts (0.5.19 :229-245); "
        "`DFlashDraftModel.load_weights` skips the sink weights as unexpected (0.5.11 :381-383, 0.5.19 :769-771). "
        "0.5.20's `parse_dflash_draft_config` reads `attention_sink_bias` and `attention_value_scale` from "
        "`dflash_config` (`speculative/dflash_utils.py:713-734`), and `DFlashAttention` passes "
        "`partial_rotary_factor` to `get_rope`, builds the sink and scales V (`models/dflash.py:215, 229-258, "
        "317-323`). A draft run without what it was trained with proposes poorly; the target's output is unchanged.",
        fix="Use SGLang 0.5.20 or later with this draft.",
        fix_safety="No automatic fix: the release and the draft checkpoint are the user's choice.",
    ),
    bad=Example(argv=QWEN3_8B_DFLASH, draft=DRAFT, sglang_version="0.5.19"),
    good=Example(argv=QWEN3_8B_DFLASH, draft=DRAFT, sglang_version="0.5.20"),
    sources=(
        "sglang 0.5.11: python/sglang/srt/models/dflash.py:101-108, 381-383",
        "sglang 0.5.19: python/sglang/srt/models/dflash.py:209-216, 229-245, 769-771",
        "sglang 0.5.20: python/sglang/srt/speculative/dflash_utils.py:713-734",
        "sglang 0.5.20: python/sglang/srt/models/dflash.py:215, 229-258, 317-323",
    ),
    sglang_versions=">=0.5.11,<0.5.20",
)
