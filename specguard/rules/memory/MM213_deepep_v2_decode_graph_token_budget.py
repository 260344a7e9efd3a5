"""MM213 deepep-v2-decode-graph-token-budget."""

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
from specguard.sglang_facts.changes import DEEPEP_V2_BUDGET_BY_ATTN_DP_SIZE

VAR = "SGLANG_DEEPEP_V2_NUM_MAX_DISPATCH_TOKENS_PER_RANK"
DEFAULT_CAPACITY = 128  # EnvInt(128), 0.5.19 environ.py:1107 to 0.5.23 environ.py:1441
# From this release the per-rank request pool divides by --attn-dp-size's resolved width (0.5.22
# moe_hook.py:580-596 `view.attn_dp_size`); before, by --dp-size under --enable-dp-attention.
ATTN_DP_SIZE_DIVISOR = DEEPEP_V2_BUDGET_BY_ATTN_DP_SIZE

# DeepSeek-V3 over 8 GPUs drafting with its own MTP layer, the DeepEP v2 all-to-all on the target only.
DEEPSEEK_V3_NEXTN_DEEPEP_V2 = (
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
    "deepep_v2",
    "--speculative-moe-a2a-backend",
    "none",
)


def _capacity(ctx: CheckContext) -> int | None:
    value = ctx.spec.env_value(VAR)
    if value is None:
        return DEFAULT_CAPACITY
    try:
        return int(value)
    except ValueError:
        return None  # SGLang fails to read it anyway; not this rule's to judge


def decode_graph_requests_per_rank(ctx: CheckContext) -> int | None:
    """The requests of the largest decode/verify CUDA graph on one DP rank, as the budget check
    counts them (0.5.19 moe_hook.py:399-414): the graph max bs, capped by the max running
    requests per attention-DP rank. None when the graph max bs is not known."""
    graph_bs = ctx.resolution.cuda_graph_max_bs
    if graph_bs is None:
        return None
    mrr = ctx.resolution.max_running_requests
    if mrr is not None:
        if ATTN_DP_SIZE_DIVISOR.present_in(ctx.version):
            dp = ctx.resolution.attention_dp_size
        else:
            dp = (
                (ctx.spec.get("dp_size") or 1)
                if ctx.spec.get("enable_dp_attention")
                else 1
            )
        graph_bs = min(graph_bs, max(1, mrr // dp))
    return graph_bs


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or ctx.spec.last_value("--moe-a2a-backend") != "deepep_v2":
        return
    # No decode graph on a PD prefill node or with CUDA graphs off; adaptive sizes its verify
    # graphs by the largest candidate, which the resolution does not give.
    if (
        ctx.spec.get("disable_cuda_graph")
        or ctx.spec.last_value("--disaggregation-mode") == "prefill"
    ):
        return
    if ctx.spec.has("--speculative-adaptive"):
        return
    tokens = ctx.resolution.num_draft_tokens
    requests = decode_graph_requests_per_rank(ctx)
    capacity = _capacity(ctx)
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
        f"--moe-a2a-backend deepep_v2 with {ctx.algorithm} in SGLang {ctx.version}: the largest decode/verify CUDA "
        f"graph sends {requests} requests x {tokens} draft tokens = {required} tokens per rank through DeepEP v2, "
        f"above {VAR}={capacity}, so argument handling raises ValueError 'DeepEP v2 per-rank decode CUDA graph "
        f"exceeds {VAR}'. Set {VAR}={required}, or lower {ctx.flag(graph_flag)} to {max(1, capacity // tokens)}",
        flags=("--moe-a2a-backend", "--speculative-num-draft-tokens"),
        fix=fix_of(
            f"raise {VAR} to {required}",
            Applicability.UNSAFE,
            Edit(target="env", name=VAR, value=str(required)),
        ),
    )


RULE = Rule(
    check=check,
    code="MM213",
    category=Category.START,
    name="deepep-v2-decode-graph-token-budget",
    summary="--moe-a2a-backend deepep_v2 refuses a decode/verify CUDA graph whose requests x draft tokens exceed "
    "SGLANG_DEEPEP_V2_NUM_MAX_DISPATCH_TOKENS_PER_RANK (0.5.19+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--moe-a2a-backend deepep_v2` with a speculative algorithm, decode CUDA graphs on and not a PD prefill "
        "node, where the decode graph's max batch size (capped by the max running requests per attention-DP rank) "
        "times the draft tokens per request exceeds SGLANG_DEEPEP_V2_NUM_MAX_DISPATCH_TOKENS_PER_RANK (default "
        "128), SGLang 0.5.19 or later. Quiet when the graph max batch size, the draft-token count (DFLASH's comes "
        "from the draft config) or the adaptive maximum is not known.",
        why="0.5.19 added the deepep_v2 backend with `validate_deepep_v2_dispatch_token_budget` (arg_groups/"
        "moe_hook.py:379-423), run at the end of argument resolution (pipeline.py:368): it takes the decode graph "
        "max_bs, caps it by max_running_requests // (dp_size under attention DP), multiplies by "
        "max_speculative_num_draft_tokens and raises ValueError above the per-rank capacity (environ.py:1107, "
        "EnvInt(128)). Speculation resets max_running_requests to 48 when unset (speculative_hook.py:319-323), so "
        "without attention DP a 4-token chain already needs 192. 0.5.22 moves the arithmetic into "
        "`_decode_graph_dispatch_tokens_per_rank` with `view.attn_dp_size`; 0.5.23 keeps it (moe_hook.py:656-706). "
        "0.5.18 has no deepep_v2 backend.",
        fix="Raise SGLANG_DEEPEP_V2_NUM_MAX_DISPATCH_TOKENS_PER_RANK to the required count (a larger per-rank "
        "buffer), or lower the decode CUDA-graph max batch size.",
        fix_safety="Unsafe: a larger DeepEP v2 buffer takes GPU memory from the KV cache.",
    ),
    bad=Example(argv=DEEPSEEK_V3_NEXTN_DEEPEP_V2, gpu="H200", sglang_version="0.5.19"),
    good=Example(
        argv=DEEPSEEK_V3_NEXTN_DEEPEP_V2,
        env={VAR: "256"},
        gpu="H200",
        sglang_version="0.5.19",
    ),
    sources=(
        "sglang 0.5.18: python/sglang/srt/server_args.py (no deepep_v2 a2a backend)",
        "sglang 0.5.19: python/sglang/srt/arg_groups/moe_hook.py:379-423",
        "sglang 0.5.19: python/sglang/srt/arg_groups/pipeline.py:366-368",
        "sglang 0.5.19: python/sglang/srt/environ.py:1107",
        "sglang 0.5.19: python/sglang/srt/arg_groups/speculative_hook.py:319-323 (max_running_requests 48)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/moe_hook.py:656-706; environ.py:1441",
    ),
    sglang_versions=">=0.5.19",
    log_signatures=(
        r"DeepEP v2 per-rank decode CUDA graph exceeds SGLANG_DEEPEP_V2_NUM_MAX_DISPATCH_TOKENS_PER_RANK",
    ),
)
