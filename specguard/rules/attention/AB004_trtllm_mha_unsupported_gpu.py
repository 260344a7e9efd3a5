"""AB004 trtllm-mha-unsupported-gpu."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, proposed_backend
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of

_TARGET_FLAGS = ("--attention-backend", "--prefill-attention-backend", "--decode-attention-backend")
_TRTLLM_MAJORS = (9, 10, 12)


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if gpu is None:
        return
    flags = [f for f in _TARGET_FLAGS if (item := ctx.spec.item(f)) is not None and item.values == ("trtllm_mha",)]
    if not flags:
        return
    if gpu.platform == "cuda":
        if gpu.compute_capability is None or gpu.compute_capability[0] in _TRTLLM_MAJORS:
            return
        what = f"{gpu.name} is SM{gpu.sm}"
    else:
        what = f"{gpu.name} is not an NVIDIA GPU"
    replacement = proposed_backend(ctx, avoid=frozenset({"trtllm_mha"}))
    fix = None
    if replacement is not None:
        fix = fix_of(f"use {replacement} instead of trtllm_mha", Applicability.UNSAFE,
                     *(Edit(name=f, value=replacement) for f in flags))
    yield RULE.finding(
        f"{', '.join(ctx.flag(f) for f in flags)} trtllm_mha needs Hopper (SM90), Blackwell (SM100) or SM120 "
        f"and {what}: SGLang raises ValueError at argument resolution"
        + (f". Use {replacement}" if replacement else ""),
        flags=tuple(flags),
        fix=fix,
    )


RULE = Rule(
    check=check,
    code="AB004",
    category=Category.START,
    name="trtllm-mha-unsupported-gpu",
    summary="trtllm_mha is requested on a GPU other than SM90, SM100 or SM120",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="trtllm_mha as the attention, prefill or decode backend on a known GPU that is not "
        "SM90/SM100/SM120 (Ampere, Ada, AMD, TPU).",
        why="SGLang raises `TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), "
        "or SM120 GPUs` (and the decode equivalent) at argument resolution (catalogue P40, "
        "`arg_groups/attention_hook.py:195-230` in 0.5.23).",
        fix="Use flashinfer (or triton) on these GPUs.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "Tengyunw/qwen3_8b_eagle3",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4", "--attention-backend", "trtllm_mha"),
        gpu="A100",
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "Tengyunw/qwen3_8b_eagle3",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4", "--attention-backend", "trtllm_mha"),
        gpu="H100",
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/attention_hook.py:195-230",
        "catalogue: shared/design/sglang-spec-checks.md P40",
    ),
    dialects=SGLANG_DIALECTS,
)
