"""HY312 mamba-lazy-buffer-spec-refused."""

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
    extra_buffer_fix,
    is_mamba_radix_target,
    mamba_strategy,
    strategy_flag,
    typed_strategy_flags,
)
from specguard.sglang_facts.changes import MAMBA_RADIX_STRATEGY_FLAG


def lazy_refused_at_start(ctx: CheckContext) -> bool:
    """Whether SGLang's mamba radix-cache handler meets extra_buffer_lazy with a draft-token count.

    The handler runs in the model-specific adjustments, before the speculative parameters are
    chosen (0.5.13 server_args.py:970 vs :1019; 0.5.16 :2969 vs :3031), so only a typed
    --speculative-num-draft-tokens reaches the assert; with the radix cache off it returns first.
    """
    return (
        ctx.algorithm is not None
        and is_mamba_radix_target(ctx)
        and mamba_strategy(ctx) == "extra_buffer_lazy"
        and ctx.spec.get("speculative_num_draft_tokens") is not None
        and not ctx.spec.has("--disable-radix-cache")
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not lazy_refused_at_start(ctx):
        return
    flag = strategy_flag(ctx)
    arch = ctx.target.architecture  # type: ignore[union-attr]
    said = (
        "extra_buffer_lazy unsupported with spec."
        if MAMBA_RADIX_STRATEGY_FLAG.present_in(ctx.version)
        else "extra_buffer_lazy is not yet supported with speculative decoding. Use --mamba-scheduler-strategy "
        "extra_buffer instead."
    )
    yield RULE.finding(
        f"{flag} extra_buffer_lazy with {ctx.algorithm} and {ctx.flag('--speculative-num-draft-tokens')} on "
        f"{arch} in SGLang {ctx.version}: the mamba radix-cache check refuses it while parsing "
        f'the arguments (AssertionError "{said}"). Use {flag} extra_buffer, or SGLang 0.5.17 or later, which '
        "tracks the lazy buffer through verify",
        flags=(
            *typed_strategy_flags(ctx),
            "--speculative-num-draft-tokens",
        ),
        fix=extra_buffer_fix(ctx),
    )


QWEN3_NEXT_MTP_LAZY = (
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
    "--mamba-scheduler-strategy",
    "extra_buffer_lazy",
)

RULE = Rule(
    check=check,
    code="HY312",
    category=Category.START,
    name="mamba-lazy-buffer-spec-refused",
    summary="extra_buffer_lazy with a typed --speculative-num-draft-tokens on a hybrid mamba target is refused (0.5.13 to 0.5.16)",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.13,<=0.5.16",
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--mamba-scheduler-strategy` / `--mamba-radix-cache-strategy extra_buffer_lazy` with any "
        "`--speculative-algorithm` and a typed `--speculative-num-draft-tokens`, radix cache on, on a hybrid mamba "
        "target (Qwen3-Next, Qwen3.5, Nemotron-H, Falcon-H1, ...), SGLang 0.5.13 (where the strategy arrives) to 0.5.16.",
        why="0.5.13's `_handle_mamba_radix_cache` asserts \"extra_buffer_lazy is not yet supported with speculative "
        'decoding. Use --mamba-scheduler-strategy extra_buffer instead." when `speculative_num_draft_tokens` is set '
        '(server_args.py:2707-2711); 0.5.14 to 0.5.16 keep it in `_validate_mamba_extra_buffer` as "extra_buffer_lazy '
        'unsupported with spec." (0.5.14 server_args.py:4371-4374; 0.5.16 :4841-4844). The handler runs in the '
        "model-specific adjustments, before SGLang picks the speculative parameters (0.5.13 server_args.py:970 vs "
        ":1019; 0.5.16 :2969 vs :3031), so only a typed draft-token count meets it; without one the launch starts "
        "and HY024's runtime crash is what follows before 0.5.16. 0.5.17 drops the assert (the verify path gains a "
        "lazy track plan); 0.5.12.post1 has no extra_buffer_lazy.",
        fix="Use the plain `extra_buffer` strategy (SGLang's own advice), or upgrade to SGLang 0.5.17.",
        fix_safety="Unsafe: extra_buffer allocates its ping-pong buffers up front, which takes memory from the KV pool.",
    ),
    bad=Example(
        argv=QWEN3_NEXT_MTP_LAZY,
        target={"architectures": ("Qwen3NextForCausalLM",)},
        gpu="H100",
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=QWEN3_NEXT_MTP_LAZY,
        target={"architectures": ("Qwen3NextForCausalLM",)},
        gpu="H100",
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.12.post1: python/sglang/srt/server_args.py (no extra_buffer_lazy)",
        "sglang 0.5.13: python/sglang/srt/server_args.py:970,1019,2707-2711",
        "sglang 0.5.14: python/sglang/srt/server_args.py:4364-4374",
        "sglang 0.5.16: python/sglang/srt/server_args.py:2969,3031,4831-4844",
        "sglang 0.5.17: python/sglang/srt/server_args.py (assert gone); speculative/spec_utils.py:761-773,1031 (lazy verify track plan)",
    ),
    log_signatures=(
        r"extra_buffer_lazy is not yet supported with speculative decoding",
        r"extra_buffer_lazy unsupported with spec\.",
    ),
)
