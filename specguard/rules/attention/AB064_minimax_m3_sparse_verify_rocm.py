"""AB064 minimax-m3-sparse-verify-rocm."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, effective_topk
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, set_flags
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.architectures import (
    MINIMAX_M3_SPARSE_ARCHITECTURES,
)
from specguard.sglang_facts.changes import MINIMAX_M3_ROCM_VERIFY


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or gpu is None
        or gpu.platform != "rocm"
    ):
        return
    arch = ctx.target.architecture if ctx.target is not None else None
    if arch not in MINIMAX_M3_SPARSE_ARCHITECTURES:
        return
    if MINIMAX_M3_ROCM_VERIFY.present_in(ctx.version):
        yield from _tree_refused(ctx, arch)
        return
    yield RULE.finding(
        f"{arch} with {ctx.algorithm} on ROCm ({gpu.name}) in SGLang {ctx.env.sglang_version}: the MiniMax-M3 "
        "sparse-attention backend builds its metadata from extend_seq_lens, which the target-verify batch does not "
        "carry on ROCm, so the first verify fails ('NoneType' object has no attribute 'device') after the weights "
        "load. SGLang 0.5.22 adds the ROCm verify path (for a topk-1 chain); upgrade, or serve without speculative "
        "decoding",
        flags=("--speculative-algorithm",),
    )


def _tree_refused(ctx: CheckContext, arch: str) -> Iterator[Finding]:
    """0.5.22's ROCm verify path runs a linear chain only (minimax_sparse_backend.py:280-285)."""
    topk = effective_topk(ctx)
    if topk is None or topk == 1:
        return
    steps = ctx.resolution.num_steps or ctx.spec.get("speculative_num_steps") or 3
    yield RULE.finding(
        f"{arch} with {ctx.algorithm} on ROCm and topk {topk}: the MiniMax-M3 sparse-attention backend raises "
        "'MiniMax-M3 ROCm speculative attention requires a linear draft chain (--speculative-eagle-topk 1)' when it "
        f"is built, after the weights load. Set {ctx.flag('--speculative-eagle-topk')} 1 with "
        f"{ctx.flag('--speculative-num-draft-tokens')} {steps + 1}",
        flags=("--speculative-eagle-topk",),
        fix=set_flags(
            f"draft a chain of {steps} steps",
            Applicability.UNSAFE,
            speculative_num_steps=steps,
            speculative_eagle_topk=1,
            speculative_num_draft_tokens=steps + 1,
        ),
    )


MINIMAX_M3_EAGLE3_ROCM = (
    "--model-path",
    "amd/MiniMax-M3-MXFP4",
    "--tp",
    "4",
    "--attention-backend",
    "aiter",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "Inferact/MiniMax-M3-EAGLE3",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)


RULE = Rule(
    check=check,
    code="AB064",
    category=Category.CRASH,
    name="minimax-m3-sparse-verify-rocm",
    summary="MiniMax-M3 (sparse attention) with EAGLE-family speculation on ROCm: verify crashes before 0.5.22, a tree is refused from 0.5.22",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="EAGLE, EAGLE3, NEXTN or STANDALONE on a MiniMax-M3 sparse target (`MiniMaxM3SparseForCausalLM`, "
        "`MiniMaxM3SparseForConditionalGeneration`) on an AMD GPU: any such launch in SGLang 0.5.16-0.5.21, and "
        "from 0.5.22 one whose topk (typed or automatic) is above 1.",
        why="`minimax_sparse_backend` (new in 0.5.16) computes `cu_seqlens` from `forward_batch.extend_seq_lens`, "
        "which the speculative TARGET_VERIFY batch leaves None; 0.5.18-0.5.21 rebuild it for NPU only "
        "(0.5.21 layers/attention/minimax_sparse_backend.py:1352-1387). Issue 33383 (amd/MiniMax-M3-MXFP4, MI355X, "
        "TP 4, aiter, EAGLE3 3/1/4) hits it; PRs 35889 (gfx950) and 36659 (MI300) add a ROCm decode-shaped verify "
        "path, which 0.5.22 ships (minimax_sparse_backend.py:428, 464, 570, 1457 test `is_hip` and target verify). "
        "That path drafts a chain only: from 0.5.22 the backend's constructor raises NotImplementedError on HIP "
        "for any speculative algorithm with `--speculative-eagle-topk` != 1 (0.5.22 and 0.5.23 "
        "minimax_sparse_backend.py:280-285).",
        fix="Before 0.5.22: upgrade, or drop speculative decoding on ROCm. From 0.5.22: topk 1 (a chain).",
        fix_safety="Unsafe: the chain changes the draft shape; before 0.5.22 there is no automatic fix.",
    ),
    bad=Example(
        argv=MINIMAX_M3_EAGLE3_ROCM,
        target={"architectures": ("MiniMaxM3SparseForConditionalGeneration",)},
        gpu="MI355X",
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=MINIMAX_M3_EAGLE3_ROCM,
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
        "sglang 0.5.22: python/sglang/srt/layers/attention/minimax_sparse_backend.py:280-285 (topk 1 only on HIP)",
        "sglang 0.5.23: python/sglang/srt/layers/attention/minimax_sparse_backend.py:280-285",
    ),
    sglang_versions=">=0.5.16",
    dialects=SGLANG_DIALECTS,
    log_signatures=(
        # minimax_sparse_backend.py reads forward_batch.extend_seq_lens.device, which verify leaves None
        # (0.5.16: line 302); the message alone is common, so it ranks after specific ones.
        r"'NoneType' object has no attribute 'device'",
        r"MiniMax-M3 ROCm speculative attention requires a linear draft chain",
    ),
)
