"""AB391 fa3-paged-tree-draft-short-page-table."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    attention_backend,
    effective_topk,
    page_size,
    topk_origin,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

DECODE = "--decode-attention-backend"
ATTENTION = "--attention-backend"
# A branch's KV is the duplicated last partial page (up to page_size - 1 tokens) plus decode_length
# draft tokens, decode_length <= steps - 1; it spills onto a second page only when steps - 1 >= 2.
MIN_STEPS_TO_CROSS_A_PAGE = 3


def _draft_decode_backend(ctx: CheckContext) -> tuple[str | None, str | None]:
    """(backend, flag) of the multi-step draft decode: the decode backend, else --attention-backend, else
    SGLang's default (0.5.6 speculative/draft_utils.py:22-31, 34-58)."""
    decode = ctx.spec.last_value(DECODE)
    if decode is not None:
        return decode, DECODE
    backend, given = attention_backend(ctx)
    return backend, ATTENTION if given else None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.spec.env_flag(
        "SGLANG_ENABLE_SPEC_V2"
    ):
        return
    topk, pages = effective_topk(ctx), page_size(ctx)
    steps = ctx.spec.get("speculative_num_steps") or ctx.resolution.num_steps
    if (
        topk is None
        or topk <= 1
        or pages <= 1
        or steps is None
        or steps < MIN_STEPS_TO_CROSS_A_PAGE
    ):
        return
    backend, flag = _draft_decode_backend(ctx)
    if backend != "fa3":
        return
    how = f"{ctx.flag(flag)} fa3" if flag else "SGLang's default backend here (fa3)"
    auto = topk_origin(ctx, topk)
    yield RULE.finding(
        f"{how} drafts a tree (topk {topk}{auto}) over pages of {pages} with {steps} steps: SGLang "
        f"{ctx.env.sglang_version}'s fa3 draft decode gives each branch ceil(decode_length / page_size) pages "
        "while its length is the duplicated last partial page plus decode_length, so a draft step whose branch "
        "spills onto a second page reads a wrong KV page, and those drafts are rejected more often (lower "
        f"acceptance). Use {ctx.flag('--page-size')} 1 or SGLang 0.5.7 or later",
        flags=tuple(f for f in (flag, "--page-size", "--speculative-eagle-topk") if f),
        fix=set_flags("use page size 1", Applicability.UNSAFE, page_size=1),
    )


EAGLE3_PAGED_TREE = (
    *LLAMA31_8B_EAGLE3,
    "--speculative-num-steps",
    "5",
    "--speculative-eagle-topk",
    "4",
    "--speculative-num-draft-tokens",
    "16",
    "--attention-backend",
    "fa3",
)

RULE = Rule(
    check=check,
    code="AB391",
    category=Category.PERF,
    name="fa3-paged-tree-draft-short-page-table",
    summary="fa3 tree drafts (topk > 1) over pages in 0.5.6-0.5.6.post2 read a wrong KV page once a branch "
    "crosses a page",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE on the V1 worker with a topk above 1 (typed or automatic), a page "
        "size above 1, at least 3 draft steps, and the multi-step draft decode on fa3 (`--decode-attention-backend`, "
        "else `--attention-backend`, else SGLang's default, fa3 for an MLA target on Hopper), on 0.5.6-0.5.6.post2.",
        why="0.5.6 is the first release that accepts fa3 for topk > 1 with page size > 1 (server_args.py:1752-1759, "
        "rule AB002). For it the EAGLE worker copies each request's last partial page into a fresh page per branch "
        "and puts the branch's draft tokens after it (speculative/eagle_worker.py:396-431, ceil((last_page_len + "
        "steps) / page_size) pages per branch). The fa3 draft decode then sets the branch's length to decode_length "
        "+ last_page_len but builds only ceil(decode_length / page_size) page-table entries from the first token's "
        "page (eager: layers/attention/flashattention_backend.py:648-681; CUDA graph: "
        "update_draft_decode_set_expand_metadata_with_page_size, :2498-2523, into a zeroed table, :1377-1382), so "
        "once last_page_len + decode_length exceeds the page size (decode_length runs to steps - 1) the kernel "
        "reads a page that is not the branch's. The drafts of those steps attend to wrong KV and are accepted less "
        "often; the target's verify is unaffected. 0.5.6.post2's file is the same as 0.5.6's; 0.5.7 builds the "
        "table from every page the branch's tokens use (draft_decode_set_expand_metadata, "
        "flashattention_backend.py:2548-2567, called at :685 and :1870).",
        fix="Use page size 1 (or a backend whose draft builds paged trees, flashinfer), or SGLang 0.5.7 or later.",
        fix_safety="Unsafe: the KV cache's page size changes.",
    ),
    bad=Example(
        argv=(*EAGLE3_PAGED_TREE, "--page-size", "16"),
        gpu="H100",
        sglang_version="0.5.6",
    ),
    good=Example(
        argv=(*EAGLE3_PAGED_TREE, "--page-size", "1"),
        gpu="H100",
        sglang_version="0.5.6",
    ),
    sources=(
        "sglang 0.5.5.post3: python/sglang/srt/server_args.py:1623-1630 (flashinfer only: fa3 refused, rule AB002)",
        "sglang 0.5.6: python/sglang/srt/layers/attention/flashattention_backend.py:648-681, 1377-1382, 1857-1878, 2498-2523; python/sglang/srt/speculative/eagle_worker.py:396-431; python/sglang/srt/server_args.py:1752-1759",
        "sglang 0.5.6.post2: python/sglang/srt/layers/attention/flashattention_backend.py:648-681, 1857-1878, 2498-2523 (as 0.5.6)",
        "sglang 0.5.7: python/sglang/srt/layers/attention/flashattention_backend.py:685, 1870, 2548-2567",
    ),
    sglang_versions=">=0.5.6,<0.5.7",
)
