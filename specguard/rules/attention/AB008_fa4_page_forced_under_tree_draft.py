"""AB008 fa4-page-forced-under-tree-draft."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    effective_topk,
    is_mla_target,
    page_tree_backends,
    proposed_backend,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

_FLAGS = ("--attention-backend", "--prefill-attention-backend", "--decode-attention-backend")


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or gpu is None or gpu.compute_capability is None:
        return
    if gpu.compute_capability[0] != 10 or is_mla_target(ctx) or ctx.target is None:
        return
    if not any((item := ctx.spec.item(f)) is not None and item.values == ("fa4",) for f in _FLAGS):
        return
    # The page-tree check reads attention_backend (0.5.15 arg_groups/speculative_hook.py:452-463): a fa4 prefill or
    # decode backend beside a tree-capable or unset (SGLang's default) --attention-backend is not refused there.
    common = ctx.spec.last_value("--attention-backend")
    allowed = page_tree_backends(ctx)
    if common is None or allowed is None or common in allowed:
        return
    typed_topk = ctx.spec.get("speculative_eagle_topk")
    topk = effective_topk(ctx)
    if (typed_topk or 0) > 1 or topk is None or topk <= 1:
        return
    replacement = proposed_backend(ctx, avoid=frozenset({"fa4"})) or "flashinfer"
    yield RULE.finding(
        f"fa4 on {gpu.name} forces page size 128 while topk is still unset, then SGLang auto-chooses topk "
        f"{topk} for this target, and topk > 1 with page size 128 is rejected for fa4 at argument "
        f"resolution. Set {ctx.flag('--speculative-eagle-topk')} explicitly (with steps and draft tokens) "
        f"or use {replacement}",
        flags=("--attention-backend", "--speculative-eagle-topk"),
        fix=set_flags(f"use {replacement} instead of fa4", Applicability.UNSAFE, attention_backend=replacement),
    )


RULE = Rule(
    check=check,
    code="AB008",
    category=Category.START,
    name="fa4-page-forced-under-tree-draft",
    summary="fa4 on SM100 forces page size 128 before SGLang picks a topk above 1",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="fa4 (attention, prefill or decode) on an SM10x GPU with a non-MLA target, no typed topk "
        "above 1, an automatic topk above 1 (Llama and Grok targets get topk 4), and a typed "
        "`--attention-backend` outside the page-tree backends (fa4 itself, typically), SGLang 0.5.15 or later.",
        why="The FA4 page constraint (catalogue P22, `arg_groups/overrides.py:1274-1295` in 0.5.23) "
        "runs before the speculative hook and sets page size 128 whenever topk is at most 1 *at that "
        "time*; an unset topk counts as 0. The speculative hook then auto-chooses topk 4 and the "
        "page-tree check (P21) rejects fa4 with page size 128. `[B200] --attention-backend fa4` with "
        "EAGLE on Llama and no topk fails this way (case sim:S09). This form (all three backend fields, "
        "topk at most 1) is 0.5.15's `_fa4_page_constraint` (arg_groups/overrides.py:1674-1693); 0.5.13-0.5.14 "
        "forced page 128 only for `prefill_attention_backend == 'fa4'` whatever the topk (0.5.14 "
        "server_args.py:4651-4659), so `--attention-backend fa4` kept page 1 there and is not claimed.",
        fix="Use flashinfer (SGLang's default on SM100 for tree drafts), or type the speculative "
        "parameters: an explicit topk > 1 keeps page size 1, an explicit topk 1 keeps fa4 at page 128.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE, "--attention-backend", "fa4"),
        target={"architectures": ["LlamaForCausalLM"]},
        gpu="B200",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE, "--attention-backend", "fa4", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        target={"architectures": ["LlamaForCausalLM"]},
        gpu="B200",
    ),
    sources=(
        "sglang 0.5.14: python/sglang/srt/server_args.py:4651-4659 (prefill_attention_backend only, any topk)",
        "sglang 0.5.15: python/sglang/srt/arg_groups/overrides.py:1674-1693",
        "sglang 0.5.23: python/sglang/srt/arg_groups/overrides.py:1274-1295",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1271-1282",
        "catalogue: shared/design/sglang-spec-checks.md P22, P21",
    ),
    sglang_versions=">=0.5.15",
    dialects=SGLANG_DIALECTS,
)
