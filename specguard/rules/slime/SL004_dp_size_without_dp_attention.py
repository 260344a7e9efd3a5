"""SL004 dp-size-without-dp-attention."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Dialect, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.slime._slime import SLIME_HEAD


def _dp_size(ctx: CheckContext) -> tuple[int | None, str]:
    for item in reversed(ctx.spec.items):
        if item.flag in ("--dp-size", "--data-parallel-size") and len(item.values) == 1:
            try:
                return int(item.values[0]), item.flag
            except ValueError:
                return None, item.flag
    return None, "--dp-size"


def check(ctx: CheckContext) -> Iterator[Finding]:
    dp, flag = _dp_size(ctx)
    if dp is None or dp <= 1 or ctx.spec.get("enable_dp_attention"):
        return
    yield RULE.finding(
        f"{ctx.flag(flag)} {dp} without {ctx.flag('--enable-dp-attention')}: slime's validate_args asserts "
        "`sglang_enable_dp_attention` whenever the DP size is above 1, so the job stops before any engine "
        f"starts (a bare AssertionError). Add {ctx.flag('--enable-dp-attention')} (DP attention, as in slime's "
        "run-deepseek-r1.sh), or drop the DP size",
        flags=(flag, "--enable-dp-attention"),
        fix=set_flags("add --enable-dp-attention", Applicability.UNSAFE, enable_dp_attention=True),
    )


RULE = Rule(
    check=check,
    code="SL004",
    category=Category.START,
    name="dp-size-without-dp-attention",
    summary="--sglang-dp-size above 1 without --sglang-enable-dp-attention (slime asserts)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Fires in slime when `--sglang-dp-size` (or `--sglang-data-parallel-size`) is above 1 and "
        "`--sglang-enable-dp-attention` is not given.",
        why=f"slime's `validate_args` (`slime/backends/sglang_utils/arguments.py`, HEAD {SLIME_HEAD}; the "
        "same assert is in the Sep-2025 code) does `if args.sglang_dp_size > 1: assert "
        "args.sglang_enable_dp_attention`: slime's engines only run SGLang's DP as DP attention inside one "
        "engine. (SGLang 0.5.23 itself deprecates `--enable-dp-attention` for `--attn-dp-size`, P03, but "
        "slime still asserts the old switch.)",
        fix="Add `--sglang-enable-dp-attention`.",
        fix_safety="Unsafe: it turns DP attention on, which changes how the engine runs.",
    ),
    bad=Example(
        argv=("--hf-checkpoint", "/root/DeepSeek-R1", "--rollout-num-gpus-per-engine", "8", "--sglang-dp-size", "8"),
        dialect=Dialect.SLIME,
    ),
    good=Example(
        argv=("--hf-checkpoint", "/root/DeepSeek-R1", "--rollout-num-gpus-per-engine", "8", "--sglang-dp-size", "8",
              "--sglang-enable-dp-attention"),
        dialect=Dialect.SLIME,
    ),
    sources=(
        "design: dialects.md §1.2 (sglang_dp_size > 1 requires --sglang-enable-dp-attention) and §1.6 (run-deepseek-r1.sh)",
        f"THUDM/slime {SLIME_HEAD}: slime/backends/sglang_utils/arguments.py (validate_args)",
        "design: sglang-spec-checks.md P03",
    ),
    dialects=(Dialect.SLIME,),
)
