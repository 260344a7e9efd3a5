"""SP003 draft-tokens-exceed-tree."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.rules.spec_params._shared import tree_capacity
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS:
        return
    steps = ctx.spec.get("speculative_num_steps")
    topk = ctx.spec.get("speculative_eagle_topk")
    tokens = ctx.spec.get("speculative_num_draft_tokens")
    if steps is None or topk is None or tokens is None or steps < 1 or topk < 1 or tokens < 2:
        return
    if topk == 1 and ctx.spec.dialect is not Dialect.SGL_JAX:
        return  # SGLang rewrites the chain's draft tokens to steps + 1 (SP002)
    capacity = tree_capacity(steps, topk)
    if tokens - 1 <= capacity:
        return
    tokens_flag = ctx.flag("--speculative-num-draft-tokens")
    yield RULE.finding(
        f"{tokens_flag} {tokens} asks for {tokens - 1} draft candidates, but {steps} steps of topk {topk} "
        f"offer only {capacity} (topk + (steps - 1) * topk^2): SGLang accepts it and the first decode "
        f"fails in torch.topk (organize_draft_results). Use at most {capacity + 1}, or more steps or a larger topk",
        flags=("--speculative-num-draft-tokens",),
        fix=set_flags(
            f"set {tokens_flag} {capacity + 1}, the largest the tree can fill",
            Applicability.UNSAFE,
            speculative_num_draft_tokens=capacity + 1,
        ),
    )


RULE = Rule(
    check=check,
    code="SP003",
    category=Category.START,
    name="draft-tokens-exceed-tree",
    summary="--speculative-num-draft-tokens is larger than the draft tree can supply",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Checks num_draft_tokens - 1 <= topk + (steps - 1) * topk^2 for the EAGLE worker family.",
        why="The draft stage scores topk candidates at the first step and topk*topk at each later step, "
        "then `organize_draft_results` takes `torch.topk(scores, num_draft_tokens - 1)` over all of them "
        "(speculative/eagle_utils.py:100-111 in 0.5.23). Asking for more fails at run time, after the "
        "weights have loaded; SGLang does not check it at argument time (catalogue P19; PR 24054 uses "
        "the same pool size for adaptive tiers).",
        fix="Lower the draft tokens to the tree's capacity + 1 (or grow steps/topk).",
        fix_safety="Unsafe: it changes how many tokens are verified per step.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--speculative-num-steps", "2", "--speculative-eagle-topk", "4",
              "--speculative-num-draft-tokens", "64"),
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--speculative-num-steps", "2", "--speculative-eagle-topk", "4",
              "--speculative-num-draft-tokens", "21"),
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_utils.py:100-111 (organize_draft_results)",
        "sglang 0.5.23: python/sglang/srt/speculative/spec_utils.py:417-470 (select_top_k_tokens)",
        "https://github.com/sgl-project/sglang/pull/24054",
        "catalogue: shared/design/sglang-spec-checks.md P19",
    ),
)
