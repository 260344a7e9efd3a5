"""AB060 fa3-draft-backend-chain-only."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    effective_topk,
    page_size,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE, LLAMA31_8B_EAGLE_CHAIN
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import PAGE_SIZE_KEEPS_TOPK, PAGE_SIZE_RESETS_TOPK


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS:
        return
    item = ctx.spec.item("--attention-backend")
    topk = effective_topk(ctx)
    if item is None or item.values != ("fa3",) or topk is None or topk <= 1:
        return
    topk_reset = PAGE_SIZE_RESETS_TOPK.present_in(ctx.version) and not PAGE_SIZE_KEEPS_TOPK.present_in(ctx.version)
    if topk_reset and page_size(ctx) > 1:
        return  # SGLang sets topk 1 itself for a page size above 1
    steps = ctx.spec.get("speculative_num_steps") or ctx.resolution.num_steps or 3
    auto = "" if ctx.spec.get("speculative_eagle_topk") == topk else " (SGLang's automatic choice for this target)"
    yield RULE.finding(
        f"{ctx.flag('--attention-backend')} fa3 builds the draft on FlashAttentionMultiStepBackend, which in SGLang "
        f"{ctx.env.sglang_version} asserts that topk is 1 while it is {topk}{auto}: the draft "
        f"worker fails after the target weights load. Use {ctx.flag('--speculative-eagle-topk')} 1, another backend "
        f"(flashinfer, triton), or SGLang 0.4.5.post3+, where fa3 runs trees",
        flags=("--attention-backend", "--speculative-eagle-topk"),
        fix=set_flags(
            f"run a chain: topk 1, {steps} steps, {steps + 1} draft tokens",
            Applicability.UNSAFE,
            speculative_num_steps=steps,
            speculative_eagle_topk=1,
            speculative_num_draft_tokens=steps + 1,
        ),
    )


RULE = Rule(
    check=check,
    code="AB060",
    category=Category.START,
    name="fa3-draft-backend-chain-only",
    summary="fa3 with a tree draft (topk > 1) in SGLang 0.4.4.post4-0.4.5.post2, whose fa3 draft backend only ran topk 1",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--attention-backend fa3` with an EAGLE-family topk above 1 (typed or automatic) on 0.4.4.post4 through "
        "0.4.5.post2, unless a page size above 1 made SGLang reset the topk to 1.",
        why="With fa3 the EAGLE worker builds its draft backend as `FlashAttentionMultiStepBackend` (from "
        "0.4.4.post4, the release that added the fa3 branch, speculative/eagle_worker.py:189-198; 0.4.5.post1 "
        ":193-202). Up to 0.4.5 it passes the topk to each step's `FlashAttentionBackend`, which asserts `topk <= 1` "
        "('topk must be 1 (if spec decoding) or 0 (if no spec decoding) for FlashAttentionBackend', 0.4.4.post4 "
        "layers/attention/flashattention_backend.py:94-97, 690-705; 0.4.5 :296-299, 967-985); from 0.4.5.post1 its "
        "own constructor asserts "
        "`self.topk == 1` ('speculative_eagle_topk must be 1 for FlashAttentionMultiStepBackend', 0.4.5.post1 "
        "layers/attention/flashattention_backend.py:1101-1103; 0.4.5.post2 :1144-1146). Nothing checks it at "
        "argument time, so the launch fails at draft-worker start, after the target has loaded (issue 5491: "
        "QwQ-32B with topk 2). 0.4.5.post3 reworked the fa3 backend for topk > 1 (its "
        "`FlashAttentionBackend` reads the topk from the server args, flashattention_backend.py:323) and the "
        "assert is gone. 0.4.4.post4-0.4.8.post1 set the topk to 1 for a page size above 1 (0.4.4.post4 server_args.py:353-355; "
        "0.4.5.post1 :361), so those launches do not fail.",
        fix="Run a chain (topk 1, draft tokens = steps + 1), use flashinfer or triton, or upgrade to 0.4.5.post3+.",
        fix_safety="Unsafe: a chain drafts fewer candidates than the tree asked for.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE, "--speculative-num-steps", "3", "--speculative-eagle-topk", "2",
              "--speculative-num-draft-tokens", "8", "--attention-backend", "fa3"),
        gpu="H100",
        sglang_version="0.4.5.post1",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE_CHAIN, "--attention-backend", "fa3"),
        gpu="H100",
        sglang_version="0.4.5.post1",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/5491",
        "sglang 0.4.4.post2: python/sglang/srt/speculative/eagle_worker.py:147-188 (no fa3 draft: rule AB330)",
        "sglang 0.4.4.post4: python/sglang/srt/layers/attention/flashattention_backend.py:94-97, 690-705; python/sglang/srt/speculative/eagle_worker.py:189-198; python/sglang/srt/server_args.py:353-355",
        "sglang 0.4.5: python/sglang/srt/layers/attention/flashattention_backend.py:296-299, 967-985",
        "sglang 0.4.5.post1: python/sglang/srt/layers/attention/flashattention_backend.py:1101-1103; python/sglang/srt/speculative/eagle_worker.py:193-202",
        "sglang 0.4.5.post2: python/sglang/srt/layers/attention/flashattention_backend.py:1144-1146",
        "sglang 0.4.5.post3: python/sglang/srt/layers/attention/flashattention_backend.py:323",
    ),
    sglang_versions=">=0.4.4.post4,<0.4.5.post3",
    log_signatures=(
        r"topk must be 1 \(if spec decoding\) or 0 \(if no spec decoding\) for FlashAttentionBackend",
        r"speculative_eagle_topk must be 1 for FlashAttentionMultiStepBackend",
    ),
    dialects=SGLANG_DIALECTS,
)
