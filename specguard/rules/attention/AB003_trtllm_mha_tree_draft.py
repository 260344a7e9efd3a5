"""AB003 trtllm-mha-tree-draft."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    effective_topk,
    proposed_backend,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE, LLAMA31_8B_EAGLE_CHAIN
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

_TARGET_FLAGS = ("--attention-backend", "--prefill-attention-backend", "--decode-attention-backend")


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS:
        return
    flags = [f for f in _TARGET_FLAGS if (item := ctx.spec.item(f)) is not None and item.values == ("trtllm_mha",)]
    topk = effective_topk(ctx)
    if not flags or topk is None or topk <= 1:
        return
    replacement = proposed_backend(ctx, avoid=frozenset({"trtllm_mha"})) or "flashinfer"
    auto = "" if ctx.spec.get("speculative_eagle_topk") == topk else " (SGLang's automatic choice for this target)"
    yield RULE.finding(
        f"{', '.join(ctx.flag(f) for f in flags)} trtllm_mha only supports topk 1 and topk is {topk}{auto}: "
        f"SGLang raises 'trtllm_mha backend only supports topk = 1 for speculative decoding' at argument "
        f"resolution. Use {replacement}, or {ctx.flag('--speculative-eagle-topk')} 1",
        flags=(*flags, "--speculative-eagle-topk"),
        fix=fix_of(
            f"use {replacement} instead of trtllm_mha",
            Applicability.UNSAFE,
            *(Edit(name=f, value=replacement) for f in flags),
        ),
    )


RULE = Rule(
    check=check,
    code="AB003",
    category=Category.START,
    name="trtllm-mha-tree-draft",
    summary="trtllm_mha is used with a tree draft (topk > 1)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="trtllm_mha as the attention, prefill or decode backend with an EAGLE-family topk above 1 "
        "(typed, or SGLang's automatic choice: Llama targets get topk 4).",
        why="The TRT-LLM MHA kernels have no tree mask. SGLang raises ValueError at argument "
        "resolution (catalogue P20, `speculative_hook.py:1176-1180` in 0.5.23; the same check "
        "exists since 0.5.1).",
        fix="Use flashinfer (or fa3 on Hopper), or keep trtllm_mha with topk 1.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE, "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
              "--speculative-num-draft-tokens", "8", "--attention-backend", "trtllm_mha"),
        gpu="B200",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE_CHAIN, "--attention-backend", "trtllm_mha"),
        gpu="B200",
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1176-1180",
        "catalogue: shared/design/sglang-spec-checks.md P20",
    ),
    dialects=SGLANG_DIALECTS,
    log_signatures=(
        r"trtllm_mha backend only supports topk = 1 for speculative decoding",
    ),
)
