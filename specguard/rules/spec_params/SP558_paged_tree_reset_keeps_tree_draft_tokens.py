"""SP558 paged-tree-reset-keeps-tree-draft-tokens."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.rules.spec_params.SP550_paged_tree_topk_reset_to_chain import (
    TOPK,
    draft_tokens_overflow_chain,
    reset_tree,
)

TOKENS = "--speculative-num-draft-tokens"
# What torch.topk raises when build_tree_kernel_efficient_preprocess asks for more candidates than the chain has
# (0.4.4.post4 speculative/build_eagle_tree.py:28):
#   RuntimeError: selected index k out of range


def check(ctx: CheckContext) -> Iterator[Finding]:
    reset = reset_tree(ctx)
    if reset is None or not draft_tokens_overflow_chain(ctx):
        return
    steps, topk, pages = reset
    tokens = ctx.spec.get("speculative_num_draft_tokens")
    yield RULE.finding(
        f"{ctx.flag(TOPK)} {topk} with {ctx.flag('--page-size')} {pages}: SGLang {ctx.version} resets the topk to 1 "
        f"at argument time but keeps {ctx.flag(TOKENS)} {tokens}, and a chain of {steps} steps has only {steps} "
        f"candidates for the {tokens - 1} the tree builder selects, so the first decode (the server's warmup request) "
        'raises "RuntimeError: selected index k out of range" in torch.topk. Set '
        f"{ctx.flag(TOPK)} 1 and {ctx.flag(TOKENS)} {steps + 1}, use {ctx.flag('--page-size')} 1 to keep the tree, or "
        "use SGLang 0.4.5.post3 or later, which sets the draft tokens itself",
        flags=(TOPK, TOKENS, "--page-size"),
        fix=set_flags(
            f"set {TOPK} 1 and {TOKENS} {steps + 1} (the chain SGLang runs)",
            Applicability.UNSAFE,
            speculative_eagle_topk=1,
            speculative_num_draft_tokens=steps + 1,
        ),
    )


RULE = Rule(
    check=check,
    code="SP558",
    category=Category.CRASH,
    name="paged-tree-reset-keeps-tree-draft-tokens",
    summary="0.4.4.post4-0.4.5.post2: a paged EAGLE tree reset to topk 1 keeps its draft tokens and the first decode fails",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 or NEXTN with a typed `--speculative-eagle-topk` above 1, `--speculative-num-steps` and a "
        "`--speculative-num-draft-tokens` above steps + 1, and a page size above 1, SGLang 0.4.4.post4 through "
        "0.4.5.post2.",
        why="`ServerArgs.__post_init__` sets the topk to 1 for a page size above 1 (0.4.4.post4 server_args.py:353-355; "
        "0.4.5.post2 :359-361) and leaves the draft tokens as typed. `draft_forward` then collects one score per step "
        "(speculative/eagle_worker.py:438-477 with select_top_k_tokens, eagle_utils.py:727-760), and "
        "`build_tree_kernel_efficient_preprocess` asks `torch.topk` for draft tokens - 1 of them "
        "(build_eagle_tree.py:22-28, from `EagleVerifyInput.create` at eagle_worker.py:412-422), which raises when "
        "that exceeds the steps, at the first decode. 0.4.5.post3 sets the draft tokens to steps + 1 after the reset "
        "(server_args.py:352-359); 0.4.4.post2 has no reset. SP550 covers the silent chain in the other cases.",
        fix="Set `--speculative-eagle-topk 1` and `--speculative-num-draft-tokens` steps + 1 (what 0.4.5.post3 runs), "
        "use `--page-size 1` to keep the tree, or upgrade.",
        fix_safety="Unsafe: it sets the number of verified tokens (to the chain SGLang would have run).",
    ),
    bad=Example(
        argv=(
            *LLAMA31_8B_EAGLE3,
            "--speculative-num-steps",
            "5",
            TOPK,
            "4",
            TOKENS,
            "8",
            "--page-size",
            "16",
        ),
        sglang_version="0.4.5.post2",
    ),
    good=Example(
        argv=(
            *LLAMA31_8B_EAGLE3,
            "--speculative-num-steps",
            "5",
            TOPK,
            "4",
            TOKENS,
            "8",
            "--page-size",
            "16",
        ),
        sglang_version="0.4.5.post3",
    ),
    sources=(
        "sglang 0.4.4.post2: python/sglang/srt/server_args.py:300-330 (no topk reset)",
        "sglang 0.4.4.post4: python/sglang/srt/server_args.py:353-355",
        "sglang 0.4.4.post4: python/sglang/srt/speculative/build_eagle_tree.py:15-28; eagle_worker.py:412-422,438-477",
        "sglang 0.4.5.post2: python/sglang/srt/server_args.py:359-361; speculative/build_eagle_tree.py:28",
        "sglang 0.4.5.post3: python/sglang/srt/server_args.py:352-359 (draft tokens set to steps + 1)",
    ),
    sglang_versions=">=0.4.4.post4,<0.4.5.post3",
    log_signatures=(r"selected index k out of range",),
)
