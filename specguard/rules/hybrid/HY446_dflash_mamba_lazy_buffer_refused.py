"""HY446 dflash-mamba-lazy-buffer-refused."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.hybrid._hybrid import (
    EXTRA_BUFFER_AUTO_ARCHITECTURES,
    extra_buffer_fix,
    mamba_strategy,
    strategy_flag,
    typed_strategy_flags,
)

# What 0.5.17 asserts (server_args.py:5599-5605):
# "extra_buffer_lazy unsupported with DFLASH; use --mamba-radix-cache-strategy extra_buffer."


def reaches_dflash_assert(ctx: CheckContext) -> bool:
    """Whether the asserts _validate_mamba_extra_buffer runs first pass: an architecture with extra_buffer on the
    triton linear-attention backend (0.5.17 arg_groups/overrides.py:1432-1458) and no PD disaggregation (server_args.py
    :5594-5598); any other launch fails there with another message."""
    linear = [
        item.values[0]
        for item in ctx.spec.items
        if item.flag == "--linear-attn-backend" and item.values
    ]
    return (
        ctx.target is not None
        and ctx.target.architecture in EXTRA_BUFFER_AUTO_ARCHITECTURES
        and (not linear or linear[-1] == "triton")
        and ctx.spec.get("disaggregation_mode") in (None, "null")
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DFLASH"
        or mamba_strategy(ctx) != "extra_buffer_lazy"
        or ctx.spec.has("--disable-radix-cache")
        or not reaches_dflash_assert(ctx)
    ):
        return
    flag = strategy_flag(ctx)
    arch = ctx.target.architecture  # type: ignore[union-attr]
    yield RULE.finding(
        f"{flag} extra_buffer_lazy with DFLASH on {arch} in SGLang {ctx.version}: the mamba radix-cache check "
        'refuses it while parsing the arguments (AssertionError "extra_buffer_lazy unsupported with DFLASH; use '
        f'--mamba-radix-cache-strategy extra_buffer."). Use {flag} extra_buffer, or SGLang 0.5.18 or later, whose '
        "DFLASH verify tracks the lazy buffer",
        flags=(
            *typed_strategy_flags(ctx),
            "--speculative-algorithm",
        ),
        fix=extra_buffer_fix(ctx),
    )


QWEN35_DFLASH_LAZY = (
    "--model-path",
    "Qwen/Qwen3.5-35B-A3B",
    "--speculative-algorithm",
    "DFLASH",
    "--speculative-draft-model-path",
    "d",
    "--mamba-radix-cache-strategy",
    "extra_buffer_lazy",
)

RULE = Rule(
    check=check,
    code="HY446",
    category=Category.START,
    name="dflash-mamba-lazy-buffer-refused",
    summary="DFLASH with --mamba-radix-cache-strategy extra_buffer_lazy on a hybrid mamba target is refused in 0.5.17",
    severity=Severity.ERROR,
    sglang_versions="==0.5.17",
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with `--mamba-radix-cache-strategy` (or `--mamba-scheduler-strategy`) "
        "`extra_buffer_lazy`, radix cache on, on a hybrid mamba target with extra_buffer (Qwen3-Next, Qwen3.5, "
        "Nemotron-H, Falcon-H1) and the triton linear-attention backend, without PD disaggregation, SGLang 0.5.17.",
        why="0.5.17 lifts the 0.5.13-0.5.16 refusal of extra_buffer_lazy with speculative decoding (HY312) except for "
        "DFLASH, whose verify bypasses the lazy track plan: `_validate_mamba_extra_buffer` asserts "
        '`algo != "DFLASH"` with "extra_buffer_lazy unsupported with DFLASH; use --mamba-radix-cache-strategy '
        'extra_buffer." (0.5.17 server_args.py:5593-5605), reached from `_handle_mamba_radix_cache` whenever the '
        "radix cache tracks mamba state (:5625-5643), after the asserts that the architecture has extra_buffer on "
        "the triton linear-attention backend (:5587-5589, `arg_groups/overrides.py:1432-1458`) and that PD "
        "disaggregation is off (:5594-5598), which fail other launches first with their own messages. The algorithm is the typed flag, so no draft-token count is "
        "needed to meet it. 0.5.18 drops the DFLASH assert (server_args.py:5803-5838) as "
        "`DFlashVerifyInput.prepare_for_verify` gains `prepare_mamba_track_for_verify` (speculative/dflash_info.py:"
        "91-96).",
        fix="Use the plain `extra_buffer` strategy (SGLang's own advice), or upgrade to SGLang 0.5.18.",
        fix_safety="Unsafe: extra_buffer allocates its ping-pong buffers up front, which takes memory from the KV pool.",
    ),
    bad=Example(
        argv=QWEN35_DFLASH_LAZY,
        target={"architectures": ("Qwen3_5MoeForConditionalGeneration",)},
        gpu="H100",
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=QWEN35_DFLASH_LAZY,
        target={"architectures": ("Qwen3_5MoeForConditionalGeneration",)},
        gpu="H100",
        sglang_version="0.5.18",
    ),
    sources=(
        "sglang 0.5.16: python/sglang/srt/server_args.py:4841-4844 (any speculation refused; HY312)",
        "sglang 0.5.17: python/sglang/srt/server_args.py:5584-5605, 5625-5643",
        "sglang 0.5.17: python/sglang/srt/arg_groups/overrides.py:1432-1458",
        "sglang 0.5.18: python/sglang/srt/server_args.py:5803-5838 (no DFLASH assert)",
        "sglang 0.5.18: python/sglang/srt/speculative/dflash_info.py:91-96",
    ),
    log_signatures=(r"extra_buffer_lazy unsupported with DFLASH",),
)
