"""AB392 fa3-swa-tree-verify-paged-assert."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    effective_topk,
    page_size,
    page_tree_backends,
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


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None:
        return
    if ctx.target.architecture not in SWA_METHOD_ARCHITECTURES:
        return
    topk, pages = effective_topk(ctx), page_size(ctx)
    if topk is None or topk <= 1 or pages <= 1:
        return
    allowed = page_tree_backends(ctx)
    if allowed is not None and "fa3" not in allowed:
        return  # 0.5.2rc0-0.5.5.post3 refuse fa3 for a tree over pages at argument time (AB002)
    backend, flag = verify_backend(ctx)
    if backend != "fa3":
        return
    how = (
        f"{ctx.flag(flag)} fa3"
        if flag
        else f"SGLang's default for {ctx.target.architecture} here (fa3)"
    )
    auto = topk_origin(ctx, topk)
    yield RULE.finding(
        f"{how} verifies a tree (topk {topk}{auto}) on {ctx.target.architecture}, whose sliding-window layers "
        f"make fa3 build per-token window metadata, with page size {pages}: SGLang {ctx.env.sglang_version} "
        "asserts \"FlashAttention backend doesn't support topk > 1 speculative decoding with page size > 1 "
        'sliding window attention" at the first target verify (the warm-up request). '
        f"Use {ctx.flag('--page-size')} 1, or a chain ({ctx.flag('--speculative-eagle-topk')} 1)",
        flags=tuple(f for f in (flag, "--page-size", "--speculative-eagle-topk") if f),
        fix=set_flags("use page size 1", Applicability.UNSAFE, page_size=1),
    )


GEMMA3_TREE = (
    "--model-path",
    "google/gemma-3-27b-it",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "d",
    "--speculative-num-steps",
    "5",
    "--speculative-eagle-topk",
    "4",
    "--speculative-num-draft-tokens",
    "16",
    "--attention-backend",
    "fa3",
)
GEMMA3 = {"architectures": ("Gemma3ForConditionalGeneration",)}

RULE = Rule(
    check=check,
    code="AB392",
    category=Category.CRASH,
    name="fa3-swa-tree-verify-paged-assert",
    summary="fa3 verifying a tree (topk > 1) over pages on a sliding-window target (Gemma 2/3/3n, gpt-oss) "
    "asserts at the first verify",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE with a topk above 1 (typed or automatic) and a page size above 1 "
        "on a target whose model defines get_attention_sliding_window_size (Gemma 2, Gemma 3, Gemma 3n, gpt-oss), "
        "where fa3 runs target verify (the prefill backend, or the decode backend with `--speculative-attention-mode "
        "decode`, else `--attention-backend`, else SGLang's default: fa3 for gpt-oss on Hopper), in 0.5.1.post3 and "
        "from 0.5.6; 0.5.2rc0-0.5.5.post3 refuse fa3 for a tree over pages at argument time (AB002).",
        why="0.5.1.post3 gave fa3 per-token sliding-window metadata for tree verify: when the model runner's "
        "sliding_window_size is set (has_swa, layers/attention/flashattention_backend.py:351-353, read from the "
        "model's get_attention_sliding_window_size), the topk > 1 target-verify metadata calls "
        '`_init_sliding_window_attn_spec_metadata`, which asserts `self.page_size == 1` with "FlashAttention '
        "backend doesn't support topk > 1 speculative decoding with page size > 1 sliding window attention\" "
        "(0.5.1.post3 :2123-2132; 0.5.1.post2 has no such function). Nothing checks it at argument time, so the "
        "first verify fails, eager or on graph replay (0.5.6 :575-584, :2011-2015, :2252-2261; the capture does "
        "not call it). From 0.5.2rc0 the argument check lets a tree over pages run only on flashinfer "
        "(rule AB002), and 0.5.6 adds fa3 to it (server_args.py:1752-1759), so the assert is reached again; it is "
        "unchanged up to 0.5.23 (flashattention_backend.py:253-255, 1176-1179, 3275-3279, 3410-3418).",
        fix="Use page size 1 (fa3 builds the sliding-window verify metadata only for it), or a chain (topk 1).",
        fix_safety="Unsafe: the KV cache's page size changes.",
    ),
    bad=Example(
        argv=(*GEMMA3_TREE, "--page-size", "16"),
        target=GEMMA3,
        gpu="H100",
        sglang_version="0.5.6",
    ),
    good=Example(
        argv=(*GEMMA3_TREE, "--page-size", "1"),
        target=GEMMA3,
        gpu="H100",
        sglang_version="0.5.6",
    ),
    sources=(
        "sglang 0.5.1.post2: python/sglang/srt/layers/attention/flashattention_backend.py:686-689 (cascade verify, no page-size assert)",
        "sglang 0.5.1.post3: python/sglang/srt/layers/attention/flashattention_backend.py:351-353, 2123-2132; python/sglang/srt/server_args.py:2231-2238",
        "sglang 0.5.5.post3: python/sglang/srt/server_args.py:1623-1630 (flashinfer only: rule AB002)",
        "sglang 0.5.6: python/sglang/srt/layers/attention/flashattention_backend.py:355-357, 575-584, 2011-2015, 2252-2261; python/sglang/srt/server_args.py:1062-1071, 1752-1759; python/sglang/srt/layers/attention/hybrid_attn_backend.py:42-51",
        "sglang 0.5.23: python/sglang/srt/layers/attention/flashattention_backend.py:253-255, 1176-1179, 3275-3279, 3410-3418; python/sglang/srt/arg_groups/model_overrides/gpt_oss.py:28-33",
    ),
    sglang_versions=">=0.5.1.post3",
    log_signatures=(
        r"FlashAttention backend doesn't support topk > 1 speculative decoding with page size > 1 sliding window attention",
    ),
)
