"""AB570 flashinfer-draft-graph-kv-indices-overflow."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.memory.estimate import estimate_for
from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    draft_decode_backend,
    effective_topk,
    mla_of,
    topk_origin,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

# FlashInferMultiStepDraftBackend.init_cuda_graph_state sizes each step's row of the captured draft-decode
# kv_indices buffer max_bs * max_context_len, while generate_draft_decode_kv_indices packs every one of the
# topk branches of every request into it: seq_lens_sum * topk + bs * (step + 1) entries (common_template).
# The eager init_forward_metadata has the topk factor; 0.5.13 adds it to the graph buffer too
# Until 0.4.7.post1 the draft graph runner passed max_bs * topk as that max_bs; 0.4.8 passes max_bs.
# (spec_utils.draft_kv_indices_buffer_width: "dropping it under-allocates and overflows the row (#27338, #27460)").
BACKEND = "flashinfer"
_LLAMA31 = {
    "architectures": ("LlamaForCausalLM",),
    "model_type": "llama",
    "dtype": "bfloat16",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
}


def _overflow(ctx: CheckContext, topk: int) -> tuple[int, int, int] | None:
    """(graph max batch, served context, KV pool tokens) when a full graph batch can outgrow its row."""
    budget = estimate_for(ctx)
    if budget is None or not budget.graph_bs or not budget.fits:
        return None
    max_bs, context = max(budget.graph_bs), budget.context_len
    steps = ctx.resolution.num_steps or ctx.spec.get("speculative_num_steps") or 1
    # A graph batch holds at most max_bs requests of at most the context each, and no more KV than the pool.
    reachable = min(budget.kv_pool_tokens, max_bs * context)
    if reachable * topk + max_bs * topk * steps <= max_bs * context:
        return None
    return max_bs, context, budget.kv_pool_tokens


def check(ctx: CheckContext) -> Iterator[Finding]:
    topk = effective_topk(ctx)
    # An MLA target drafts on the FlashInfer-MLA multi-step backend, which refuses topk > 1.
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or topk is None
        or topk <= 1
        or ctx.spec.get("disable_cuda_graph")
        or draft_decode_backend(ctx) != BACKEND
        or mla_of(ctx.target) is not False
    ):
        return
    found = _overflow(ctx, topk)
    if found is None:
        return
    max_bs, context, pool = found
    yield RULE.finding(
        f"EAGLE draft decode on {BACKEND} with topk {topk}{topk_origin(ctx, topk)} and CUDA graphs in SGLang "
        f"{ctx.version}: each step's captured kv_indices row holds {max_bs} x {context:,} entries (largest graph "
        f"batch x context), but a graph batch writes its KV length x {topk}; the KV pool (about {pool:,} tokens) "
        f"lets a full batch of long requests exceed {max_bs * context // topk:,} tokens, and once a batch does the "
        "draft kernel writes past the row: silently wrong draft tokens, or an index-out-of-bounds crash in target "
        "verify. "
        f"Upgrade to 0.5.13+, draft a chain ({ctx.flag('--speculative-eagle-topk')} 1) or disable CUDA graphs",
        flags=("--speculative-eagle-topk", "--attention-backend", "--context-length"),
    )


RULE = Rule(
    check=check,
    code="AB570",
    category=Category.CRASH,
    name="flashinfer-draft-graph-kv-indices-overflow",
    summary="EAGLE topk > 1 draft decode on flashinfer under CUDA graphs overflows its kv_indices row once a "
    "graph batch's KV x topk exceeds graph batch x context (0.4.8-0.5.12.post1)",
    # Info: the overflow needs a full graph batch whose requests average more than context / topk tokens,
    # which the workload decides; the launch only makes it possible.
    severity=Severity.INFO,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE/EAGLE3/NEXTN/STANDALONE with a topk above 1 (typed or SGLang's automatic choice), the draft's "
        "decode on flashinfer (`--speculative-draft-attention-backend`, else the decode backend, else the target's "
        "backend), an MHA target, CUDA graphs on, and a KV pool (specguard's memory estimate, MM001) large enough "
        "that a full graph batch of long requests holds more than `max graph batch x context / topk` tokens; "
        "SGLang 0.4.8 up to 0.5.12.post1. Quiet when the GPU or the target's shape is unknown; an info, since "
        "whether a batch's requests grow that long is the workload's doing.",
        why="`FlashInferMultiStepDraftBackend.init_cuda_graph_state` allocates each step's kv_indices row as "
        "`max_bs * max_context_len` (0.4.8 layers/attention/flashinfer_backend.py:1102-1107; 0.5.12.post1 "
        ":1617-1621) with the graph's largest batch as `max_bs` (0.4.8 speculative/eagle_draft_cuda_graph_runner.py:"
        "65-69; until 0.4.7.post1 it passed `max_bs * topk`, :54-56), while `generate_draft_decode_kv_indices` "
        "writes `seq_lens_sum * topk + bs * (step + 1)` entries per row (common_template, 0.5.12.post1 "
        ":1561-1591); the eager path sizes it `batch_size * topk * max_context_len` (:1596-1603). Past the row the kernel writes into the next step's row and adjacent "
        "graph-pool memory: per PR 27338 usually wrong-but-in-vocab draft tokens (lower acceptance), sometimes "
        "out-of-vocab ids that crash the verify embedding gather. 0.5.13 sizes the row with "
        "`draft_kv_indices_buffer_width` (speculative/spec_utils.py:80-88; flashinfer_backend.py:1737-1745). The "
        "FlashInfer-MLA draft backend has the same sizing but refuses topk > 1 in its constructor "
        "(0.5.12.post1 flashinfer_mla_backend.py:912-915), so only MHA targets reach it.",
        fix="Upgrade to SGLang 0.5.13 or later; else draft a chain (topk 1) or disable CUDA graphs.",
        fix_safety="No automatic fix: each choice changes the tree, the speed or the capacity.",
    ),
    bad=Example(
        argv=(
            *LLAMA31_8B_EAGLE3,
            "--attention-backend",
            BACKEND,
            "--context-length",
            "4096",
        ),
        target=_LLAMA31,
        gpu="H100",
        sglang_version="0.5.12.post1",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--attention-backend", BACKEND),
        target=_LLAMA31,
        gpu="H100",
        sglang_version="0.5.12.post1",
    ),
    sources=(
        "sglang 0.4.7.post1: python/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py:51-56",
        "sglang 0.4.8: python/sglang/srt/layers/attention/flashinfer_backend.py:1036-1112",
        "sglang 0.4.8: python/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py:63-69",
        "sglang 0.5.12.post1: python/sglang/srt/layers/attention/flashinfer_backend.py:1561-1621",
        "sglang 0.5.12.post1: python/sglang/srt/layers/attention/flashinfer_mla_backend.py:912-915",
        "sglang 0.5.12.post1: python/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py:100-107",
        "sglang 0.5.13: python/sglang/srt/speculative/spec_utils.py:77-88",
        "sglang 0.5.13: python/sglang/srt/layers/attention/flashinfer_backend.py:1737-1750",
        "https://github.com/sgl-project/sglang/pull/27338",
    ),
    sglang_versions=">=0.4.8,<0.5.13",
)
