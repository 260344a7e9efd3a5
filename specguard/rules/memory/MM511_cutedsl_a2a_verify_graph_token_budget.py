"""MM511 cutedsl-a2a-verify-graph-token-budget."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.resolution.cuda_graph import (
    explicit_graph_bs,
    explicit_graph_max_bs,
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

VAR = "SGLANG_FLASHINFER_NUM_MAX_DISPATCH_TOKENS_PER_RANK"
# The per-rank budget when the variable is unset (0.5.13 server_args.py:3472-3474 get_int_env_var(..., 1024);
# 0.5.21 arg_groups/moe_hook.py:628-664 `envs...get() or 1024`).
DEFAULT_TOKENS_PER_RANK = 1024
A2A = "--moe-a2a-backend"
RUNNER = "--moe-runner-backend"
CUTEDSL = "flashinfer_cutedsl"
# Asserted before the budget check (0.5.13 server_args.py:3374-3377): CuteDSL MoE runs modelopt_fp4 only.
CUTEDSL_QUANTIZATION = "modelopt_fp4"
# JSON per-phase graph settings win over the flags (0.5.14 server_args.py:2972-2977); their max_bs is not read here.
GRAPH_CONFIG = "--cuda-graph-config"
# SGLang raises (0.5.13 server_args.py:3476-3494; 0.5.21 arg_groups/moe_hook.py:646-664):
# "FlashInfer MoE A2A with flashinfer_cutedsl requires SGLANG_FLASHINFER_NUM_MAX_DISPATCH_TOKENS_PER_RANK *
# ep_size to cover the largest CuteDSL MoE forward (... tokens)."


def _graph_max_bs(ctx: CheckContext) -> int | None:
    """The decode graph max batch size as typed: a list's largest size wins over the max (0.5.13
    server_args.py:1533-1538; 0.5.14 :3211-3220). None when left to SGLang's GPU-memory default."""
    if ctx.spec.has(GRAPH_CONFIG):
        return None
    given = explicit_graph_bs(ctx.spec)
    return max(given) if given else explicit_graph_max_bs(ctx.spec)


def _tokens_per_rank(ctx: CheckContext) -> int | None:
    value = ctx.spec.env_value(VAR)
    if value is None:
        return DEFAULT_TOKENS_PER_RANK
    try:
        return int(value) or DEFAULT_TOKENS_PER_RANK
    except ValueError:
        return None


def _reaches_the_check(ctx: CheckContext) -> bool:
    """The launch SGLang checks: FlashInfer A2A with the CuteDSL runner, modelopt_fp4, DP attention over every TP
    rank (asserted first, 0.5.13 server_args.py:3567-3571), not a PD decode node, prefill tokens above 0."""
    tp = ctx.spec.get("tp_size") or 1
    return (
        ctx.spec.last_value(A2A) == "flashinfer"
        and ctx.spec.last_value(RUNNER) == CUTEDSL
        and ctx.spec.get("quantization") == CUTEDSL_QUANTIZATION
        and bool(ctx.spec.get("enable_dp_attention"))
        and (ctx.spec.get("dp_size") or 1) == tp
        and ctx.spec.last_value("--disaggregation-mode") != "decode"
        and (ctx.spec.get("max_prefill_tokens") or 1) > 0
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or ctx.spec.has("--speculative-adaptive")
        or not _reaches_the_check(ctx)
    ):
        return
    graph_bs = _graph_max_bs(ctx)
    tokens = ctx.resolution.num_draft_tokens
    per_rank = _tokens_per_rank(ctx)
    if graph_bs is None or tokens is None or per_rank is None:
        return
    ep = ctx.spec.get("tp_size") or 1  # FlashInfer A2A sets ep_size to the TP size
    required = graph_bs * tokens
    if required <= per_rank * ep:
        return
    needed = -(-required // ep)
    yield RULE.finding(
        f"{ctx.flag(A2A)} flashinfer with {ctx.flag(RUNNER)} {CUTEDSL} and {ctx.algorithm} in SGLang {ctx.version}: "
        f"the largest verify CUDA graph routes {graph_bs} requests x {tokens} draft tokens = {required} tokens "
        f"through the CuteDSL MoE, above {VAR} ({per_rank}) x ep_size ({ep}) = {per_rank * ep}, so argument handling "
        "raises ValueError 'FlashInfer MoE A2A with flashinfer_cutedsl requires "
        f"SGLANG_FLASHINFER_NUM_MAX_DISPATCH_TOKENS_PER_RANK * ep_size to cover the largest CuteDSL MoE forward'. "
        f"Set {VAR}={needed} (the prefill bound, {ctx.flag('--max-prefill-tokens')}, must fit too), or lower "
        f"{ctx.flag(graph_max_flag(ctx.version))}",
        flags=(A2A, RUNNER, "--speculative-num-draft-tokens"),
        fix=fix_of(
            f"size the dispatch budget for {required} tokens",
            Applicability.UNSAFE,
            Edit(target="env", name=VAR, value=str(needed)),
        ),
    )


_FP4_DP_ATTENTION_MTP = (
    "--model-path", "nvidia/DeepSeek-R1-0528-FP4", "--tp-size", "4", "--dp-size", "4", "--enable-dp-attention",
    "--quantization", CUTEDSL_QUANTIZATION, A2A, "flashinfer", RUNNER, CUTEDSL,
    "--speculative-algorithm", "NEXTN",
    "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
    "--max-prefill-tokens", "4096",
)  # fmt: skip

RULE = Rule(
    check=check,
    code="MM511",
    category=Category.START,
    name="cutedsl-a2a-verify-graph-token-budget",
    summary="FlashInfer A2A with the CuteDSL MoE runner refuses a verify CUDA graph whose requests x draft tokens "
    "exceed the dispatch budget x ep_size (0.5.13-0.5.21)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--moe-a2a-backend flashinfer --moe-runner-backend flashinfer_cutedsl --quantization modelopt_fp4` "
        "with DP attention over every TP rank, a speculative algorithm (not adaptive), not a PD decode node, and a "
        "typed decode CUDA-graph max batch size (or list) whose largest size times the draft tokens per request "
        "exceeds SGLANG_FLASHINFER_NUM_MAX_DISPATCH_TOKENS_PER_RANK (default 1024) times the TP size, SGLang 0.5.13 "
        "to 0.5.21. Quiet when the graph size is SGLang's default or set by `--cuda-graph-config`.",
        why="0.5.13 adds `_validate_cutedsl_a2a_token_budget` (server_args.py:3460-3494), run right after the "
        "speculative handling (:1017-1022): `cutedsl_moe_max_num_tokens` (:3439-3458) takes the largest of "
        "max_prefill_tokens, the piecewise prefill graph tokens and cuda_graph_max_bs x speculative_num_draft_tokens, "
        "and a ValueError follows when the dispatch budget times ep_size (set to the TP size for FlashInfer A2A, "
        ":3567-3571) is smaller. 0.5.14-0.5.18 read the decode graph's max_bs from cuda_graph_config (0.5.14 "
        "server_args.py:5186-5204, 5221-5252); 0.5.19-0.5.21 move it to arg_groups (0.5.21 overrides.py:1753-1772, "
        "moe_hook.py:628-664; ep_size by overrides.py:1539-1548). 0.5.12.post1 has no such check (its dispatcher "
        "failed at runtime), and 0.5.22 replaces it with the per-rank FlashInfer A2A budget (MM215). The prefill "
        "bounds are not speculative and not judged here.",
        fix="Raise SGLANG_FLASHINFER_NUM_MAX_DISPATCH_TOKENS_PER_RANK to the required tokens per rank, or lower the "
        "decode CUDA-graph max batch size.",
        fix_safety="Unsafe: a larger dispatch workspace takes GPU memory from the KV cache.",
    ),
    bad=Example(
        argv=(*_FP4_DP_ATTENTION_MTP, "--cuda-graph-max-bs", "1536"),
        gpu="B200",
        sglang_version="0.5.13",
    ),
    good=Example(
        argv=(*_FP4_DP_ATTENTION_MTP, "--cuda-graph-max-bs", "1024"),
        gpu="B200",
        sglang_version="0.5.13",
    ),
    sources=(
        "sglang 0.5.12.post1: python/sglang/srt/server_args.py (no cutedsl_moe_max_num_tokens)",
        "sglang 0.5.13: python/sglang/srt/server_args.py:1017-1022,1533-1538,3374-3377,3439-3494,3567-3571",
        "sglang 0.5.14: python/sglang/srt/server_args.py:2959-2977,3211-3220,5186-5252",
        "sglang 0.5.21: python/sglang/srt/arg_groups/overrides.py:1539-1548,1753-1772",
        "sglang 0.5.21: python/sglang/srt/arg_groups/moe_hook.py:628-664",
        "sglang 0.5.22: python/sglang/srt/arg_groups/moe_hook.py (the check replaced by validate_flashinfer_a2a_token_budget)",
    ),
    sglang_versions=">=0.5.13,<=0.5.21",
    log_signatures=(
        r"FlashInfer MoE A2A with flashinfer_cutedsl requires SGLANG_FLASHINFER_NUM_MAX_DISPATCH_TOKENS_PER_RANK",
    ),
)
