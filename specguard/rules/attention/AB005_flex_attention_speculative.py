"""AB005 flex-attention-speculative."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, proposed_backend
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or ctx.spec.get("attention_backend") != "flex_attention":
        return
    replacement = proposed_backend(ctx, avoid=frozenset({"flex_attention"})) or "triton"
    yield RULE.finding(
        f"{ctx.flag('--attention-backend')} flex_attention does not support speculative decoding: SGLang "
        f"asserts 'Speculative decoding is currently not supported with Flex Attention backend' at argument "
        f"resolution. Use {replacement}",
        flags=("--attention-backend", "--speculative-algorithm"),
        fix=set_flags(f"use {replacement} instead of flex_attention", Applicability.UNSAFE, attention_backend=replacement),
    )


RULE = Rule(
    check=check,
    code="AB005",
    category=Category.START,
    name="flex-attention-speculative",
    summary="flex_attention is combined with speculative decoding",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--attention-backend flex_attention` together with any `--speculative-algorithm`.",
        why="SGLang asserts that no speculative algorithm is set when the Flex Attention backend is "
        "chosen (catalogue P42, `arg_groups/attention_hook.py:154-162` in 0.5.23; "
        "`server_args.py:1195` in 0.5.5), so the launch fails before anything loads.",
        fix="Use a backend that implements the draft/verify paths: fa3 on Hopper, flashinfer, or triton.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "NGRAM", "--attention-backend", "flex_attention"),
        gpu="L40S",
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "NGRAM", "--attention-backend", "flashinfer"),
        gpu="L40S",
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/attention_hook.py:154-162",
        "catalogue: shared/design/sglang-spec-checks.md P42",
    ),
    dialects=SGLANG_DIALECTS,
    log_signatures=(
        r"Speculative decoding is currently not supported with Flex Attention backend",
    ),
)
