"""AB006 draft-backend-not-a-choice."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.spelling import closest

# sglang 0.5.23 arg_groups/choices.py:103-111.
DRAFT_ATTENTION_BACKEND_CHOICES = ("flashinfer", "fa3", "fa4", "triton", "ascend", "trtllm_mha", "intel_xpu")


def check(ctx: CheckContext) -> Iterator[Finding]:
    value = ctx.spec.get("speculative_draft_attention_backend")
    if ctx.algorithm is None or value is None or value in DRAFT_ATTENTION_BACKEND_CHOICES:
        return
    close = closest(value, DRAFT_ATTENTION_BACKEND_CHOICES)
    hint = f" (did you mean {close[0]}?)" if close else ""
    yield RULE.finding(
        f"{ctx.flag('--speculative-draft-attention-backend')} {value!r} is not one of SGLang's draft backends "
        f"({', '.join(DRAFT_ATTENTION_BACKEND_CHOICES)}){hint}: SGLang accepts any string and the draft worker "
        "silently falls back to flashinfer (triton on HIP/XPU) with a warning at start-up",
        flags=("--speculative-draft-attention-backend",),
        fix=set_flags(
            "drop --speculative-draft-attention-backend (the draft follows the target's backend)",
            Applicability.UNSAFE,
            speculative_draft_attention_backend=None,
        ),
    )


RULE = Rule(
    check=check,
    code="AB006",
    category=Category.PERF,
    name="draft-backend-not-a-choice",
    summary="--speculative-draft-attention-backend names a backend the draft worker does not know",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="The value of `--speculative-draft-attention-backend` against SGLang's "
        "`DRAFT_ATTENTION_BACKEND_CHOICES`.",
        why="The flag has no argparse `choices` (catalogue P44). At worker start-up "
        "(`speculative/draft_worker_common.py:31-60` in 0.5.23) an unknown value is replaced by "
        "flashinfer (triton on HIP/XPU) with only a warning, so the draft runs a backend the "
        "user did not ask for; a typo like `fa-3` goes unnoticed.",
        fix="Drop the flag so the draft uses the target's backend, or write one of the choices.",
        fix_safety="Unsafe: the draft's backend changes from SGLang's silent fallback to the target's.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "Tengyunw/qwen3_8b_eagle3",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4", "--speculative-draft-attention-backend", "fa-3"),
        gpu="H100",
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "Tengyunw/qwen3_8b_eagle3",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4", "--speculative-draft-attention-backend", "fa3"),
        gpu="H100",
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/choices.py:103-111",
        "sglang 0.5.23: python/sglang/srt/speculative/draft_worker_common.py:31-60",
        "catalogue: shared/design/sglang-spec-checks.md P44",
    ),
    dialects=SGLANG_DIALECTS,
)
