"""DM542 dflash-draft-rope-dim-ignored."""

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

ROPE_DIM = "rope_dim"
# get_rope raises "Unknown RoPE scaling type" for a rope_scaling without either key, in every release
# (0.5.22 layers/rotary_embedding/factory.py:192-199), so such a draft never runs: nothing to warn about.
ROPE_TYPE_KEYS = ("rope_type", "type")
DRAFT = {
    "architectures": ("DFlashDraftModel",),
    "head_dim": 128,
    "rope_scaling": {"rope_type": "default", ROPE_DIM: 64},
}


def _head_dim(draft: ModelFacts) -> int | None:
    """DFlashAttention's head_dim: config head_dim, else hidden_size // num_attention_heads (models/dflash.py)."""
    if draft.head_dim is not None:
        return draft.head_dim
    if draft.hidden_size and draft.num_attention_heads:
        return draft.hidden_size // draft.num_attention_heads
    return None


def _ignored_rope_dim(draft: ModelFacts | None) -> tuple[int, int] | None:
    """(rope_dim, the width these releases rotate instead), when they differ."""
    if draft is None or not isinstance(draft.rope_scaling, dict):
        return None
    scaling = draft.rope_scaling
    rope_dim = scaling.get(ROPE_DIM)
    if not isinstance(rope_dim, int) or not any(
        key in scaling for key in ROPE_TYPE_KEYS
    ):
        return None
    # A partial_rotary_factor below 1 narrows the rotation in some of these releases and not in others
    # (0.5.11 passes none, 0.5.22 does): what they rotate then depends on the release, so stay quiet.
    if draft.partial_rotary_factor not in (None, 1.0):
        return None
    head_dim = _head_dim(draft)
    if head_dim is None or head_dim == rope_dim:
        return None
    return rope_dim, head_dim


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DFLASH":
        return
    widths = _ignored_rope_dim(ctx.draft)
    if widths is None:
        return
    rope_dim, head_dim = widths
    yield RULE.finding(
        f"The DFLASH draft's config.json sets rope_scaling.rope_dim {rope_dim}, which SGLang {ctx.version} ignores: "
        f"its attention rotates all {head_dim} dimensions of each head where the draft was trained with "
        f"{rope_dim}, so the draft sees wrong positions. It loads and runs, but most of its proposals are "
        "rejected: expect little or no speedup. SGLang 0.5.23 rotates rope_dim dimensions",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM542",
    category=Category.PERF,
    name="dflash-draft-rope-dim-ignored",
    summary="DFLASH draft whose rope_scaling sets rope_dim rotates the full head before 0.5.23 (low acceptance)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a draft whose config.json rope_scaling sets `rope_dim` (and a "
        "rope type) different from the head dim, without a partial_rotary_factor below 1, SGLang 0.5.11 to 0.5.22.",
        why="Up to 0.5.22 DFlashAttention, the attention of every DFLASH draft class in models/dflash.py, builds its "
        "rotary embedding with `rotary_dim=head_dim` and passes rope_scaling through (0.5.11 models/dflash.py:46, "
        "101-108; 0.5.22 :203, 244-259); get_rope reads no rope_dim (0.5.22 layers/rotary_embedding/factory.py:"
        "125-200) and rotates the whole head. 0.5.23 takes an explicit rope_scaling.rope_dim as the trained rotary "
        "width and drops the copied partial/M-RoPE keys (models/dflash.py:194-196, 252-278). The draft then drafts "
        "with wrong positions; the target's verify keeps the output correct, so the cost is the acceptance rate. "
        "A partial_rotary_factor below 1 is quiet: 0.5.22 applies it (:258) and 0.5.11 does not.",
        fix="Use SGLang 0.5.23 or later for this draft.",
        fix_safety="No automatic fix: the release is the user's choice.",
    ),
    bad=Example(argv=QWEN3_8B_DFLASH, draft=DRAFT, sglang_version="0.5.22"),
    good=Example(argv=QWEN3_8B_DFLASH, draft=DRAFT, sglang_version="0.5.23"),
    sources=(
        "sglang 0.5.11: python/sglang/srt/models/dflash.py:46,101-108 (rotary_dim=head_dim; no rope_dim)",
        "sglang 0.5.22: python/sglang/srt/models/dflash.py:203,244-259 (rotary_dim=head_dim); python/sglang/srt/layers/rotary_embedding/factory.py:125-200",
        "sglang 0.5.23: python/sglang/srt/models/dflash.py:194-196,252-278 (rotary_dim = rope_scaling['rope_dim'])",
    ),
    sglang_versions=">=0.5.11,<=0.5.22",
)
