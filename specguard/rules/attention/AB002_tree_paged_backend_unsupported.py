"""AB002 tree-paged-backend-unsupported."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    attention_backend,
    effective_topk,
    page_size,
    page_tree_backends,
    proposed_backend,
)
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, set_flags
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import DEFAULT_BACKEND_PICKED_BEFORE_SPEC


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS | {"NGRAM"}:
        return
    topk, pages = effective_topk(ctx), page_size(ctx)
    allowed = page_tree_backends(ctx)
    if topk is None or topk <= 1 or pages <= 1 or allowed is None:
        return
    backend, given = attention_backend(ctx)
    if not given and not DEFAULT_BACKEND_PICKED_BEFORE_SPEC.present_in(ctx.version):
        # Before 0.5.5 the default was chosen after this check, which saw None.
        backend, given = None, True
    if backend in allowed:
        return
    topk_source = "" if ctx.spec.get("speculative_eagle_topk") == topk else (
        " (from --speculative-ngram-max-bfs-breadth)" if ctx.algorithm == "NGRAM" else " (SGLang's automatic choice)"
    )
    if backend is None and not given:
        yield RULE.finding(
            f"topk {topk}{topk_source} with page size {pages} is only accepted on {', '.join(allowed)}, and "
            f"the GPU is unknown, so specguard cannot tell which backend SGLang will pick: pass --gpu or set "
            f"{ctx.flag('--attention-backend')}",
            flags=("--attention-backend", "--page-size"),
            severity=Severity.INFO,
        )
        return
    what = f"{ctx.flag('--attention-backend')} {backend}" if given and backend else (
        f"no {ctx.flag('--attention-backend')} (SGLang {ctx.env.sglang_version} checks this before choosing one)"
        if backend is None else f"SGLang's default backend on {ctx.env.gpu.name if ctx.env.gpu else 'this GPU'} ({backend})"
    )
    replacement = next((b for b in (proposed_backend(ctx),) if b in allowed), None) or allowed[0]
    yield RULE.finding(
        f"topk {topk}{topk_source} with page size {pages} is only accepted on {', '.join(allowed)} in SGLang "
        f"{ctx.env.sglang_version}, and this runs {what}: argument resolution raises ValueError before "
        f"anything loads. Use {replacement}, or page size 1",
        flags=("--attention-backend", "--page-size", "--speculative-eagle-topk"),
        fix=set_flags(f"use --attention-backend {replacement}", Applicability.UNSAFE, attention_backend=replacement),
    )


RULE = Rule(
    check=check,
    code="AB002",
    category=Category.START,
    name="tree-paged-backend-unsupported",
    summary="topk > 1 with page size > 1 on an attention backend SGLang rejects for it",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="For the EAGLE family and NGRAM: the topk SGLang runs with (typed, auto-chosen, or "
        "NGRAM's BFS breadth), `--page-size`, and the attention backend (typed, or SGLang's "
        "predicted default for the GPU) against SGLang's list for that version.",
        why="A tree draft (topk > 1) over paged KV is only implemented by some backends; SGLang "
        "raises at argument resolution otherwise (catalogue P21, P67). The list changed: no check "
        "up to 0.5.1; flashinfer only in 0.5.2-0.5.5; flashinfer or fa3 in 0.5.6-0.5.12; "
        "flashinfer, fa3 or triton from 0.5.13. NGRAM accepts only flashinfer. Before 0.5.5 the "
        "check ran before the default backend was chosen, so leaving `--attention-backend` unset "
        "failed too. From 0.5.5 the default matters: on ROCm it is aiter, which is never accepted.",
        fix="Set an accepted backend (fa3 on Hopper, else flashinfer or triton), or use page size 1.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--speculative-num-steps", "5", "--speculative-eagle-topk", "8",
              "--speculative-num-draft-tokens", "32", "--page-size", "16", "--attention-backend", "torch_native"),
        gpu="H100",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--speculative-num-steps", "5", "--speculative-eagle-topk", "8",
              "--speculative-num-draft-tokens", "32", "--page-size", "16", "--attention-backend", "fa3"),
        gpu="H100",
    ),
    sources=(
        "seed: sglang-speculative-decoding.md (NGRAM: topk > 1 and page_size > 1 need flashinfer)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1271-1282, 1355-1366",
        "sglang 0.5.13: python/sglang/srt/arg_groups/speculative_hook.py:376 (triton added)",
        "sglang 0.5.6: python/sglang/srt/server_args.py:1752-1759 (fa3 added)",
        "sglang 0.5.2: python/sglang/srt/server_args.py:784-791 (first check, flashinfer only)",
        "catalogue: shared/design/sglang-spec-checks.md P21, P38, P67",
    ),
    dialects=SGLANG_DIALECTS,
)
