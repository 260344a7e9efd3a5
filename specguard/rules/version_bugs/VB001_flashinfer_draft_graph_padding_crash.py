"""VB001 flashinfer-draft-graph-padding-crash."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    attention_backend,
    proposed_backend,
    runtime_backends,
)
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, set_flags
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

# slime's workaround list: $(seq 1 32) $(seq 40 8 64) $(seq 80 16 160).
SLIME_CUDA_GRAPH_BS = tuple(
    str(n) for n in [*range(1, 33), *range(40, 65, 8), *range(80, 161, 16)]
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.spec.get("disable_cuda_graph"):
        return
    backend, given = attention_backend(ctx)
    backends = runtime_backends(ctx)
    if backend is None and not given and not backends:
        yield RULE.finding(
            f"SGLang {ctx.env.sglang_version} (before 0.5.3) can hit illegal memory accesses when FlashInfer "
            "replays a padded draft CUDA graph (issues 9888, 9521), and the GPU is unknown, so specguard "
            f"cannot tell whether FlashInfer will be the default backend: pass --gpu or set "
            f"{ctx.flag('--attention-backend')}",
            flags=("--attention-backend",),
            severity=Severity.INFO,
        )
        return
    if "flashinfer" not in backends:
        return
    how = f"{ctx.flag('--attention-backend')} flashinfer" if given else f"FlashInfer (SGLang's default here on {ctx.env.gpu.name if ctx.env.gpu else 'this GPU'})"
    replacement = proposed_backend(ctx, avoid=frozenset({"flashinfer"}))
    if replacement is not None:
        fix = set_flags(f"use --attention-backend {replacement}", Applicability.UNSAFE, attention_backend=replacement)
        step = f"switch to {replacement}"
    else:
        fix = set_flags("capture a wider --cuda-graph-bs list (slime's)", Applicability.UNSAFE, cuda_graph_bs=SLIME_CUDA_GRAPH_BS)
        step = f"capture more batch sizes ({ctx.flag('--cuda-graph-bs')} $(seq 1 32) $(seq 40 8 64) $(seq 80 16 160))"
    yield RULE.finding(
        f"{how} with speculative decoding and CUDA graphs on SGLang {ctx.env.sglang_version}: when a batch is "
        "padded up to a captured size, the draft CUDA graph replays stale positions and crashes with "
        "'illegal memory access' under load (issues 9888, 9521, 9481; fixed in 0.5.3 by PR 10892). "
        f"Upgrade, or {step}; --disable-cuda-graph-padding does not help speculative decoding before 0.5.3",
        flags=("--attention-backend", "--cuda-graph-bs"),
        fix=fix,
    )


RULE = Rule(
    check=check,
    code="VB001",
    category=Category.CRASH,
    name="flashinfer-draft-graph-padding-crash",
    summary="FlashInfer + EAGLE CUDA graphs crash on padded batches before SGLang 0.5.3",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE with CUDA graphs on, on SGLang < 0.5.3, where the "
        "target's prefill or decode backend is FlashInfer: typed, or SGLang's default for the GPU "
        "(before 0.5.5 the default was chosen after the automatic topk, so a Llama target with "
        "topk 4 on Hopper gets FlashInfer, not fa3). Unknown GPU and no backend: info.",
        why="When the running batch is smaller than the captured CUDA-graph size, the EAGLE draft "
        "runner pads it but did not reset its `positions` buffer; FlashInfer then reads stale "
        "indices and the server dies with `CUDA error: an illegal memory access` after a while "
        "under load (issues 9888 and 9521 on 0.4.9.post2/H100; issue 9481, for which PR 9687 was an "
        "unmerged padding workaround). PR 10892 fixed the root cause by zeroing the padded "
        "buffers; it first shipped in 0.5.3 (`speculative/eagle_draft_cuda_graph_runner.py:302-305`; "
        "0.5.2 `:302-304` lacks `positions.zero_()`). slime's Known Issues recommend fa3 or triton, "
        "a wider `--cuda-graph-bs`, and note that `--disable-cuda-graph-padding` does not help: "
        "before 0.5.3 SGLang ignores it when choosing the speculative capture list (see VB002).",
        fix="Upgrade to 0.5.3 or later. Otherwise fa3 on Hopper, triton elsewhere (where the page-tree "
        "list of AB002 allows it), else slime's wider list `$(seq 1 32) $(seq 40 8 64) $(seq 80 16 160)`.",
        fix_safety="Unsafe: another attention kernel runs, or more CUDA graphs are captured (memory).",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--speculative-num-steps", "5", "--speculative-eagle-topk", "8",
              "--speculative-num-draft-tokens", "32", "--attention-backend", "flashinfer"),
        gpu="H100",
        sglang_version="0.5.2",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--speculative-num-steps", "5", "--speculative-eagle-topk", "8",
              "--speculative-num-draft-tokens", "32", "--attention-backend", "fa3"),
        gpu="H100",
        sglang_version="0.5.2",
    ),
    sources=(
        "seed: slime-speculative-decoding.en.md (Known Issues: SGLang issue #9888 or #9521; #9481)",
        "https://github.com/sgl-project/sglang/issues/9888",
        "https://github.com/sgl-project/sglang/issues/9521",
        "https://github.com/sgl-project/sglang/issues/9481",
        "https://github.com/sgl-project/sglang/pull/9687",
        "https://github.com/sgl-project/sglang/pull/10892",
        "sglang 0.5.2: python/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py:302-304",
        "sglang 0.5.3: python/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py:302-305",
    ),
    sglang_versions="<0.5.3",
    dialects=SGLANG_DIALECTS,
)
