"""DM343 dflash-draft-heads-not-split-by-tp."""

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
from specguard.rules.spec_params._shared import int_flag

DRAFT = {
    "architectures": ("DFlashDraftModel",),
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
}


def head_split_refusal(draft: ModelFacts, tp: int) -> str | None:
    """The assertion ``DFlashAttention.__init__`` fails for this draft over ``tp`` ranks, or None."""
    heads = draft.num_attention_heads
    if heads is None:
        return None
    # SGLang reads getattr(config, "num_key_value_heads", num_attention_heads).
    kv_heads = draft.num_key_value_heads or heads
    if heads % tp:
        return f"DFlashAttention requires total_num_heads divisible by tp_size. total_num_heads={heads}, tp_size={tp}."
    if kv_heads >= tp and kv_heads % tp:
        return (
            "DFlashAttention requires total_num_kv_heads divisible by tp_size when >= tp_size. "
            f"total_num_kv_heads={kv_heads}, tp_size={tp}."
        )
    if kv_heads < tp and tp % kv_heads:
        return (
            "DFlashAttention requires tp_size divisible by total_num_kv_heads when total_num_kv_heads < tp_size. "
            f"total_num_kv_heads={kv_heads}, tp_size={tp}."
        )
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    tp = ctx.spec.get("tp_size") or 1
    if ctx.algorithm != "DFLASH" or ctx.draft is None or tp == 1:
        return
    # With attention DP or attention CP, 0.5.20+ build the draft on a narrower group (0.5.20
    # dflash_worker_v2.py:402-406; 0.5.23 speculative/draft_parallel.py:53-68), whose width specguard does
    # not model across releases: quiet rather than a guess.
    if (
        ctx.resolution.attention_dp_size > 1
        or (int_flag(ctx, "--attn-cp-size") or 1) > 1
    ):
        return
    if (refusal := head_split_refusal(ctx.draft, tp)) is None:
        return
    yield RULE.finding(
        f"The DFLASH draft's attention heads do not split over {ctx.flag('--tp-size')} {tp}: SGLang {ctx.version} "
        f"asserts '{refusal}' when it builds the draft, after the target has loaded. Use a "
        f"{ctx.flag('--tp-size')} that divides the draft's heads (and that its KV heads divide, or that divides them), "
        "or a draft with such a head count",
        flags=("--tp-size", "--speculative-draft-model-path"),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM343",
    category=Category.START,
    name="dflash-draft-heads-not-split-by-tp",
    summary="DFLASH draft whose attention or KV heads --tp-size does not split fails to build (0.5.11+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with `--tp-size` above 1 where the draft's config.json "
        "`num_attention_heads` is not a multiple of it, or its `num_key_value_heads` (default `num_attention_heads`) "
        "is at least `--tp-size` and not a multiple of it, or below it and not a divisor of it. Quiet with DP "
        "attention or `--attn-cp-size` above 1, where 0.5.20+ build the draft on the narrower attention group.",
        why="The DFLASH draft runs its attention over the whole tensor-parallel group, and `DFlashAttention.__init__` "
        "asserts the split: `DFlashAttention requires total_num_heads divisible by tp_size.`, `DFlashAttention "
        "requires total_num_kv_heads divisible by tp_size when >= tp_size.` and `DFlashAttention requires tp_size "
        "divisible by total_num_kv_heads when total_num_kv_heads < tp_size.` (0.5.11 `models/dflash.py:41-66`, "
        "the first release with DFLASH; unchanged to 0.5.23 :205-229). The assertion fails while the draft model "
        "is built, after the target's weights have loaded. A DFLASH draft need not have its target's head counts, "
        "so a `--tp-size` that suits the target can still fail the draft.",
        fix="Choose a `--tp-size` that splits the draft's heads too, or a draft whose heads it splits.",
        fix_safety="No automatic fix: the parallel layout and the draft are the user's choice.",
    ),
    bad=Example(
        argv=(*QWEN3_8B_DFLASH, "--tp-size", "16"),
        draft={**DRAFT, "num_attention_heads": 24},
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=(*QWEN3_8B_DFLASH, "--tp-size", "8"), draft=DRAFT, sglang_version="0.5.23"
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/models/dflash.py:41-66",
        "sglang 0.5.23: python/sglang/srt/models/dflash.py:205-229",
        "sglang 0.5.20: python/sglang/srt/speculative/dflash_worker_v2.py:397-406 (attention DP: the attn-TP group)",
        "sglang 0.5.23: python/sglang/srt/speculative/draft_parallel.py:53-76; dflash_worker_v2.py:421-430",
    ),
    sglang_versions=">=0.5.11",
    log_signatures=(
        r"DFlashAttention requires total_num_heads divisible by tp_size",
        r"DFlashAttention requires total_num_kv_heads divisible by tp_size when >= tp_size",
        r"DFlashAttention requires tp_size divisible by total_num_kv_heads when total_num_kv_heads < tp_size",
    ),
)
