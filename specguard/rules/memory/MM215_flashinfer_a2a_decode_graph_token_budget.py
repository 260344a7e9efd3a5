"""MM215 flashinfer-a2a-decode-graph-token-budget."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.resolution.cuda_graph import (
    default_chunked_prefill,
    gpu_visible_mib,
    graph_max_flag,
)
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.memory.MM213_deepep_v2_decode_graph_token_budget import (
    decode_graph_requests_per_rank,
)

VAR = "SGLANG_FLASHINFER_NUM_MAX_DISPATCH_TOKENS_PER_RANK"
# Unset, the workspace holds the prefill buffer (the chunked-prefill size), at least this many tokens
# (0.5.22 arg_groups/overrides.py:1833-1841).
FLOOR_TOKENS = 4096

# DeepSeek-V3 over 8 GPUs drafting with its own MTP layer, experts exchanged by FlashInfer's all-to-all.
DEEPSEEK_V3_NEXTN_FLASHINFER_A2A = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp-size",
    "8",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    "--moe-a2a-backend",
    "flashinfer",
)


def workspace_tokens(ctx: CheckContext) -> int | None:
    """The per-rank workspace SGLang sizes (flashinfer_a2a_max_dispatch_tokens_per_rank): the variable,
    else max(prefill buffer, 4096). None when that cannot be known here."""
    value = ctx.spec.env_value(VAR)
    if value is not None:
        try:
            return int(value)
        except ValueError:
            return None
    # Dynamic chunking under pipeline parallelism grows the prefill buffer (overrides.py:1825-1826).
    if (ctx.spec.get("pp_size") or 1) > 1 and ctx.spec.has("--enable-dynamic-chunking"):
        return None
    chunk = ctx.spec.get("chunked_prefill_size")
    if chunk is None:
        if ctx.env.gpu is None:
            return None
        chunk = default_chunked_prefill(gpu_visible_mib(ctx.env))
    return max(
        chunk, FLOOR_TOKENS
    )  # a non-positive size means no chunking: the floor holds


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or ctx.spec.last_value("--moe-a2a-backend") != "flashinfer":
        return
    if (
        ctx.spec.get("disable_cuda_graph")
        or ctx.spec.last_value("--disaggregation-mode") == "prefill"
    ):
        return
    if ctx.spec.has(
        "--speculative-adaptive"
    ):  # sized by the largest candidate, not resolved here
        return
    tokens = ctx.resolution.num_draft_tokens
    requests = decode_graph_requests_per_rank(ctx)
    capacity = workspace_tokens(ctx)
    if (
        tokens is None
        or requests is None
        or capacity is None
        or requests * tokens <= capacity
    ):
        return
    required = requests * tokens
    graph_flag = graph_max_flag(ctx.version)
    yield RULE.finding(
        f"--moe-a2a-backend flashinfer with {ctx.algorithm} in SGLang {ctx.version}: the largest decode/verify CUDA "
        f"graph sends {requests} requests x {tokens} draft tokens = {required} tokens per rank through the FlashInfer "
        f"all-to-all, above its {capacity}-token workspace, so argument handling raises ValueError 'FlashInfer MoE "
        f"A2A per-rank token budget exceeds its workspace'. Set {VAR}={required}, or lower {ctx.flag(graph_flag)} "
        f"to {max(1, capacity // tokens)}",
        flags=("--moe-a2a-backend", "--speculative-num-draft-tokens"),
        fix=fix_of(
            f"size the workspace for {required} tokens",
            Applicability.UNSAFE,
            Edit(target="env", name=VAR, value=str(required)),
        ),
    )


RULE = Rule(
    check=check,
    code="MM215",
    category=Category.START,
    name="flashinfer-a2a-decode-graph-token-budget",
    summary="--moe-a2a-backend flashinfer refuses a decode/verify CUDA graph whose requests x draft tokens exceed "
    "the per-rank A2A workspace (0.5.22+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--moe-a2a-backend flashinfer` with a speculative algorithm, decode CUDA graphs on and not a PD "
        "prefill node, where the decode graph's max batch size (capped by the max running requests per "
        "attention-DP rank) times the draft tokens per request exceeds the FlashInfer A2A workspace: "
        "SGLANG_FLASHINFER_NUM_MAX_DISPATCH_TOKENS_PER_RANK, else max(chunked-prefill size, 4096), SGLang 0.5.22 or "
        "later. Quiet when the graph max batch size, the chunked-prefill size or the draft-token count is not known.",
        why="0.5.22 sizes the dispatcher workspace from `flashinfer_a2a_max_dispatch_tokens_per_rank` "
        "(arg_groups/overrides.py:1833-1841; token_dispatcher/flashinfer.py:152) and adds "
        "`validate_flashinfer_a2a_token_budget` (moe_hook.py:658-698), run right after the speculative hook "
        "(pipeline.py:293-306): it raises ValueError when the largest prefill chunk, prefill graph or decode/verify "
        "graph (`_decode_graph_dispatch_tokens_per_rank`, :580-596: graph max_bs capped by max_running_requests // "
        "attn_dp_size, times max_speculative_num_draft_tokens) exceeds the workspace. Before 0.5.22 nothing checks "
        "at argument time: 0.5.21's dispatcher sizes the same workspace (token_dispatcher/flashinfer.py:181-190) and "
        "asserts when a forward outgrows it (:446-453), a runtime failure this rule does not date; "
        "`cutedsl_moe_max_num_tokens` (overrides.py:1753-1772) sized only the CuteDSL runner's buffers. 0.5.23 keeps the check "
        "(moe_hook.py:749, overrides.py:1886). The prefill terms are not speculative and not judged here.",
        fix="Set SGLANG_FLASHINFER_NUM_MAX_DISPATCH_TOKENS_PER_RANK to the required count, or lower the decode "
        "CUDA-graph max batch size.",
        fix_safety="Unsafe: a larger workspace takes GPU memory from the KV cache.",
    ),
    bad=Example(
        argv=DEEPSEEK_V3_NEXTN_FLASHINFER_A2A,
        env={VAR: "128"},
        gpu="B200",
        sglang_version="0.5.22",
    ),
    good=Example(
        argv=DEEPSEEK_V3_NEXTN_FLASHINFER_A2A,
        env={VAR: "256"},
        gpu="B200",
        sglang_version="0.5.22",
    ),
    sources=(
        "sglang 0.5.21: python/sglang/srt/layers/moe/token_dispatcher/flashinfer.py:181-190,446-453 (no argument-time check)",
        "sglang 0.5.22: python/sglang/srt/arg_groups/moe_hook.py:580-596,658-698",
        "sglang 0.5.22: python/sglang/srt/arg_groups/overrides.py:1812-1841",
        "sglang 0.5.22: python/sglang/srt/arg_groups/pipeline.py:293-306",
        "sglang 0.5.23: python/sglang/srt/arg_groups/moe_hook.py:656-676,749; arg_groups/overrides.py:1886",
    ),
    sglang_versions=">=0.5.22",
    log_signatures=(r"FlashInfer MoE A2A per-rank token budget exceeds its workspace",),
)
