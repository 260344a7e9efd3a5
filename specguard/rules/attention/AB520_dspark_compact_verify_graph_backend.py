"""AB520 dspark-compact-verify-graph-backend."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.AB395_trtllm_mha_xqa_verify_without_mask import (
    PREFILL_ON_XQA_GPUS,
    XQA_MAJORS,
)
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    is_mla_target,
    verify_backend,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.spec_params._ragged_verify import RAGGED, unset_ragged
from specguard.sglang_facts.architectures import (
    DSV4_ARCHITECTURES,
    MINIMAX_M3_SPARSE_ARCHITECTURES,
)

# SGLang says (0.5.16 layers/attention/flashinfer_backend.py:722-725):
# "FlashInfer does not support ragged verify in cuda graph; disable SGLANG_RAGGED_VERIFY_MODE for this configuration."
# and (0.5.16 layers/attention/trtllm_mha_backend.py:721-725):
# "Compact ragged verify (variable-length cum_seq_lens_q) requires the trtllm-gen decode kernel; the xqa impl
# (sm90 / sm120) rejects it. Disable SGLANG_RAGGED_VERIFY_MODE for this configuration."
# When set, the graph runner captures uniform verify layouts (decode_cuda_graph_runner.py:481-485).
FORCE_UNIFORM = "SGLANG_TEST_RAGGED_VERIFY_FORCE_UNIFORM_CAPTURE"
# Native FP4 KV: from 0.5.23 SGLang may move target verify to the decode backend itself (kv_cache_hook.py:232-250).
FP4_KV = ("nvfp4", "fp4_mx_block16")
# Flags that turn the decode graphs off, or that set them in a way not read here (quiet).
GRAPH_OFF_FLAGS = ("--disable-decode-cuda-graph", "--cuda-graph-config")
# Each refused by the same graph runner first, with its own message (decode_cuda_graph_runner.py:294-305).
EARLIER_REFUSALS = (
    "--enable-two-batch-overlap",
    "--enable-lora",
    "--lora-paths",
    "--disable-cuda-graph-padding",
)


def decode_graphs_captured(ctx: CheckContext) -> bool:
    """Whether the target captures decode (verify) graphs: no flag turns them off."""
    if ctx.spec.get("disable_cuda_graph") or any(
        ctx.spec.has(f) for f in GRAPH_OFF_FLAGS
    ):
        return False
    return ctx.spec.last_value("--cuda-graph-backend-decode") != "disabled"


def _refused_on(ctx: CheckContext, flag: str, backend: str) -> bool:
    """Whether the verify backend rejects the ragged layout the compact capture hands it."""
    if backend == "flashinfer":
        return True  # FlashInferAttnBackend for an MHA target, on every GPU
    gpu = ctx.env.gpu
    if backend != "trtllm_mha" or gpu is None or gpu.compute_capability is None:
        return False
    if gpu.compute_capability[0] not in XQA_MAJORS:
        return False  # SM100: the trtllm-gen kernel takes ragged layouts
    # A trtllm_mha prefill backend off SM100 is refused at argument time before 0.5.19.
    return flag == "--decode-attention-backend" or PREFILL_ON_XQA_GPUS.present_in(
        ctx.version
    )


def _applies(ctx: CheckContext) -> bool:
    target = ctx.target
    if (
        ctx.algorithm != "DSPARK"
        or ctx.spec.env_value(RAGGED) != "compact"
        or ctx.spec.env_flag(FORCE_UNIFORM)
    ):
        return False
    if (
        target is None
        or target.architecture is None
        or target.architecture in DSV4_ARCHITECTURES
        or target.architecture in MINIMAX_M3_SPARSE_ARCHITECTURES
    ):
        return False  # their own verify backends (MiniMax-M3: its sparse wrapper, QT305); unknown target: quiet
    if is_mla_target(ctx) or (
        ctx.env.gpu is not None and ctx.env.gpu.platform != "cuda"
    ):
        return False  # flashinfer on an MLA target is FlashInferMLAAttnBackend, another class
    if ctx.spec.get("kv_cache_dtype") in FP4_KV:
        return False
    if ctx.spec.last_value("--disaggregation-mode") == "prefill":
        return False  # a PD prefill server's decode graphs are not read here
    return decode_graphs_captured(ctx) and not any(
        ctx.spec.has(f) for f in EARLIER_REFUSALS
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not _applies(ctx):
        return
    backend, flag = verify_backend(ctx)
    if flag is None or backend is None or not _refused_on(ctx, flag, backend):
        return  # SGLang's default backend for this launch is not claimed: only a typed one
    where = (
        ""
        if backend == "flashinfer" or ctx.env.gpu is None
        else f" on {ctx.env.gpu.name} (SM{ctx.env.gpu.sm})"
    )
    yield RULE.finding(
        f"DSPARK with {RAGGED}=compact captures its target-verify CUDA graphs with ragged (per-request) verify "
        f"layouts, and {ctx.flag(flag)} {backend} runs target verify{where}: SGLang {ctx.version}'s {backend} "
        "backend raises NotImplementedError for a ragged verify layout, so the server fails while capturing the "
        f"target's CUDA graphs, before it serves. Unset {RAGGED} (static is the default), or verify on fa3 "
        "(or trtllm_mha on SM100)",
        flags=(flag, "--speculative-algorithm"),
        fix=unset_ragged(),
    )


QWEN3_8B_DSPARK = (
    "--model-path",
    "Qwen/Qwen3-8B",
    "--speculative-algorithm",
    "DSPARK",
    "--speculative-draft-model-path",
    "/ckpt/qwen3-8b-dspark",
)
QWEN3_FACTS = {"architectures": ("Qwen3ForCausalLM",)}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB520",
    category=Category.START,
    name="dspark-compact-verify-graph-backend",
    summary="DSPARK with SGLANG_RAGGED_VERIFY_MODE=compact verifying on flashinfer, or on trtllm_mha on SM90/SM120, "
    "fails target CUDA-graph capture (0.5.16+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with `SGLANG_RAGGED_VERIFY_MODE=compact` on a known non-MLA, "
        "non-DeepSeek-V4, non-MiniMax-M3 target whose target verify runs on a typed flashinfer backend, or on a typed trtllm_mha "
        "backend on a known SM90/SM120 GPU (the verify phase is the prefill backend, or the decode backend with "
        "`--speculative-attention-mode decode`, else `--attention-backend`; a trtllm_mha prefill backend counts "
        "there from 0.5.19), with decode CUDA graphs on. Quiet with `--disable-cuda-graph`, "
        "`--disable-decode-cuda-graph`, `--cuda-graph-backend-decode disabled` or `--cuda-graph-config`, with a "
        "native FP4 KV cache, with two-batch overlap, LoRA or `--disable-cuda-graph-padding` (refused first "
        "by the same runner), and on a `--disaggregation-mode prefill` server.",
        why="0.5.16 added ragged verify. For DSPARK in compact mode the target's decode CUDA-graph runner captures "
        "TARGET_VERIFY graphs keyed by token count (`ragged_verify_compact_graphs_enabled`, "
        "model_executor/runner/decode_cuda_graph_runner.py:118-123, :283-287) and hands every captured batch a "
        "ragged layout (`_capture_ragged_verify_layout` :481-499, `get_spec_info` :1356), then calls "
        "`attn_backend.init_forward_metadata_out_graph(forward_batch, in_capture=True)` (:942). "
        "`FlashInferAttnBackend` raises there for any ragged target verify (layers/attention/flashinfer_backend.py:"
        "717-725), and `TRTLLMHAAttnBackend` raises through `_assert_ragged_verify_supported` when it runs the XQA "
        "implementation on SM90/SM120 (trtllm_mha_backend.py:194, :691-695, :719-725). Both raises are unchanged "
        "in 0.5.23 (flashinfer_backend.py:754-762; trtllm_mha_backend.py:258, :1110-1114, :1177-1183; the runner "
        ":162-167, :397-401, :796-800, :1400, :2131). 0.5.15.post1 has neither DSPARK nor ragged verify. A "
        "DeepSeek-V4 target verifies on its own backend, and flashinfer on an MLA target is the FlashInfer MLA "
        "backend, so both stay quiet. Cap-accept mode captures uniform graphs, so only compact is claimed.",
        fix="Unset `SGLANG_RAGGED_VERIFY_MODE` (static verify), or run target verify on fa3 (trtllm_mha on SM100).",
        fix_safety="Unsafe: the verify schedule changes.",
    ),
    bad=Example(
        argv=(*QWEN3_8B_DSPARK, "--attention-backend", "flashinfer"),
        target=QWEN3_FACTS,
        env={RAGGED: "compact"},
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(*QWEN3_8B_DSPARK, "--attention-backend", "flashinfer"),
        target=QWEN3_FACTS,
        env={RAGGED: "static"},
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/ (no ragged_verify.py, no DSPARK)",
        "sglang 0.5.16: python/sglang/srt/model_executor/runner/decode_cuda_graph_runner.py:118-123,283-305,481-499,942,1356",
        "sglang 0.5.16: python/sglang/srt/layers/attention/flashinfer_backend.py:717-725",
        "sglang 0.5.16: python/sglang/srt/layers/attention/trtllm_mha_backend.py:194,691-695,719-725",
        "sglang 0.5.16: python/sglang/srt/speculative/spec_info.py:130-134 (supports_ragged_verify: DSPARK only)",
        "sglang 0.5.23: python/sglang/srt/model_executor/runner/decode_cuda_graph_runner.py:162-167,397-401,796-800,1400,2131",
        "sglang 0.5.23: python/sglang/srt/layers/attention/flashinfer_backend.py:754-762",
        "sglang 0.5.23: python/sglang/srt/layers/attention/trtllm_mha_backend.py:258,1110-1114,1177-1183",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"FlashInfer does not support ragged verify in cuda graph",
        r"Compact ragged verify \(variable-length cum_seq_lens_q\)\s+requires the trtllm-gen decode kernel",
    ),
)
