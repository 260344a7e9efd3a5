"""Facts shared by the HY rules: which targets carry mamba/linear-attention state or
sliding-window attention, read from SGLang's own architecture tables."""

from __future__ import annotations

from specguard.models import Applicability, Edit, Fix
from specguard.rules.base import CheckContext, fix_of
from specguard.sglang_facts.changes import (
    MAMBA_AUTO_EXTRA_BUFFER,
    MAMBA_RADIX_STRATEGY_FLAG,
)

# Targets whose radix cache is SGLang's MambaRadixCache (the ones `_handle_mamba_radix_cache`
# is called for with mamba caching on): sglang 0.5.10 server_args.py:1919-2060 and 0.5.13
# server_args.py (same call sites). GraniteMoeHybrid is left out (only when its layer_types
# name a mamba layer), and so are the rarer entries added in 0.5.13 (InternS2Preview,
# MiniCPM-V 4.6, Bailing V2.5).
MAMBA_RADIX_ARCHITECTURES = frozenset(
    {
        "Qwen3NextForCausalLM",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "NemotronHForCausalLM",
        "FalconH1ForCausalLM",
        "JetNemotronForCausalLM",
        "JetVLMForConditionalGeneration",
        "Lfm2ForCausalLM",
    }
)

# The --mamba-*-strategy flag: --mamba-scheduler-strategy until 0.5.13, renamed to
# --mamba-radix-cache-strategy in 0.5.14 (0.5.14 server_args.py:6350-6356 keeps the old name
# as a deprecated alias).
STRATEGY_FLAGS = ("--mamba-radix-cache-strategy", "--mamba-scheduler-strategy")


def mamba_strategy(ctx: CheckContext) -> str:
    """The strategy as typed (either spelling; the last one wins), else SGLang's 'auto'."""
    typed = [item for item in ctx.spec.items if item.flag in STRATEGY_FLAGS and item.values]
    return typed[-1].values[0] if typed else "auto"


def strategy_flag(ctx: CheckContext) -> str:
    """The strategy flag in the spelling the user typed, else the one their release knows."""
    for item in reversed(ctx.spec.items):
        if item.flag in STRATEGY_FLAGS:
            return ctx.flag(item.flag)
    return ctx.flag(STRATEGY_FLAGS[0] if MAMBA_RADIX_STRATEGY_FLAG.present_in(ctx.version) else STRATEGY_FLAGS[1])


def typed_strategy_flags(ctx: CheckContext) -> tuple[str, ...]:
    """The strategy flags the launch types (either spelling), for a finding's ``flags``."""
    return tuple(flag for flag in STRATEGY_FLAGS if ctx.spec.has(flag))


def extra_buffer_fix(ctx: CheckContext) -> Fix:
    """The fix of a refused extra_buffer_lazy: the strategy flag typed last set to extra_buffer."""
    typed = next(item.flag for item in reversed(ctx.spec.items) if item.flag in STRATEGY_FLAGS)
    return fix_of("track mamba state with extra_buffer", Applicability.UNSAFE, Edit(name=typed, value="extra_buffer"))


def is_mamba_radix_target(ctx: CheckContext) -> bool:
    return ctx.target is not None and ctx.target.architecture in MAMBA_RADIX_ARCHITECTURES

# Targets with sliding-window attention layers whose EAGLE verify / draft-extend paths break
# on flashinfer and triton (sglang#22679: Gemma 2, Gemma 3; sglang#24481: MiMo-V2.5's SWA
# MTP layers under triton). The names are SGLang's registrations of those families (sglang
# 0.5.23 arg_groups/model_overrides/gemma2_gemma3.py:13-19, mimo_v2.py:19).
SLIDING_WINDOW_ARCHITECTURES = frozenset(
    {
        "Gemma2ForCausalLM",
        "Gemma3ForCausalLM",
        "Gemma3ForConditionalGeneration",
        "Gemma3nForCausalLM",
        "Gemma3nForConditionalGeneration",
        "MiMoV2ForCausalLM",
        "MiMoV2FlashForCausalLM",
    }
)

# Targets whose 'auto' mamba strategy can resolve to extra_buffer, from 0.5.14 on (with the
# default triton linear-attention backend): sglang 0.5.14 server_args.py:4338-4351. The rarer
# entries (InternS2-Preview, MiniCPM-V 4.6, Bailing V2.5, GraniteMoeHybrid, NemotronH-Puzzle) are
# left out, as in MAMBA_RADIX_ARCHITECTURES.
EXTRA_BUFFER_AUTO_ARCHITECTURES = frozenset(
    {
        "Qwen3NextForCausalLM",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "FalconH1ForCausalLM",
        "NemotronHForCausalLM",
    }
)


def runs_extra_buffer(ctx: CheckContext) -> bool:
    """Whether SGLang tracks mamba state with the extra_buffer strategies (plain or lazy).

    Typed, the strategy holds whatever the radix cache (``enable_mamba_extra_buffer()`` reads the
    strategy alone, 0.5.13 server_args.py:7363-7364). 'auto' resolves to extra_buffer from 0.5.14
    when the radix cache is on, overlap or paging is wanted, and the linear-attention backend is
    triton (0.5.14 server_args.py:4380-4395); before 0.5.14 it resolves to no_buffer.
    """
    strategy = mamba_strategy(ctx)
    if strategy in ("extra_buffer", "extra_buffer_lazy"):
        return True
    if strategy != "auto" or not MAMBA_AUTO_EXTRA_BUFFER.present_in(ctx.version):
        return False
    if ctx.target is None or ctx.target.architecture not in EXTRA_BUFFER_AUTO_ARCHITECTURES:
        return False
    if ctx.spec.has("--disable-radix-cache"):
        return False
    linear = [item.values[0] for item in ctx.spec.items if item.flag == "--linear-attn-backend" and item.values]
    if linear and linear[-1] != "triton":
        return False
    return not ctx.spec.has("--disable-overlap-schedule") or (ctx.spec.get("page_size") or 1) > 1
