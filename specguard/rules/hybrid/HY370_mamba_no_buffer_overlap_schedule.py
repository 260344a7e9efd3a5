"""HY370 mamba-no-buffer-overlap-schedule."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.hybrid._hybrid import (
    STRATEGY_FLAGS,
    is_mamba_radix_target,
    mamba_strategy,
    strategy_flag,
)
from specguard.sglang_facts.changes import Change

OVERLAP_OFF = "--disable-overlap-schedule"
OLD_STRATEGY_FLAG = STRATEGY_FLAGS[1]
# The deprecated --mamba-scheduler-strategy spelling is gone from 0.5.20 (argparse refuses it as unknown).
OLD_STRATEGY_FLAG_REMOVED = Change(
    "0.5.20",
    "0.5.19 server_args.py:3920 still lists --mamba-scheduler-strategy; 0.5.20 server_args.py and arg_groups/ do not",
)


def old_strategy_flag_refused(ctx: CheckContext) -> bool:
    """Whether argparse refuses the launch's old strategy spelling before any mamba check runs."""
    return ctx.spec.has(OLD_STRATEGY_FLAG) and OLD_STRATEGY_FLAG_REMOVED.present_in(
        ctx.version
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    # Only a typed no_buffer: 'auto' that resolves to no_buffer turns the overlap scheduler off itself
    # (0.5.14 server_args.py:4392-4394). A PD decode server is left out: whether its radix cache is off
    # before the check depends on the release's hook order, which specguard does not model.
    if (
        ctx.algorithm is None
        or not is_mamba_radix_target(ctx)
        or mamba_strategy(ctx) != "no_buffer"
        or ctx.spec.has("--disable-radix-cache")
        or ctx.spec.has(OVERLAP_OFF)
        or ctx.spec.get("disaggregation_mode") == "decode"
        or old_strategy_flag_refused(ctx)
    ):
        return
    flag = strategy_flag(ctx)
    yield RULE.finding(
        f"{flag} no_buffer on {ctx.target.architecture} with the radix cache and the overlap scheduler on: "  # type: ignore[union-attr]
        f"SGLang {ctx.version} no longer turns the overlap scheduler off for {ctx.algorithm}, and its mamba "
        "radix-cache check fails while parsing the arguments (AssertionError 'no_buffer do not support overlap "
        f"schedule. Try to set disable_overlap_schedule=True.'). Add {ctx.flag(OVERLAP_OFF)}, or let the strategy "
        "default to auto (extra_buffer where the model supports it)",
        flags=(*(f for f in STRATEGY_FLAGS if ctx.spec.has(f)), OVERLAP_OFF),
        fix=fix_of(
            "turn the overlap scheduler off",
            Applicability.UNSAFE,
            Edit(name=OVERLAP_OFF, value=True),
        ),
    )


QWEN3_NEXT_MTP_NO_BUFFER = (
    "--model-path",
    "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)
QWEN3_NEXT = {"architectures": ("Qwen3NextForCausalLM",)}

RULE = Rule(
    check=check,
    code="HY370",
    category=Category.START,
    name="mamba-no-buffer-overlap-schedule",
    summary="A typed no_buffer mamba strategy with speculation needs --disable-overlap-schedule (0.5.14+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="Any speculative algorithm on a hybrid mamba target whose radix cache is SGLang's MambaRadixCache "
        "(Qwen3-Next, Qwen3.5, Nemotron-H, Falcon-H1, Jet-Nemotron, LFM2) with the radix cache on, "
        "`--mamba-radix-cache-strategy` (or, up to 0.5.19, the old `--mamba-scheduler-strategy`) typed as `no_buffer`, and no "
        "`--disable-overlap-schedule`, SGLang 0.5.14 or later.",
        why="0.5.14 rewrote the mamba radix-cache resolution: `_handle_mamba_radix_cache` runs "
        '`_validate_mamba_no_buffer` for an explicit no_buffer, which asserts "no_buffer do not support overlap '
        'schedule. Try to set disable_overlap_schedule=True." (0.5.14 server_args.py:4355-4362, called from '
        ":4380-4399); only `auto` turns the overlap scheduler off when it picks no_buffer (:4392-4394), and "
        "speculation no longer does (the EAGLE family runs the overlap spec-v2 worker, arg_groups/"
        "speculative_hook.py:276-280). Before 0.5.14 the same launch met HY020's ValueError (0.5.13 "
        "server_args.py:2743-2757). The assert is unchanged up to 0.5.23 (arg_groups/mamba_hook.py:156-163, "
        "called from arg_groups/model_hook.py:1048-1075 after overrides.py:454-487 resolves only `auto`).",
        fix="Add `--disable-overlap-schedule`, or leave the strategy at `auto` (extra_buffer for the models "
        "that support it).",
        fix_safety="Unsafe: the scheduler no longer overlaps CPU scheduling with the GPU step (slower).",
    ),
    bad=Example(
        argv=(*QWEN3_NEXT_MTP_NO_BUFFER, "--mamba-radix-cache-strategy", "no_buffer"),
        target=QWEN3_NEXT,
        gpu="H100",
        sglang_version="0.5.14",
    ),
    good=Example(
        argv=(
            *QWEN3_NEXT_MTP_NO_BUFFER,
            "--mamba-radix-cache-strategy",
            "no_buffer",
            OVERLAP_OFF,
        ),
        target=QWEN3_NEXT,
        gpu="H100",
        sglang_version="0.5.14",
    ),
    sources=(
        "sglang 0.5.13: python/sglang/srt/server_args.py:2743-2757 (speculation with no_buffer refused by a ValueError: HY020)",
        "sglang 0.5.14: python/sglang/srt/server_args.py:4355-4362, 4380-4399",
        "sglang 0.5.14: python/sglang/srt/arg_groups/speculative_hook.py:276-280 (overlap stays on for speculation)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/mamba_hook.py:156-163; arg_groups/model_hook.py:1048-1075; arg_groups/overrides.py:454-487",
    ),
    sglang_versions=">=0.5.14",
    log_signatures=(r"no_buffer do not support overlap schedule",),
)
