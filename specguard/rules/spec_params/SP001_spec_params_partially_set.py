"""SP001 spec-params-partially-set."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE, LLAMA31_8B_EAGLE_CHAIN
from specguard.rules.spec_params._shared import tree_capacity
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

# The (steps, topk, draft tokens) row SGLang auto-chooses for most targets (P14).
DEFAULT_STEPS = 3
# For a tree (topk > 1) with no draft-token budget: the ratio of SGLang's Llama row (5, 4, 8).
TREE_TOKENS_PER_TOPK = 2


def adaptive_fills_in(ctx: CheckContext) -> bool:
    """Adaptive speculation, when SGLang runs it, fills in topk, steps and tokens (P55)."""
    return ctx.resolution.adaptive is True


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or adaptive_fills_in(ctx):
        return
    steps = ctx.spec.get("speculative_num_steps")
    topk = ctx.spec.get("speculative_eagle_topk")
    tokens = ctx.spec.get("speculative_num_draft_tokens")
    steps_flag, topk_flag, tokens_flag = (
        ctx.flag("--speculative-num-steps"),
        ctx.flag("--speculative-eagle-topk"),
        ctx.flag("--speculative-num-draft-tokens"),
    )
    if steps is None and (topk is not None or tokens is not None):
        given = " and ".join(f for f, v in ((topk_flag, topk), (tokens_flag, tokens)) if v is not None)
        if topk is None or topk <= 1:  # topk 0 or negative: a tree offers nothing, so a chain
            new_steps = max(1, tokens - 1) if tokens is not None else DEFAULT_STEPS
            fix = set_flags(
                f"set {steps_flag} {new_steps}, {topk_flag} 1, {tokens_flag} {new_steps + 1} (a chain)",
                Applicability.UNSAFE,
                speculative_num_steps=new_steps,
                speculative_eagle_topk=1,
                speculative_num_draft_tokens=new_steps + 1,
            )
        else:
            new_tokens = max(tokens, 2) if tokens is not None else TREE_TOKENS_PER_TOPK * topk
            new_steps = DEFAULT_STEPS
            while tree_capacity(new_steps, topk) < new_tokens - 1:
                new_steps += 1
            fix = set_flags(
                f"set {steps_flag} {new_steps} (and {tokens_flag} {new_tokens})",
                Applicability.UNSAFE,
                speculative_num_steps=new_steps,
                speculative_num_draft_tokens=new_tokens,
            )
        yield RULE.finding(
            f"{given} without {steps_flag}: SGLang fails argument resolution with a bare AssertionError "
            f"(no message). Set all three of {steps_flag}, {topk_flag} and {tokens_flag}, or none of them "
            "so that SGLang chooses them",
            flags=("--speculative-num-steps", "--speculative-eagle-topk", "--speculative-num-draft-tokens"),
            fix=fix,
        )
        return
    if steps is not None and topk is None:
        # Steps below 1 are raised to 1 here too, so this fix and SP005's agree on every flag.
        chain_steps = max(steps, 1)
        values = {"speculative_eagle_topk": 1, "speculative_num_draft_tokens": chain_steps + 1}
        if chain_steps != steps:
            values["speculative_num_steps"] = chain_steps
        yield RULE.finding(
            f"{steps_flag} {steps} without {topk_flag}: SGLang crashes during argument resolution with "
            "\"TypeError: '>' not supported between instances of 'NoneType' and 'int'\". "
            f"Set {topk_flag} (1 for a chain, then {tokens_flag} {chain_steps + 1})",
            flags=("--speculative-num-steps", "--speculative-eagle-topk"),
            fix=set_flags(
                f"set {topk_flag} 1 and {tokens_flag} {chain_steps + 1}", Applicability.UNSAFE, **values
            ),
        )
        return
    if steps is not None and topk is not None and topk > 1 and tokens is None and steps >= 1:
        new_tokens = min(tree_capacity(steps, topk) + 1, TREE_TOKENS_PER_TOPK * topk)
        yield RULE.finding(
            f"{topk_flag} {topk} without {tokens_flag}: SGLang accepts it and resolves the draft-token "
            f"budget to None, so verification has no tree size to work with. Set {tokens_flag} "
            f"(at most {tree_capacity(steps, topk) + 1} for {steps} steps of topk {topk})",
            flags=("--speculative-num-draft-tokens",),
            fix=set_flags(
                f"set {tokens_flag} {new_tokens}", Applicability.UNSAFE, speculative_num_draft_tokens=new_tokens
            ),
            severity=Severity.WARNING,
        )


RULE = Rule(
    check=check,
    code="SP001",
    category=Category.START,
    name="spec-params-partially-set",
    summary="Only some of --speculative-num-steps / -eagle-topk / -num-draft-tokens are set",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="For EAGLE, EAGLE3, NEXTN and STANDALONE, checks that the three tree parameters are set "
        "together or not at all. NGRAM and DFLASH derive their own values and are not checked here.",
        why="SGLang only auto-chooses (steps, topk, draft tokens) when `--speculative-num-steps` is unset "
        "and the other two are too. topk or draft tokens without steps fails a bare `assert` with an "
        "empty message (catalogue P15, speculative_hook.py:1160-1163); steps without topk crashes with a "
        "TypeError at speculative_hook.py:1274 (P16); topk > 1 without draft tokens is accepted with "
        "draft tokens None (P18).",
        fix="Fill in the missing values: topk 1 and draft tokens steps + 1 (a chain), or for a tree the "
        "steps needed to offer the draft tokens. Alternatively drop the partial values and let SGLang "
        "choose.",
        fix_safety="Unsafe: the values specguard picks change the draft tree SGLang runs.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE, "--speculative-num-steps", "3"),
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE_CHAIN,
    ),
    sources=(
        "seed: sglang-speculative-decoding.md (Full Parameter Reference, Core parameters)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1159-1174 (auto-choose, P14/P15)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1274 (P16)",
        "catalogue: shared/design/sglang-spec-checks.md P15, P16, P18",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/server_args.py:205-206 (fixed defaults steps 4, topk 5, draft tokens 4: nothing to crash on)",
    ),
    # sgl-jax has no automatic choice: an unset parameter takes its fixed default (JX002/JX004/JX006 judge those).
    dialects=SGLANG_DIALECTS,
)
