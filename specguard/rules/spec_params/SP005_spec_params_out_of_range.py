"""SP005 spec-params-out-of-range."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, set_flags
from specguard.rules.examples import LLAMA31_8B_EAGLE
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS:
        return
    steps = ctx.spec.get("speculative_num_steps")
    topk = ctx.spec.get("speculative_eagle_topk")
    tokens = ctx.spec.get("speculative_num_draft_tokens")
    if topk == 1 and steps is not None and steps >= 1:
        # A chain: SGLang rewrites the draft tokens to steps + 1 whatever was typed (SP002 says so),
        # so a typed 1 runs as 2 (sglang 0.5.13 arg_groups/speculative_hook.py:363-371).
        tokens = None
    bad = [
        (ctx.flag(flag), value, minimum)
        for flag, value, minimum in (
            ("--speculative-num-steps", steps, 1),
            ("--speculative-eagle-topk", topk, 1),
            ("--speculative-num-draft-tokens", tokens, 2),
        )
        if value is not None and value < minimum
    ]
    if not bad:
        return
    new_steps = max(steps, 1) if steps is not None else None
    new_topk = max(topk, 1) if topk is not None else None
    values: dict[str, int] = {}
    if new_steps is not None:
        values["speculative_num_steps"] = new_steps
    if new_topk is not None:
        values["speculative_eagle_topk"] = new_topk
    if tokens is not None:
        values["speculative_num_draft_tokens"] = (
            # topk unset: SP001 completes it as a chain, with the same steps + 1.
            new_steps + 1 if new_topk in (1, None) and new_steps is not None else max(tokens, 2)
        )
    described = ", ".join(f"{flag} {value} (minimum {minimum})" for flag, value, minimum in bad)
    yield RULE.finding(
        f"{described}: SGLang accepts these at argument time and the draft or verify stage breaks once "
        "requests arrive. Use at least 1 step, topk 1 and 2 draft tokens",
        flags=("--speculative-num-steps", "--speculative-eagle-topk", "--speculative-num-draft-tokens"),
        fix=set_flags("raise them to the smallest working values", Applicability.UNSAFE, **values),
    )


RULE = Rule(
    check=check,
    code="SP005",
    category=Category.START,
    name="spec-params-out-of-range",
    summary="--speculative-num-steps < 1, --speculative-eagle-topk < 1 or --speculative-num-draft-tokens < 2",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Range-checks the three tree parameters of the EAGLE worker family.",
        why="SGLang has no range checks on them (catalogue P19: steps 0 and topk -2 are accepted). A "
        "draft of zero steps or a topk below 1 cannot build a tree, and fewer than 2 draft tokens "
        "verifies nothing; the failure only shows after the weights load. With topk 1 and at least one "
        "step the draft tokens are not checked: SGLang rewrites them to steps + 1 (SP002), as the "
        "1/1/1 launch of sglang#28312 shows.",
        fix="Raise each to its minimum (steps 1, topk 1, draft tokens 2; with topk 1, steps + 1).",
        fix_safety="Unsafe: it changes the draft tree.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE, "--speculative-num-steps", "0", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "1"),
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE, "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "2"),
    ),
    sources=(
        "seed: sglang-speculative-decoding.md (Full Parameter Reference)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1159-1282 (no range checks)",
        "catalogue: shared/design/sglang-spec-checks.md P19",
        "sglang 0.5.13: python/sglang/srt/arg_groups/speculative_hook.py:363-371 (topk 1: draft tokens = steps + 1)",
    ),
)
