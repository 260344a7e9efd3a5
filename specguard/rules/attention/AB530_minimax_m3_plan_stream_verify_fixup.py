"""AB530 minimax-m3-plan-stream-verify-fixup."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
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
from specguard.sglang_facts.architectures import MINIMAX_M3_SPARSE_ARCHITECTURES
from specguard.sglang_facts.changes import spec_v2_algorithms

PLAN_STREAM = "SGLANG_ENABLE_OVERLAP_PLAN_STREAM"

# What SGLang prints: a bare NotImplementedError from AttentionBackend's default method, whose traceback frame reads
# 'File ".../layers/attention/base_attn_backend.py", line 186, in update_verify_buffers_to_fill_after_draft'
# (0.5.17 base_attn_backend.py:177-186).


def check(ctx: CheckContext) -> Iterator[Finding]:
    arch = ctx.target.architecture if ctx.target is not None else None
    if arch not in MINIMAX_M3_SPARSE_ARCHITECTURES or not ctx.spec.env_flag(
        PLAN_STREAM
    ):
        return
    gpu = ctx.env.gpu
    if gpu is not None and gpu.platform == "rocm":
        return  # the ROCm verify fails earlier, in the sparse backend's metadata (AB064)
    if ctx.algorithm not in spec_v2_algorithms(ctx.version):
        return  # the plan stream belongs to the EAGLE family's V2 worker, which runs them with the overlap
        # scheduler on or off alike from 0.5.13 (SPEC_V2_ALWAYS; 0.5.17 spec_info.py:256-300)
    yield RULE.finding(
        f"{PLAN_STREAM}=1 with {ctx.algorithm} (the V2 worker, with or without the overlap scheduler) and a MiniMax-M3 sparse "
        f"target ({arch}) in SGLang {ctx.version}: after each draft the worker asks the target's attention backend to "
        "redo its verify metadata (update_verify_buffers_to_fill_after_draft), which the MiniMax-M3 hybrid backend "
        "does not implement, so the first verify raises NotImplementedError once the server takes requests. "
        f"Unset {PLAN_STREAM} (it is off by default), or upgrade to 0.5.18",
        flags=("--speculative-algorithm",),
        fix=fix_of(
            f"unset {PLAN_STREAM}",
            Applicability.UNSAFE,
            Edit(target="env", name=PLAN_STREAM, value=None),
        ),
    )



RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB530",
    category=Category.CRASH,
    name="minimax-m3-plan-stream-verify-fixup",
    summary="SGLANG_ENABLE_OVERLAP_PLAN_STREAM=1 with EAGLE-family SpecV2 on a MiniMax-M3 sparse target crashes at the first verify (0.5.16-0.5.17)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`SGLANG_ENABLE_OVERLAP_PLAN_STREAM=1` with EAGLE, EAGLE3, NEXTN or STANDALONE (the V2 worker, with the "
        "overlap scheduler on or off) and a MiniMax-M3 sparse target (config.json `architectures[0]` `MiniMaxM3SparseForCausalLM` or "
        "`MiniMaxM3SparseForConditionalGeneration`), SGLang 0.5.16 and 0.5.17, off ROCm.",
        why="With the variable set, the V2 workers open a plan stream (0.5.17 speculative/spec_utils.py:1045-1053; "
        "0.5.16 :844-853) and hand it to every verify (0.5.17 eagle_worker_v2.py:1053, 1496-1502), with the overlap "
        "scheduler on or off: the EAGLE family always runs the V2 worker (0.5.17 speculative/spec_info.py:286-300). "
        "After the draft `eagle_worker_common` calls "
        "`target_worker.model_runner.attn_backend.update_verify_buffers_to_fill_after_draft` (0.5.17 "
        "speculative/eagle_worker_common.py:509-534; 0.5.16 :503-529). For a MiniMax-M3 sparse target that backend is "
        "the `MiniMaxHybridAttnBackend` wrapper (0.5.17 layers/attention/attention_registry.py:309-329, "
        "`is_minimax_sparse` reads `architectures[0]`, configs/model_config.py:149-154), which in 0.5.16 "
        "(minimax_sparse_backend.py:493) and 0.5.17 (:557) does not override the method, so AttentionBackend's "
        "default raises NotImplementedError (0.5.17 base_attn_backend.py:177-186). 0.5.18 delegates it to the dense "
        "backend (minimax_sparse_backend.py:1656-1659); 0.5.15.post1 has no MiniMax-M3 model. On ROCm the verify fails "
        "first in the sparse backend's metadata (AB064).",
        fix="Unset `SGLANG_ENABLE_OVERLAP_PLAN_STREAM` (default off), or upgrade to 0.5.18.",
        fix_safety="Unsafe: without the plan stream the next batch's metadata is planned after the draft, not beside it (slower).",
    ),
    bad=Example(
        argv=MINIMAX_M3_TP8_EAGLE3,
        target={"architectures": ("MiniMaxM3SparseForCausalLM",)},
        env={PLAN_STREAM: "1"},
        gpu="H200",
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=MINIMAX_M3_TP8_EAGLE3,
        target={"architectures": ("MiniMaxM3SparseForCausalLM",)},
        env={PLAN_STREAM: "1"},
        gpu="H200",
        sglang_version="0.5.18",
    ),
    sources=(
        "sglang 0.5.16: python/sglang/srt/speculative/eagle_worker_common.py:503-529; speculative/spec_utils.py:844-853",
        "sglang 0.5.16: python/sglang/srt/layers/attention/minimax_sparse_backend.py:493 (no override); attention_registry.py:276-281",
        "sglang 0.5.17: python/sglang/srt/speculative/eagle_worker_common.py:509-534; speculative/spec_utils.py:1045-1053",
        "sglang 0.5.17: python/sglang/srt/speculative/eagle_worker_v2.py:1053,1496-1502; speculative/spec_info.py:286-300",
        "sglang 0.5.17: python/sglang/srt/layers/attention/minimax_sparse_backend.py:557 (no override); base_attn_backend.py:177-186",
        "sglang 0.5.17: python/sglang/srt/layers/attention/attention_registry.py:309-329; configs/model_config.py:149-154",
        "sglang 0.5.18: python/sglang/srt/layers/attention/minimax_sparse_backend.py:1656-1659",
    ),
    sglang_versions=">=0.5.16,<=0.5.17",
    log_signatures=(
        r"base_attn_backend\.py.*in update_verify_buffers_to_fill_after_draft",
    ),
)
