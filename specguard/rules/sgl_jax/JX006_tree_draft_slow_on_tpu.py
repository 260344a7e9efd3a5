"""JX006 tree-draft-slow-on-tpu."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Dialect, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.sgl_jax._jax import jax_example, params, raw_algorithm
from specguard.sglang_facts.algorithms import EAGLE_WORKER_SPELLINGS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if raw_algorithm(ctx) not in EAGLE_WORKER_SPELLINGS:
        return
    steps, topk, _ = params(ctx)
    if topk <= 1:
        return
    given = "" if ctx.spec.get("speculative_eagle_topk") is not None else " (sgl-jax's default)"
    yield RULE.finding(
        f"topk {topk}{given} builds a draft tree, which sgl-jax marks 'FIXME: topk > 1 has poor performance "
        "now', and its non-greedy verify kernels are incomplete; the validated TPU configuration is topk 1 "
        f"with {ctx.flag('--speculative-num-draft-tokens')} = steps + 1",
        flags=("--speculative-eagle-topk",),
        fix=set_flags(f"use a chain: topk 1, {steps + 1} draft tokens", Applicability.UNSAFE,
                      speculative_eagle_topk=1, speculative_num_draft_tokens=steps + 1),
    )


RULE = Rule(
    check=check,
    code="JX006",
    name="tree-draft-slow-on-tpu",
    summary="sgl-jax: topk above 1 (a draft tree), which sgl-jax runs slowly",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="sgl-jax EAGLE-family launches whose topk (typed, or sgl-jax's default 5) is above 1.",
        why="sgl-jax's speculative test carries `FIXME(pc) topk > 1 has poor performance now`, its "
        "docs list non-greedy verify kernels as a known gap, and the only validated configuration "
        "(Qwen3-32B + AngelSlim EAGLE3 on TPU) is topk 1, steps 3, draft tokens 4. sgl-jax's own "
        "default topk is 5, so leaving it unset builds a tree.",
        fix="Use topk 1 with draft tokens = steps + 1.",
        fix_safety="Unsafe: the draft tree changes shape (acceptance per step changes).",
    ),
    bad=jax_example("--speculative-num-steps", "3", "--disable-overlap-schedule"),
    good=jax_example("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4",
                     "--disable-overlap-schedule"),
    sources=(
        "seed: sgl-jax-speculative-decoding.md (TODO: performance, non-greedy sample kernel)",
        "sglang-jax HEAD cddbf6f1: test/srt/test_speculative_decoding.py (FIXME(pc) topk > 1 has poor performance now)",
        "design: shared/design/dialects.md §2",
    ),
    dialects=(Dialect.SGL_JAX,),
)
