"""AB521 plan-stream-wrapper-verify-fixup."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3_CHAIN
from specguard.rules.hybrid._hybrid import is_mamba_radix_target, runs_extra_buffer
from specguard.rules.spec_params._shared import device
from specguard.rules.spec_params._spec_v2 import runs_overlapped_spec_v2, v2_switch
from specguard.sglang_facts.architectures import (
    DSV4_ARCHITECTURES,
    MINIMAX_M3_SPARSE_ARCHITECTURES,
)
from specguard.sglang_facts.changes import Change

PLAN_STREAM = "SGLANG_ENABLE_OVERLAP_PLAN_STREAM"
# From 0.5.10rc0 a mamba target's radix-cache strategy decides whether speculation keeps the overlap scheduler:
# extra_buffer (or no radix cache) keeps it, no_buffer with the radix cache is refused (0.5.10rc0-0.5.13, HY020) or
# turns it off (0.5.16 arg_groups/overrides.py:1187-1199). Before, how a mamba target met SpecV2 is not read here.
MAMBA_STRATEGY_DECIDES_OVERLAP = Change(
    "0.5.10rc0",
    "0.5.10rc0 server_args.py _handle_mamba_radix_cache: no_buffer with radix cache and speculation raises",
)

# What SGLang prints: a bare NotImplementedError from AttentionBackend's default method, whose traceback frame reads
# 'File ".../layers/attention/base_attn_backend.py", line 165, in update_verify_buffers_to_fill_after_draft'
# (0.5.16 base_attn_backend.py:156-165).


def _split_backends(ctx: CheckContext) -> tuple[str, str] | None:
    """(prefill, decode) as typed, each phase's flag else --attention-backend (server_args.get_attention_backends);
    None when either is left to SGLang."""
    common = ctx.spec.last_value("--attention-backend")
    prefill = ctx.spec.last_value("--prefill-attention-backend") or common
    decode = ctx.spec.last_value("--decode-attention-backend") or common
    return (prefill, decode) if prefill is not None and decode is not None else None


def _mamba_target_keeps_overlap(ctx: CheckContext) -> bool:
    """A hybrid linear target runs the SpecV2 worker only with extra_buffer tracking or no radix cache."""
    if not MAMBA_STRATEGY_DECIDES_OVERLAP.present_in(ctx.version):
        return False
    return runs_extra_buffer(ctx) or ctx.spec.has("--disable-radix-cache")


def _wrapper(ctx: CheckContext) -> str | None:
    """The wrapper class that serves the target's verify without the plan-stream fixup, or None."""
    if is_mamba_radix_target(ctx):
        if not _mamba_target_keeps_overlap(ctx):
            return None
        return "HybridLinearAttnBackend (its linear-attention wrapper)"
    split = _split_backends(ctx)
    if split is not None and split[0] != split[1]:
        return f"HybridAttnBackend (prefill {split[0]}, decode {split[1]})"
    return None


def _in_release(ctx: CheckContext) -> bool:
    """The target's class is in this release's registry (else it cannot load at all, VB012)."""
    from specguard.versions import history  # the release history loads only here

    data = history()
    index = data.index_of(ctx.version)
    arch = ctx.target.architecture if ctx.target is not None else None
    return arch is None or (
        index is not None and index in data.architecture_releases(arch)
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.spec.env_flag(PLAN_STREAM) or device(ctx) not in (None, "cuda"):
        return  # the Ascend backends implement the fixup
    arch = ctx.target.architecture if ctx.target is not None else None
    if arch in MINIMAX_M3_SPARSE_ARCHITECTURES or arch in DSV4_ARCHITECTURES:
        return  # their own wrappers (AB530) or backend
    wrapper = _wrapper(ctx)
    if wrapper is None or not runs_overlapped_spec_v2(ctx) or not _in_release(ctx):
        return
    yield RULE.finding(
        f"{PLAN_STREAM}=1 with {ctx.algorithm} on the SpecV2 worker ({v2_switch(ctx)}) in SGLang {ctx.version}: after "
        "each draft the worker asks the target's attention backend to redo its verify metadata "
        f"(update_verify_buffers_to_fill_after_draft), and this target's backend is {wrapper}, which does not "
        "implement it in this release, so the first verify raises NotImplementedError once the server takes "
        f"requests. Unset {PLAN_STREAM} (off by default), or upgrade to 0.5.17 and run target verify on triton or "
        "trtllm_mha (0.5.17 hands the call to that backend; fa3 and flashinfer do not implement it either)",
        flags=("--speculative-algorithm",),
        fix=fix_of(
            f"unset {PLAN_STREAM}",
            Applicability.UNSAFE,
            Edit(target="env", name=PLAN_STREAM, value=None),
        ),
    )


_SPLIT = (
    *LLAMA31_8B_EAGLE3_CHAIN,
    "--prefill-attention-backend",
    "triton",
    "--decode-attention-backend",
    "fa3",
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB521",
    category=Category.CRASH,
    name="plan-stream-wrapper-verify-fixup",
    summary="SGLANG_ENABLE_OVERLAP_PLAN_STREAM=1 with EAGLE-family SpecV2 and split prefill/decode backends or a "
    "hybrid linear-attention target crashes at the first verify (0.5.4-0.5.16)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`SGLANG_ENABLE_OVERLAP_PLAN_STREAM=1` with EAGLE, EAGLE3, NEXTN or STANDALONE on the SpecV2 (overlap) "
        "worker, off NPU, where the target's attention backend is a wrapper: different typed prefill and decode "
        "backends (`--prefill-attention-backend` / `--decode-attention-backend`, each else `--attention-backend`), "
        "or a hybrid linear-attention target SGLang wraps (config.json architectures[0] Qwen3-Next, Qwen3.5, "
        "Nemotron-H, Falcon-H1, Jet-Nemotron, LFM2) from 0.5.10rc0 with mamba extra_buffer tracking (typed, or "
        "'auto' resolving to it from 0.5.14) or `--disable-radix-cache`, SGLang 0.5.4 to 0.5.16. MiniMax-M3 (AB530) "
        "and DeepSeek-V4 targets have their own backends; a backend left to SGLang keeps it quiet, and so does a "
        "hybrid linear target whose strategy refuses speculation or turns the overlap scheduler off.",
        why="With the variable set, the V2 worker opens a plan stream (0.5.4 speculative/eagle_worker_v2.py:47-55, "
        ":134; 0.5.16 speculative/spec_utils.py:844-853) and after each draft calls "
        "`target_worker.model_runner.attn_backend.update_verify_buffers_to_fill_after_draft` (0.5.4 "
        "eagle_worker_v2.py:598-610; 0.5.16 speculative/eagle_worker_common.py:503-529). Different prefill and "
        "decode backends build a `HybridAttnBackend` (0.5.16 model_executor/model_runner_components/"
        "attention_backend_setup.py:166, :182-200), and a hybrid linear-attention target is wrapped in "
        "`HybridLinearAttnBackend` off NPU (0.5.16 layers/attention/attention_registry.py:285-333, "
        "configs/hybrid_arch.py:48-77, 113-123). Neither class overrides the method from 0.5.4 "
        "(hybrid_attn_backend.py:13, hybrid_linear_attn_backend.py:528) to 0.5.16 (hybrid_attn_backend.py:12, "
        "hybrid_linear_attn_backend.py:818), so AttentionBackend's default raises NotImplementedError (0.5.4 "
        "base_attn_backend.py:75; 0.5.16 :156-165). 0.5.17 forwards it to the verify backend and to the "
        "full-attention and linear children (hybrid_attn_backend.py:142-148, hybrid_linear_attn_backend.py:"
        "1011-1020); there the call reaches the verify backend itself, and fa3 and flashinfer still lack the "
        "method (0.5.17 and 0.5.23 define it only in triton, trtllm_mha, aiter and model-specific backends), so the "
        "upgrade helps only with such a verify backend. 0.5.3.post3 has no such variable. The V1 worker opens no "
        "plan stream.",
        fix="Unset `SGLANG_ENABLE_OVERLAP_PLAN_STREAM` (default off), or upgrade to 0.5.17 and run target verify "
        "(for a hybrid linear target, its full attention) on triton or trtllm_mha.",
        fix_safety="Unsafe: without the plan stream the next batch's metadata is planned after the draft, not beside "
        "it (slower).",
    ),
    bad=Example(
        argv=_SPLIT,
        target={"architectures": ("LlamaForCausalLM",)},
        env={PLAN_STREAM: "1", "SGLANG_ENABLE_SPEC_V2": "1"},
        gpu="H100",
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=_SPLIT,
        target={"architectures": ("LlamaForCausalLM",)},
        env={PLAN_STREAM: "1", "SGLANG_ENABLE_SPEC_V2": "1"},
        gpu="H100",
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.3.post3: python/sglang/srt/environ.py (no SGLANG_ENABLE_OVERLAP_PLAN_STREAM)",
        "sglang 0.5.4: python/sglang/srt/speculative/eagle_worker_v2.py:47-55,134,598-610",
        "sglang 0.5.4: python/sglang/srt/layers/attention/hybrid_attn_backend.py:13; hybrid_linear_attn_backend.py:528; base_attn_backend.py:75",
        "sglang 0.5.16: python/sglang/srt/speculative/eagle_worker_common.py:503-529; speculative/spec_utils.py:844-853",
        "sglang 0.5.16: python/sglang/srt/model_executor/model_runner_components/attention_backend_setup.py:166,182-200",
        "sglang 0.5.16: python/sglang/srt/layers/attention/attention_registry.py:285-333; configs/hybrid_arch.py:48-77,113-123",
        "sglang 0.5.16: python/sglang/srt/layers/attention/hybrid_attn_backend.py:12; hybrid_linear_attn_backend.py:818; base_attn_backend.py:156-165",
        "sglang 0.5.17: python/sglang/srt/layers/attention/hybrid_attn_backend.py:142-148; hybrid_linear_attn_backend.py:1011-1020",
    ),
    sglang_versions=">=0.5.4,<=0.5.16",
    log_signatures=(
        r"base_attn_backend\.py.*in update_verify_buffers_to_fill_after_draft",
    ),
)
