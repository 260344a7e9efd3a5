"""Facts several SP and PL rules read: raw flag values, the device, attention DP, the draft tree."""

from __future__ import annotations

from specguard.models import Applicability, Edit, Fix
from specguard.resolution import attention_dp_size  # noqa: F401  (re-exported)
from specguard.rules.base import CheckContext, fix_of

# 0.5.22 added --attn-dp-size and turned --enable-dp-attention into a deprecated spelling of
# "--attn-dp-size <dp-size>" (sglang 0.5.22/0.5.23: python/sglang/srt/arg_groups/parallel_hook.py:39-61);
# that boundary is sglang_facts.changes.ATTN_DP_SIZE_FLAG; the width is resolution's (re-exported here).


def int_flag(ctx: CheckContext, flag: str) -> int | None:
    """An integer flag, modeled or not; None when absent or not an integer."""
    item = ctx.spec.item(flag)
    if item is None or len(item.values) != 1:
        return None
    try:
        return int(item.values[0])
    except ValueError:
        return None


def float_flag(ctx: CheckContext, flag: str) -> float | None:
    item = ctx.spec.item(flag)
    if item is None or len(item.values) != 1:
        return None
    try:
        return float(item.values[0])
    except ValueError:
        return None


def device(ctx: CheckContext) -> str | None:
    """SGLang's ``--device``: as given, else what it detects on the known GPU; None when unknown."""
    given = ctx.spec.get("device")
    if given:
        return str(given).split(":")[0].lower()
    platform = ctx.env.platform
    if platform in ("cuda", "rocm"):
        return "cuda"  # ROCm builds of torch use the cuda device type
    if platform == "cpu":
        return "cpu"
    return None


def attn_dp_size(ctx: CheckContext) -> int:
    """The attention-DP width SGLang resolves (1 = no attention DP), decided once in resolution."""
    return ctx.resolution.attention_dp_size


def attn_dp_enabled(ctx: CheckContext) -> bool:
    return attn_dp_size(ctx) > 1


def attn_dp_flags(ctx: CheckContext) -> tuple[str, ...]:
    return tuple(f for f in ("--enable-dp-attention", "--attn-dp-size", "--dp-size") if ctx.spec.has(f))


def drop_attn_dp(title: str) -> Fix:
    """Remove attention DP; --dp-size goes too, since with the switch it counted DP-attention groups."""
    return fix_of(
        title,
        Applicability.UNSAFE,
        Edit(name="--enable-dp-attention", value=None),
        Edit(name="--attn-dp-size", value=None),
        Edit(name="--dp-size", value=None),
    )


def tree_capacity(steps: int, topk: int) -> int:
    """Draft candidates an EAGLE tree offers: ``topk + (steps - 1) * topk**2``.

    organize_draft_results takes ``torch.topk(scores, num_draft_tokens - 1)`` over them
    (sglang 0.5.23: python/sglang/srt/speculative/eagle_utils.py:100-111; scores from
    speculative/spec_utils.py:417-470, topk for the first step and topk*topk per later step).
    """
    return topk + (steps - 1) * topk * topk
