"""AB064 minimax-m3-sparse-verify-rocm."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

# The MiniMax-M3 entry classes whose attention runs on minimax_sparse_backend (0.5.21 models/minimax_m3.py,
# models/minimax_m3_vl.py).
MINIMAX_M3_SPARSE_ARCHS = frozenset({"MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration"})


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or gpu is None or gpu.platform != "rocm":
        return
    arch = ctx.target.architecture if ctx.target is not None else None
    if arch not in MINIMAX_M3_SPARSE_ARCHS:
        return
    yield RULE.finding(
        f"{arch} with {ctx.algorithm} on ROCm ({gpu.name}) in SGLang {ctx.env.sglang_version}: the MiniMax-M3 "
        "sparse-attention backend builds its metadata from extend_seq_lens, which the target-verify batch does not "
        "carry on ROCm, so the first verify fails ('NoneType' object has no attribute 'device') after the weights "
        "load. SGLang 0.5.22 adds the ROCm verify path; upgrade, or serve without speculative decoding",
        flags=("--speculative-algorithm",),
    )


RULE = Rule(
    check=check,
    code="AB064",
    category=Category.CRASH,
    name="minimax-m3-sparse-verify-rocm",
    summary="MiniMax-M3 (sparse attention) with EAGLE-family speculation on ROCm before 0.5.22: target verify crashes",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="EAGLE, EAGLE3, NEXTN or STANDALONE on a MiniMax-M3 sparse target (`MiniMaxM3SparseForCausalLM`, "
        "`MiniMaxM3SparseForConditionalGeneration`) on an AMD GPU, SGLang 0.5.16-0.5.21.",
        why="`minimax_sparse_backend` (new in 0.5.16) computes `cu_seqlens` from `forward_batch.extend_seq_lens`, "
        "which the speculative TARGET_VERIFY batch leaves None; 0.5.18-0.5.21 rebuild it for NPU only "
        "(0.5.21 layers/attention/minimax_sparse_backend.py:1352-1387). Issue 33383 (amd/MiniMax-M3-MXFP4, MI355X, "
        "TP 4, aiter, EAGLE3 3/1/4) hits it; PRs 35889 (gfx950) and 36659 (MI300) add a ROCm decode-shaped verify "
        "path, which 0.5.22 ships (minimax_sparse_backend.py:428, 464, 570, 1457 test `is_hip` and target verify).",
        fix="Upgrade to 0.5.22 or later, or drop speculative decoding on ROCm.",
        fix_safety="No automatic fix: both options change what runs.",
    ),
    bad=Example(
        argv=("--model-path", "amd/MiniMax-M3-MXFP4", "--tp", "4", "--attention-backend", "aiter",
              "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "Inferact/MiniMax-M3-EAGLE3",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        target={"architectures": ("MiniMaxM3SparseForConditionalGeneration",)},
        gpu="MI355X",
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=("--model-path", "amd/MiniMax-M3-MXFP4", "--tp", "4", "--attention-backend", "aiter",
              "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "Inferact/MiniMax-M3-EAGLE3",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        target={"architectures": ("MiniMaxM3SparseForConditionalGeneration",)},
        gpu="MI355X",
        sglang_version="0.5.22",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/33383",
        "https://github.com/sgl-project/sglang/pull/35889",
        "https://github.com/sgl-project/sglang/pull/36659",
        "sglang 0.5.21: python/sglang/srt/layers/attention/minimax_sparse_backend.py:1352-1387",
        "sglang 0.5.22: python/sglang/srt/layers/attention/minimax_sparse_backend.py:428, 464, 570, 1457",
    ),
    sglang_versions=">=0.5.16,<0.5.22",
    dialects=SGLANG_DIALECTS,
    log_signatures=(
        # minimax_sparse_backend.py reads forward_batch.extend_seq_lens.device, which verify leaves None
        # (0.5.16: line 302); the message alone is common, so it ranks after specific ones.
        r"'NoneType' object has no attribute 'device'",
    ),
)
