"""AB581 minimax-m3-msa-speculation-decode-graph."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import BACKEND_FLAGS
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import MINIMAX_M3_TP8_EAGLE3
from specguard.rules.spec_params.SP532_adaptive_state_overflows_shared_logits_buffer import (
    decode_graphs_captured,
)
from specguard.sglang_facts.architectures import MINIMAX_M3_SPARSE_ARCHITECTURES

DISABLE_MSA = "SGLANG_DISABLE_MSA"
# msa_available(): the fmha_sm100 kernels run on B200/GB200 (10, 0) and B300/GB300 (10, 3) only
# (0.5.16 layers/attention/minimax_sparse_ops/msa.py:41-53).
MSA_CAPABILITIES = ((10, 0), (10, 3))
# The MSA kernel's constraints on config.json's sparse_attention_config (0.5.16 minimax_sparse_backend.py:81-88).
MSA_BLOCK_SIZE = 128
MSA_TOPK_BLOCKS = (4, 8, 16, 32)

# What SGLang raises (0.5.16 minimax_sparse_backend.py:147-151; the same text to 0.5.23 :300-304):
#   NotImplementedError: MiniMax-M3 MSA attention does not support speculative decoding under CUDA graph.
#   Use --disable-cuda-graph, set SGLANG_DISABLE_MSA=1, or disable speculative decoding.


def _page_is_msa_block(ctx: CheckContext) -> bool:
    """Whether the KV pool pages 128 tokens: --page-size 128, or none typed and the MiniMax-M3 override's fa4
    default on SM100 sets it (0.5.16 arg_groups/overrides.py:502-511; 0.5.23 model_overrides/minimax_m3.py:160-168)."""
    page = ctx.spec.get("page_size")
    if page is not None:
        return page == MSA_BLOCK_SIZE
    typed = {ctx.spec.last_value(flag) for flag in BACKEND_FLAGS} - {None}
    return typed <= {"fa4"}


def _msa_config(ctx: CheckContext) -> bool:
    target = ctx.target
    return (
        target is not None
        and target.architecture in MINIMAX_M3_SPARSE_ARCHITECTURES
        and target.sparse_block_size == MSA_BLOCK_SIZE
        and target.sparse_topk_blocks in MSA_TOPK_BLOCKS
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if (
        ctx.algorithm is None
        or gpu is None
        or gpu.platform != "cuda"
        or gpu.compute_capability not in MSA_CAPABILITIES
    ):
        return
    if (
        not _msa_config(ctx)
        or ctx.spec.env_flag(DISABLE_MSA)
        # 0.5.21+ keeps MSA off under HiSparse (0.5.21 minimax_sparse_backend.py use_msa); earlier, not judged
        or ctx.spec.has("--enable-hisparse")
        or not _page_is_msa_block(ctx)
    ):
        return
    kv_dtype = ctx.spec.get("kv_cache_dtype")
    if kv_dtype is not None and str(kv_dtype).startswith("fp8"):
        return  # an fp8 KV cache keeps the Triton path in 0.5.16-0.5.17, and MSA only in fp8 GEMM mode later
    if not decode_graphs_captured(ctx):
        return
    yield RULE.finding(
        f"{ctx.algorithm} with a MiniMax-M3 sparse target ({ctx.target.architecture if ctx.target else ''}) on "
        f"{gpu.name}, page size 128 and decode CUDA graphs on, in SGLang {ctx.version}: with the fmha_sm100 kernels "
        "installed, the sparse backend runs MSA and refuses speculation under CUDA graphs when it is built, after the "
        "weights load ('MiniMax-M3 MSA attention does not support speculative decoding under CUDA graph'). Set "
        f"{DISABLE_MSA}=1 (the Triton sparse path), or {ctx.flag('--disable-cuda-graph')}, or serve without "
        "speculation",
        flags=("--speculative-algorithm",),
        fix=fix_of(
            f"set {DISABLE_MSA}=1",
            Applicability.UNSAFE,
            Edit(target="env", name=DISABLE_MSA, value="1"),
        ),
    )


M3_FACTS = {
    "architectures": ("MiniMaxM3SparseForCausalLM",),
    "sparse_block_size": 128,
    "sparse_topk_blocks": 16,
}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB581",
    category=Category.START,
    name="minimax-m3-msa-speculation-decode-graph",
    summary="MiniMax-M3 sparse attention on SM100 with MSA, speculation and decode CUDA graphs is refused at start (0.5.16+)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Any `--speculative-algorithm` with a MiniMax-M3 sparse target (`MiniMaxM3SparseForCausalLM`, "
        "`MiniMaxM3SparseForConditionalGeneration`) whose config.json `sparse_attention_config` has "
        "`sparse_block_size` 128 and `sparse_topk_blocks` 4, 8, 16 or 32, on a B200/B300-class GPU (SM 10.0/10.3), "
        "with a 128-token KV page (`--page-size 128`, or no page size and no backend other than fa4, which the "
        "MiniMax-M3 override then picks with page 128), no fp8 KV cache, `SGLANG_DISABLE_MSA` unset and decode CUDA "
        "graphs on, no `--enable-hisparse` (0.5.21+ keeps MSA off under HiSparse); SGLang 0.5.16 or later. A warning: MSA also needs the `fmha_sm100` package, which SGLang does "
        "not depend on and specguard cannot see.",
        why="`MiniMaxSparseAttnBackend.__init__` (new in 0.5.16) sets `use_msa` when SGLANG_DISABLE_MSA is unset, "
        "`msa_available()` (SM 10.0/10.3 and `fmha_sm100` importable, minimax_sparse_ops/msa.py:20-53), block size "
        "128 equals the KV page size, topk blocks are 4/8/16/32 and the main KV cache is not fp8 "
        "(minimax_sparse_backend.py:81-88); with decode CUDA graphs on and any speculative algorithm it raises "
        "NotImplementedError (:140-151), since verify batches would reach forward_extend without extend metadata "
        "mid-capture. The override gives MiniMax-M3 fa4 with page 128 on SM100 when neither is typed "
        "(0.5.16 arg_groups/overrides.py:502-511). 0.5.23 keeps the raise (minimax_sparse_backend.py:226-234, "
        "286-304; 0.5.18+ also admits an fp8_e4m3 KV cache in fp8 GEMM mode, not flagged here). 0.5.15.post1 has "
        "no MiniMax-M3 sparse backend.",
        fix="Set `SGLANG_DISABLE_MSA=1` (the Triton sparse path), disable CUDA graphs, or serve without speculation.",
        fix_safety="Unsafe: the Triton sparse path is slower than MSA.",
    ),
    bad=Example(argv=MINIMAX_M3_TP8_EAGLE3, target=M3_FACTS, gpu="B200", sglang_version="0.5.16"),
    good=Example(
        argv=MINIMAX_M3_TP8_EAGLE3,
        target=M3_FACTS,
        env={DISABLE_MSA: "1"},
        gpu="B200",
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/layers/attention (no minimax_sparse_backend.py)",
        "sglang 0.5.16: python/sglang/srt/layers/attention/minimax_sparse_backend.py:81-88,140-151",
        "sglang 0.5.16: python/sglang/srt/layers/attention/minimax_sparse_ops/msa.py:20-53; arg_groups/overrides.py:502-511",
        "sglang 0.5.16: python/sglang/srt/configs/model_config.py:144-155",
        "sglang 0.5.23: python/sglang/srt/layers/attention/minimax_sparse_backend.py:226-234,286-304",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_overrides/minimax_m3.py:160-168",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"MiniMax-M3 MSA attention does not support speculative decoding under CUDA graph",
    ),
)
