"""MM216 megamoe-decode-graph-token-budget."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.resolution.cuda_graph import graph_max_flag
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.sglang_facts.changes import MEGA_MOE_BUDGET_POOL_CAP

VAR = "SGLANG_OPT_DEEPGEMM_MEGA_MOE_NUM_MAX_TOKENS_PER_RANK"
DEFAULT_CAPACITY = (
    8192  # EnvInt(8192), 0.5.21 environ.py:1287 to 0.5.23 environ.py:1470
)
# MoE blocks with no fused-MoE fallback under megamoe: the budget applies to them (0.5.21
# arg_groups/mega_moe_hook.py:51-63; the same set in 0.5.23 :52-64).
NO_FALLBACK_ARCHITECTURES = frozenset(
    {
        "DeepseekV4ForCausalLM",
        "InternS2PreviewForConditionalGeneration",
        "MellumForCausalLM",
        "Qwen2MoeForCausalLM",
        "Qwen3MoeForCausalLM",
        "Qwen3NextForCausalLM",
        "Qwen3VLMoeForConditionalGeneration",
        "Qwen3_5MoeForCausalLM",
        "Qwen3_5MoeForConditionalGeneration",
    }
)
# NVFP4 experts are repacked into the mega layout, so they take the budget too (:66-73); specguard reads
# only the --quantization flag for this (config.json's quant_algo is not a fact it reads).
NVFP4_QUANTIZATION = frozenset({"modelopt_fp4", "minimax_m3_nvfp4"})
# From this release the decode graph bucket is capped by the request pool per attention-DP rank
# (0.5.23 mega_moe_hook.py:94-106); 0.5.21 and 0.5.22 take the decode graph max bs as it is (:92-98).
REQUEST_POOL_CAP = MEGA_MOE_BUDGET_POOL_CAP

QWEN3_MOE_DFLASH_MEGAMOE = (
    "--model-path",
    "Qwen/Qwen3-30B-A3B",
    "--tp-size",
    "8",
    "--speculative-algorithm",
    "DFLASH",
    "--speculative-draft-model-path",
    "d",
    "--speculative-num-draft-tokens",
    "16",
    "--moe-a2a-backend",
    "megamoe",
)


def _ceil_align(value: int, step: int) -> int:
    return -(-value // step) * step


def decode_tokens_per_rank(ctx: CheckContext) -> tuple[int, int] | None:
    """(graph requests, tokens per request) as mega_moe_decode_tokens_per_rank counts them."""
    graph_bs = ctx.resolution.cuda_graph_max_bs
    tokens = ctx.resolution.num_draft_tokens
    if graph_bs is None or tokens is None:
        return None
    mrr = ctx.resolution.max_running_requests
    if REQUEST_POOL_CAP.present_in(ctx.version) and mrr is not None:
        dp = ctx.resolution.attention_dp_size
        graph_bs = min(
            graph_bs,
            _ceil_align(mrr // dp, max(1, (ctx.spec.get("tp_size") or 1) // dp)),
        )
    return graph_bs, tokens


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or ctx.spec.last_value("--moe-a2a-backend") != "megamoe":
        return
    # ROCm skips the check (mega_moe_hook.py:105-106); an unknown GPU leaves the platform unknown.
    if (
        ctx.env.gpu is None
        or ctx.env.gpu.platform != "cuda"
        or ctx.spec.last_value("--disaggregation-mode") == "prefill"
    ):
        return
    arch = ctx.target.architecture if ctx.target is not None else None
    if (
        arch not in NO_FALLBACK_ARCHITECTURES
        and ctx.spec.last_value("--quantization") not in NVFP4_QUANTIZATION
    ):
        return
    value = ctx.spec.env_value(VAR)
    try:
        capacity = DEFAULT_CAPACITY if value is None else int(value)
    except ValueError:
        return
    counted = decode_tokens_per_rank(ctx)
    if counted is None or counted[0] * counted[1] <= capacity:
        return
    requests, tokens = counted
    required = requests * tokens
    yield RULE.finding(
        f"--moe-a2a-backend megamoe with {ctx.algorithm} in SGLang {ctx.version}: the largest decode/verify CUDA graph "
        f"runs {requests} requests x {tokens} draft tokens = {required} tokens per rank through MegaMoE, above "
        f"{VAR}={capacity}, so argument handling raises ValueError '... with MegaMoE requires {VAR} to cover the "
        f"largest decode / verify forward on one rank'. Set {VAR}={required}, or lower "
        f"{ctx.flag(graph_max_flag(ctx.version))} to {max(1, capacity // tokens)}",
        flags=("--moe-a2a-backend", "--speculative-num-draft-tokens"),
        fix=fix_of(
            f"raise {VAR} to {required}",
            Applicability.UNSAFE,
            Edit(target="env", name=VAR, value=str(required)),
        ),
    )


RULE = Rule(
    check=check,
    code="MM216",
    category=Category.START,
    name="megamoe-decode-graph-token-budget",
    summary="--moe-a2a-backend megamoe refuses a decode/verify CUDA graph whose batch x draft tokens exceed "
    "SGLANG_OPT_DEEPGEMM_MEGA_MOE_NUM_MAX_TOKENS_PER_RANK (0.5.21+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--moe-a2a-backend megamoe` on CUDA with a speculative algorithm, not a PD prefill node, on a target "
        "whose MoE has no fused fallback (DeepSeek-V4, Qwen2/3 MoE, Qwen3-Next, Qwen3-VL MoE, Qwen3.5 MoE, "
        "InternS2-Preview, Mellum) or with `--quantization modelopt_fp4`, where the decode graph max batch size "
        "(0.5.23: capped by the max running requests per attention-DP rank) times the draft tokens exceeds "
        "SGLANG_OPT_DEEPGEMM_MEGA_MOE_NUM_MAX_TOKENS_PER_RANK (default 8192), SGLang 0.5.21 or later.",
        why="0.5.21 adds the decode/verify term to MegaMoE's token budget: `validate_mega_moe_token_budget` "
        "(arg_groups/mega_moe_hook.py:101-123) raises ValueError when decode cuda-graph max_bs x "
        "speculative_num_draft_tokens exceeds the per-rank capacity; it runs after the speculative hook "
        "(pipeline.py:303-306, `validate_mega_moe_token_budget_for_model` :78-89) for the architectures without a "
        "fallback or NVFP4 experts, and not on ROCm. 0.5.20 checked only the prefill budget "
        "(deepseek_v4_hook.py:21-100). 0.5.23 caps the graph bucket by ceil_align(max_running_requests // "
        "attn_dp_size, tp_size // attn_dp_size) (mega_moe_hook.py:94-106, :160-182).",
        fix="Raise SGLANG_OPT_DEEPGEMM_MEGA_MOE_NUM_MAX_TOKENS_PER_RANK to the required count, or lower the "
        "decode CUDA-graph max batch size or the draft tokens.",
        fix_safety="Unsafe: a larger MegaMoE buffer takes GPU memory from the KV cache.",
    ),
    bad=Example(
        argv=QWEN3_MOE_DFLASH_MEGAMOE,
        target={"architectures": ["Qwen3MoeForCausalLM"]},
        env={VAR: "4096"},
        gpu="H200",
        sglang_version="0.5.21",
    ),
    good=Example(
        argv=QWEN3_MOE_DFLASH_MEGAMOE,
        target={"architectures": ["Qwen3MoeForCausalLM"]},
        gpu="H200",
        sglang_version="0.5.21",
    ),
    sources=(
        "sglang 0.5.20: python/sglang/srt/arg_groups/deepseek_v4_hook.py:21-100 (prefill budget only)",
        "sglang 0.5.21: python/sglang/srt/arg_groups/mega_moe_hook.py:51-123",
        "sglang 0.5.21: python/sglang/srt/arg_groups/pipeline.py:303-306; environ.py:1287",
        "sglang 0.5.23: python/sglang/srt/arg_groups/mega_moe_hook.py:52-106,160-182",
    ),
    sglang_versions=">=0.5.21",
    log_signatures=(
        r"with MegaMoE requires SGLANG_OPT_DEEPGEMM_MEGA_MOE_NUM_MAX_TOKENS_PER_RANK to cover the largest decode",
    ),
)
