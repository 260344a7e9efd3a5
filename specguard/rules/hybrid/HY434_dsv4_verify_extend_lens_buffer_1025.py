"""HY434 dsv4-verify-extend-lens-buffer-1025."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)

# DeepseekV4AttnBackend.init_forward_metadata_target_verify builds its extend-length buffer once as
# torch.tensor([num_draft_tokens] * 1025) and slices [: len(seq_lens)] (0.5.15.post1
# layers/attention/deepseek_v4_backend.py:713-717): a verify batch of more requests gets 1025 entries.
BUFFER_REQUESTS = 1025
ENV = "SGLANG_PREP_IN_CUDA_GRAPH"
DSV4_ARCHITECTURE = "DeepseekV4ForCausalLM"


def requests_per_batch(ctx: CheckContext) -> tuple[int, int] | None:
    """(requests one rank's verify batch can hold, the divisor applied) from an explicit --max-running-requests:
    attention DP ranks and pipeline micro-batches each take their share (0.5.15.post1
    model_executor/pool_configurator.py:436, managers/scheduler.py:912)."""
    running = ctx.spec.get("max_running_requests")
    if running is None:
        return None  # the DeepSeek-V4 default is 256 (arg_groups/deepseek_v4_hook.py:49-52)
    divisor = (
        (ctx.spec.get("dp_size") or 1) if ctx.spec.get("enable_dp_attention") else 1
    )
    divisor *= ctx.spec.get("pp_size") or 1
    return running // divisor, divisor


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "EAGLE"
        or ctx.target is None
        or ctx.target.architecture != DSV4_ARCHITECTURE
    ):
        return
    if ctx.spec.env_value(ENV) is not None and not ctx.spec.env_flag(ENV):
        return
    if ctx.env.gpu is not None and ctx.env.gpu.platform != "cuda":
        return  # ROCm builds verify metadata eagerly from 0.5.13; before that it is unknown whether V4 ran there
    per_batch = requests_per_batch(ctx)
    if per_batch is None or per_batch[0] <= BUFFER_REQUESTS:
        return
    requests, divisor = per_batch
    yield RULE.finding(
        f"{ctx.flag('--max-running-requests')} lets a DeepSeek-V4 verify batch hold {requests} requests per rank, "
        f"and SGLang {ctx.version} with {ENV} on (the default) gives target verify an extend-length buffer of "
        f"{BUFFER_REQUESTS} entries: once a batch holds more requests, the compressor metadata kernel reads the "
        "lengths of the requests past the 1025th out of bounds, so their compressed KV is written to wrong slots "
        f"(or the read faults). Keep the requests per rank at {BUFFER_REQUESTS} or fewer, set {ENV}=0, or use "
        "SGLang 0.5.16 or later",
        flags=("--max-running-requests", "--speculative-algorithm"),
        fix=set_flags(
            f"cap the requests per rank at {BUFFER_REQUESTS}",
            Applicability.UNSAFE,
            max_running_requests=BUFFER_REQUESTS * divisor,
        ),
    )


_DSV4_MTP = (
    "--model-path",
    "deepseek-ai/DeepSeek-V4-Flash",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)
_DSV4_TARGET = {"architectures": (DSV4_ARCHITECTURE,)}

RULE = Rule(
    check=check,
    code="HY434",
    category=Category.WRONG_OUTPUT,
    name="dsv4-verify-extend-lens-buffer-1025",
    summary="DeepSeek-V4 MTP verify batches above 1025 requests per rank read their extend lengths past a "
    "1025-entry buffer (0.5.12-0.5.15.post1)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="EAGLE/NEXTN (MTP) on a DeepseekV4ForCausalLM target (CUDA, or GPU unknown), `SGLANG_PREP_IN_CUDA_GRAPH` unset or true, and "
        "an explicit `--max-running-requests` that lets one rank's batch hold more than 1025 requests (divided by "
        "`--dp-size` under `--enable-dp-attention`, and by `--pp-size`), SGLang 0.5.12 to 0.5.15.post1.",
        why="With SGLANG_PREP_IN_CUDA_GRAPH (EnvBool(True), 0.5.12 environ.py:633, 0.5.15.post1 :912) the target "
        "verify metadata takes `extend_seq_lens = self.extend_seq_lens_buffer[: len(seq_lens)]` from a buffer made "
        "once as `torch.tensor([num_draft_tokens] * 1025)` (0.5.12 layers/attention/deepseek_v4_backend.py:"
        "499-506; 0.5.15.post1 :706-717), and hands it to create_paged_compressor_data "
        "(layers/attention/dsv4/compressor.py:295-307), whose Triton kernel reads one extend length per request "
        "for the whole batch (jit_kernel/dsv4/attn.py:163-200). A batch of more than 1025 requests thus reads "
        "past the buffer. 0.5.16 sizes the buffer by the request pool (req_to_token.shape[0], "
        "deepseek_v4_backend.py:538-552) and fills [:bs] (:814-816). 0.5.11 has no DeepSeek-V4 backend. The "
        "DeepSeek-V4 default of 256 running requests (arg_groups/deepseek_v4_hook.py:49-52) stays below it. "
        "Only the CUDA backend has the buffer: from 0.5.13 ROCm gets DeepseekV4HipRadixBackend, which builds "
        "verify metadata eagerly whatever the variable (0.5.13 layers/attention/attention_registry.py:127-146, "
        "deepseek_v4_backend_hip_radix.py), and from 0.5.14 Ascend its own backend; a known non-CUDA GPU is "
        "left alone.",
        fix="Cap `--max-running-requests` at 1025 per rank, set `SGLANG_PREP_IN_CUDA_GRAPH=0`, or upgrade to 0.5.16.",
        fix_safety="Unsafe: fewer requests run at once.",
    ),
    bad=Example(
        argv=(*_DSV4_MTP, "--max-running-requests", "2048"),
        target=_DSV4_TARGET,
        sglang_version="0.5.15.post1",
    ),
    good=Example(
        argv=(*_DSV4_MTP, "--max-running-requests", "1024"),
        target=_DSV4_TARGET,
        sglang_version="0.5.15.post1",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/layers/attention/ (no deepseek_v4_backend.py)",
        "sglang 0.5.12: python/sglang/srt/layers/attention/deepseek_v4_backend.py:499-506; python/sglang/srt/environ.py:633",
        "sglang 0.5.15.post1: python/sglang/srt/layers/attention/deepseek_v4_backend.py:706-717; python/sglang/srt/layers/attention/dsv4/compressor.py:295-307; python/sglang/jit_kernel/dsv4/attn.py:163-200; python/sglang/srt/model_executor/pool_configurator.py:436",
        "sglang 0.5.13: python/sglang/srt/layers/attention/attention_registry.py:127-146 (ROCm: DeepseekV4HipRadixBackend)",
        "sglang 0.5.15.post1: python/sglang/srt/layers/attention/deepseek_v4_backend_hip_radix.py:583-605 (eager verify metadata)",
        "sglang 0.5.16: python/sglang/srt/layers/attention/deepseek_v4_backend.py:538-552, 814-816",
    ),
    sglang_versions=">=0.5.12,<0.5.16",
)
