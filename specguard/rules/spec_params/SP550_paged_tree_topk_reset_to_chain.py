"""SP550 paged-tree-topk-reset-to-chain."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, page_size
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS
from specguard.sglang_facts.changes import Change

# What SGLang logs when it drops the tree (0.4.4.post4 server_args.py:355, logger.info):
#   "speculative_eagle_topk is changed to 1 when page_size > 1"
# and from 0.4.5.post3 (0.4.8.post1 server_args.py:491, logger.warning):
#   "speculative_eagle_topk is adjusted to 1 when page_size > 1"
TOPK = "--speculative-eagle-topk"
# From this release the topk-1 step after the reset also sets the draft tokens to steps + 1; before it a typed
# draft-token count stayed as it was (SP558).
CHAIN_DRAFT_TOKENS_SET = Change(
    "0.4.5.post3",
    "0.4.5.post3 server_args.py:352-359 sets speculative_num_draft_tokens = steps + 1 when topk == 1 (0.4.5.post2 :359-361 resets the topk only)",
)


def reset_tree(ctx: CheckContext) -> tuple[int, int, int] | None:
    """(steps, typed topk, page size) when SGLang resets a typed tree to topk 1 for a paged KV cache; None otherwise."""
    # ServerArgs.__post_init__ runs this branch for EAGLE and EAGLE3 only, after NEXTN became EAGLE.
    if ctx.algorithm not in EAGLE_HEAD_ALGORITHMS:
        return None
    steps, topk, pages = (
        ctx.spec.get("speculative_num_steps"),
        ctx.spec.get("speculative_eagle_topk"),
        page_size(ctx),
    )
    # Without --speculative-num-steps the automatic choice's assert or a None comparison fails first (SP001), or
    # with none of the three typed the automatic choice fails before 0.4.6 (SP264). SGLang resets an automatic
    # tree too, but that tree was never asked for, so only a typed one counts as lost.
    if steps is None or topk is None or topk <= 1 or pages <= 1:
        return None
    return steps, topk, pages


def draft_tokens_overflow_chain(ctx: CheckContext) -> bool:
    """Before CHAIN_DRAFT_TOKENS_SET the reset chain keeps a typed draft-token count above steps + 1 (SP558)."""
    reset, tokens = reset_tree(ctx), ctx.spec.get("speculative_num_draft_tokens")
    return (
        reset is not None
        and not CHAIN_DRAFT_TOKENS_SET.present_in(ctx.version)
        and tokens is not None
        and tokens > reset[0] + 1
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    reset = reset_tree(ctx)
    if reset is None or draft_tokens_overflow_chain(ctx):
        return  # SP558 reports the crash that follows
    steps, topk, pages = reset
    yield RULE.finding(
        f"{ctx.flag(TOPK)} {topk} with {ctx.flag('--page-size')} {pages}: SGLang {ctx.version} sets the topk to 1 "
        "at argument time with only a log line, so the "
        f"draft runs a chain of {steps} steps, not the tree you asked for, and accepts "
        f"fewer tokens per step. Set {ctx.flag(TOPK)} 1 to say what runs, use {ctx.flag('--page-size')} 1 to keep the "
        "tree, or use SGLang 0.4.9 or later, which keeps the topk",
        flags=(TOPK, "--page-size"),
        fix=set_flags(
            f"set {TOPK} 1 (what SGLang runs)",
            Applicability.SAFE,
            speculative_eagle_topk=1,
        ),
    )


RULE = Rule(
    check=check,
    code="SP550",
    category=Category.PERF,
    name="paged-tree-topk-reset-to-chain",
    summary="0.4.4.post4-0.4.8.post1: a typed EAGLE topk > 1 with --page-size > 1 is silently reset to a chain",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 or NEXTN with `--speculative-eagle-topk` above 1 (and `--speculative-num-steps` typed) "
        "and a page size above 1, SGLang 0.4.4.post4 through 0.4.8.post1.",
        why="After the automatic choice, `ServerArgs.__post_init__` sets `speculative_eagle_topk = 1` whenever "
        "`page_size > 1` and logs it (0.4.4.post4 server_args.py:353-355, logger.info; 0.4.8.post1 :488-492, "
        "logger.warning); from 0.4.5.post3 the following topk-1 step also sets the draft tokens to steps + 1 "
        "(0.4.8.post1 :494-501). The typed tree is dropped without an error: each step proposes one token instead "
        "of a tree, so fewer tokens are accepted. 0.4.4.post2 has no reset (server_args.py:300-330) and 0.4.9 "
        "removes it, keeping only the draft-token step (server_args.py:496-510). The reset also applies to "
        "the automatic topk (which only works from 0.4.6, SP264); this rule stays quiet there, since the launch "
        "asked for no tree.",
        fix="Set `--speculative-eagle-topk 1` (what SGLang runs), use `--page-size 1` to keep the tree, or "
        "upgrade to 0.4.9.",
        fix_safety="Safe: SGLang runs topk 1 on this launch anyway (and sets the draft tokens itself).",
    ),
    bad=Example(
        argv=(
            *LLAMA31_8B_EAGLE3,
            "--speculative-num-steps",
            "5",
            TOPK,
            "4",
            "--speculative-num-draft-tokens",
            "8",
            "--page-size",
            "16",
        ),
        sglang_version="0.4.8.post1",
    ),
    good=Example(
        argv=(
            *LLAMA31_8B_EAGLE3,
            "--speculative-num-steps",
            "5",
            TOPK,
            "4",
            "--speculative-num-draft-tokens",
            "8",
            "--page-size",
            "1",
        ),
        sglang_version="0.4.8.post1",
    ),
    sources=(
        "sglang 0.4.4.post2: python/sglang/srt/server_args.py:300-330 (no topk reset)",
        "sglang 0.4.4.post4: python/sglang/srt/server_args.py:341-355",
        "sglang 0.4.8.post1: python/sglang/srt/server_args.py:476-501",
        "sglang 0.4.9: python/sglang/srt/server_args.py:491-510 (reset removed)",
    ),
    sglang_versions=">=0.4.4.post4,<0.4.9",
    log_signatures=(
        r"speculative_eagle_topk is (changed|adjusted) to 1 when page_size > 1",
    ),
)
