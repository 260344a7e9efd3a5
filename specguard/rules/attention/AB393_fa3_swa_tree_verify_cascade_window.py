"""AB393 fa3-swa-tree-verify-cascade-window."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    effective_topk,
    page_size,
    topk_origin,
    verify_backend,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.architectures import SWA_METHOD_ARCHITECTURES
from specguard.sglang_facts.changes import PAGE_SIZE_KEEPS_TOPK, PAGE_SIZE_RESETS_TOPK


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None:
        return
    if ctx.target.architecture not in SWA_METHOD_ARCHITECTURES:
        return
    topk = effective_topk(ctx)
    if topk is None or topk <= 1:
        return
    topk_reset = PAGE_SIZE_RESETS_TOPK.present_in(
        ctx.version
    ) and not PAGE_SIZE_KEEPS_TOPK.present_in(ctx.version)
    if topk_reset and page_size(ctx) > 1:
        return  # SGLang sets topk 1 itself for a page size above 1
    backend, flag = verify_backend(ctx)
    if backend != "fa3":
        return
    how = (
        f"{ctx.flag(flag)} fa3"
        if flag
        else f"SGLang's default for {ctx.target.architecture} here (fa3)"
    )
    auto = topk_origin(ctx, topk)
    steps = ctx.spec.get("speculative_num_steps") or ctx.resolution.num_steps or 3
    yield RULE.finding(
        f"{how} verifies a tree (topk {topk}{auto}) on {ctx.target.architecture}'s sliding-window layers with "
        f"cascade attention in SGLang {ctx.env.sglang_version}: the prefix pass runs non-causal with the window "
        "anchored at the end of the prefix for all draft tokens together, so on those layers a draft token "
        "attends to the wrong span of the prefix (the most recent tokens dropped for all but the last), and the "
        "verified tokens come from wrong logits. Use a chain "
        f"({ctx.flag('--speculative-eagle-topk')} 1) or SGLang 0.5.1.post3 or later",
        flags=tuple(f for f in (flag, "--speculative-eagle-topk") if f),
        fix=set_flags(
            f"run a chain: topk 1, {steps} steps, {steps + 1} draft tokens",
            Applicability.UNSAFE,
            speculative_num_steps=steps,
            speculative_eagle_topk=1,
            speculative_num_draft_tokens=steps + 1,
        ),
    )


GEMMA3_EAGLE3 = (
    "--model-path",
    "google/gemma-3-27b-it",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "d",
    "--speculative-num-steps",
    "5",
    "--attention-backend",
    "fa3",
)
GEMMA3 = {"architectures": ("Gemma3ForConditionalGeneration",)}

RULE = Rule(
    check=check,
    code="AB393",
    category=Category.WRONG_OUTPUT,
    name="fa3-swa-tree-verify-cascade-window",
    summary="fa3 verifying a tree (topk > 1) on a sliding-window target (Gemma 2/3/3n, gpt-oss) before 0.5.1.post3 "
    "applies the window to the wrong span of the prefix",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE with a topk above 1 (typed or automatic) on a target whose model "
        "defines get_attention_sliding_window_size (Gemma 2, Gemma 3, Gemma 3n, gpt-oss) where fa3 runs target "
        "verify (the prefill backend, else `--attention-backend`, else SGLang's default: fa3 for gpt-oss on Hopper), "
        "in 0.4.5.post3-0.5.1.post2, unless a page size above 1 made SGLang reset the topk to 1 (up to 0.4.8.post1).",
        why="0.4.5.post3 made fa3 verify trees with cascade attention: the prefix pass gives each request its "
        "num_draft_tokens queries against the prefix (cache_seqlens = seq_lens, "
        "layers/attention/flashattention_backend.py:432-465), then an expand pass over the tree, merged by "
        "log-sum-exp (:676-678, 715-756). Both passes run `causal=False` with `window_size=(sliding_window_size, "
        "0)` on sliding-window layers (:653-657). FA3 anchors a local window bottom-right, query i seeing keys up "
        "to i + seqlen_k - seqlen_q, so in the prefix pass every draft token but the last loses the most recent "
        "prefix tokens and its window starts num_draft_tokens too early: the verify logits of those layers are "
        "wrong. 0.5.1.post2 is the same (:660-664, 686-689, 728-768). 0.5.1.post3 leaves sliding-window layers out "
        "of the cascade (`use_cascade_attn ... and not is_swa`, :707-711), saying why: 'Different window sizes "
        "should be passed in for each q in the first stage of cascade attention, but FA3 interface doesn't support "
        "pass in a list of window sizes' (:705) and gives them per-token metadata "
        "(swa_spec_metadata, :725-731, `_init_sliding_window_attn_spec_metadata` :2123). Before 0.4.5.post3 fa3 "
        "refused topk > 1 (rule AB060). 0.4.4.post4-0.4.8.post1 set topk 1 for a page size above 1 "
        "(0.4.5.post3 server_args.py:346-350).",
        fix="Draft a chain (topk 1, draft tokens = steps + 1), or upgrade to 0.5.1.post3.",
        fix_safety="Unsafe: a chain drafts fewer candidates than the tree asked for.",
    ),
    bad=Example(
        argv=(
            *GEMMA3_EAGLE3,
            "--speculative-eagle-topk",
            "4",
            "--speculative-num-draft-tokens",
            "16",
        ),
        target=GEMMA3,
        gpu="H100",
        sglang_version="0.5.1.post2",
    ),
    good=Example(
        argv=(
            *GEMMA3_EAGLE3,
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "6",
        ),
        target=GEMMA3,
        gpu="H100",
        sglang_version="0.5.1.post2",
    ),
    sources=(
        "sglang 0.4.5.post2: python/sglang/srt/layers/attention/flashattention_backend.py:1144-1146 (topk must be 1: rule AB060)",
        "sglang 0.4.5.post3: python/sglang/srt/layers/attention/flashattention_backend.py:432-465, 653-657, 676-678, 715-756",
        "sglang 0.5.1.post2: python/sglang/srt/layers/attention/flashattention_backend.py:660-664, 686-689, 728-768",
        "sglang 0.4.5.post3: python/sglang/srt/server_args.py:346-350 (topk reset for a page size above 1)",
        "sglang 0.5.1.post3: python/sglang/srt/layers/attention/flashattention_backend.py:678-681, 702-711, 725-731, 2123",
    ),
    sglang_versions=">=0.4.5.post3,<0.5.1.post3",
)
