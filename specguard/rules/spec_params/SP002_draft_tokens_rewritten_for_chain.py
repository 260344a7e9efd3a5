"""SP002 draft-tokens-rewritten-for-chain."""

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
from specguard.rules.examples import LLAMA31_8B
from specguard.rules.spec_params.SP001_spec_params_partially_set import (
    adaptive_fills_in,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or adaptive_fills_in(ctx):
        return
    steps = ctx.spec.get("speculative_num_steps")
    topk = ctx.spec.get("speculative_eagle_topk")
    tokens = ctx.spec.get("speculative_num_draft_tokens")
    if topk != 1 or steps is None or tokens is None or steps < 1 or tokens == steps + 1:
        return
    tokens_flag = ctx.flag("--speculative-num-draft-tokens")
    yield RULE.finding(
        f"{ctx.flag('--speculative-eagle-topk')} is 1, so SGLang rewrites {tokens_flag} {tokens} to "
        f"{steps + 1} (steps + 1) with only a log warning: a chain of {steps} steps verifies "
        f"{steps + 1} tokens. Write {tokens_flag} {steps + 1}, or raise the topk for a tree",
        flags=("--speculative-num-draft-tokens",),
        fix=set_flags(
            f"set {tokens_flag} {steps + 1}, what SGLang runs", Applicability.SAFE, speculative_num_draft_tokens=steps + 1
        ),
    )


RULE = Rule(
    check=check,
    code="SP002",
    category=Category.HYGIENE,
    name="draft-tokens-rewritten-for-chain",
    summary="topk 1 with --speculative-num-draft-tokens other than steps + 1 (SGLang rewrites it)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="With `--speculative-eagle-topk 1` the draft is a chain, and SGLang sets the draft tokens to "
        "steps + 1 whatever was written.",
        why="The rewrite is logged as a warning only (catalogue P17, speculative_hook.py:1255-1266), so "
        "the configuration that runs differs from the one written, and a benchmark of "
        "`--speculative-num-draft-tokens 16` with topk 1 measures 4. sgl-jax does not rewrite it; its "
        "own rule covers that dialect.",
        fix="Write steps + 1.",
        fix_safety="Safe: it is the value SGLang runs anyway.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "NEXTN",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "16"),
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "NEXTN",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
    ),
    sources=(
        "seed: sglang-speculative-decoding.md (Full Parameter Reference)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1255-1266",
        "catalogue: shared/design/sglang-spec-checks.md P17",
    ),
    dialects=(Dialect.SGLANG, Dialect.SLIME),
)
