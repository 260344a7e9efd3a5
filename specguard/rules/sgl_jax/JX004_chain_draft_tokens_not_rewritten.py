"""JX004 chain-draft-tokens-not-rewritten."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Dialect, Finding, Severity
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
    steps, topk, draft = params(ctx)
    if topk != 1 or draft == steps + 1:
        return
    given = "" if ctx.spec.get("speculative_num_draft_tokens") is not None else " (sgl-jax's default)"
    yield RULE.finding(
        f"topk 1 with {steps} steps makes a chain of {steps + 1} tokens, but "
        f"{ctx.flag('--speculative-num-draft-tokens')} is {draft}{given}: SGLang would rewrite it to "
        f"{steps + 1}, sgl-jax does not (and keeps the overlap scheduler off for it). Set {steps + 1}",
        flags=("--speculative-num-draft-tokens",),
        fix=set_flags(f"set --speculative-num-draft-tokens {steps + 1}", Applicability.SAFE,
                      speculative_num_draft_tokens=steps + 1),
    )


RULE = Rule(
    check=check,
    code="JX004",
    category=Category.START,
    name="chain-draft-tokens-not-rewritten",
    summary="sgl-jax: topk 1 with draft tokens other than steps + 1",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="sgl-jax EAGLE-family launches whose topk (default 5) is 1 and whose draft token count "
        "(default 4) is not steps (default 4) + 1.",
        why="With topk 1 the draft is a chain of steps + 1 tokens (the verified token plus one per "
        "step). SGLang silently rewrites any other count (catalogue P17); sgl-jax has no such rewrite "
        "(design/dialects.md §2), so its verify runs with a token budget that does not match the "
        "chain, and its overlap scheduler check treats the configuration as unsupported (JX002). "
        "Note sgl-jax's own defaults (steps 4, draft tokens 4) already mismatch once topk is 1.",
        fix="Set `--speculative-num-draft-tokens` to steps + 1, what SGLang would run.",
        fix_safety="Safe: it is the only draft token count a topk-1 chain can fill; SGLang runs exactly this.",
    ),
    bad=jax_example("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "8",
                    "--disable-overlap-schedule"),
    good=jax_example("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4",
                     "--disable-overlap-schedule"),
    sources=(
        "seed: sgl-jax-speculative-decoding.md (Quick start: --speculative-eagle-topk 1 --speculative-num-steps 3 --speculative-num-draft-tokens 4)",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/server_args.py (no topk==1 adjustment)",
        "design: shared/design/dialects.md §2 and §5.3",
        "catalogue: shared/design/sglang-spec-checks.md P17 (SGLang's rewrite)",
    ),
    dialects=(Dialect.SGL_JAX,),
)
