"""PL008 multi-node-inconsistent."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.spec_params._shared import attn_dp_size
from specguard.sglang_facts.changes import ATTN_DP_SIZE_FLAG


def check(ctx: CheckContext) -> Iterator[Finding]:
    spec = ctx.spec
    nnodes = spec.get("nnodes") or 1
    rank = spec.get("node_rank")
    tp = spec.get("tp_size") or 1
    pp = spec.get("pp_size") or 1
    nn, nr, addr = ctx.flag("--nnodes"), ctx.flag("--node-rank"), ctx.flag("--dist-init-addr")
    if nnodes > 1 and spec.get("dist_init_addr") is None:
        yield RULE.finding(
            f"{nn} {nnodes} without {addr}: the nodes have no common rendezvous address and hang or fail at "
            f"start-up. Give every node the same {addr} HOST:PORT (node 0's address)",
            flags=("--nnodes", "--dist-init-addr"),
        )
    if rank is not None and not 0 <= rank < nnodes:
        yield RULE.finding(
            f"{nr} {rank} is outside 0..{nnodes - 1} for {nn} {nnodes}: that process never joins the group",
            flags=("--node-rank", "--nnodes"),
        )
    if nnodes > 1 and (tp * pp) % nnodes:
        yield RULE.finding(
            f"tp {tp} x pp {pp} = {tp * pp} GPUs cannot be split over {nnodes} nodes: SGLang asserts 'tp_size "
            "must be divisible by number of nodes' in check_server_args",
            flags=("--tp-size", "--nnodes"),
        )
    dp = spec.get("dp_size") or 1
    replicas = dp if (ATTN_DP_SIZE_FLAG.present_in(ctx.version) and not spec.get("enable_dp_attention")) else 1
    if nnodes > 1 and replicas > 1 and ATTN_DP_SIZE_FLAG.present_in(ctx.version):
        yield RULE.finding(
            f"{ctx.flag('--dp-size')} {dp} replicas over {nnodes} nodes: SGLang {ctx.version} asserts 'multi-node "
            f"data-parallel replicas are not supported'. Use {ctx.flag('--attn-dp-size')} across nodes, or one node per replica",
            flags=("--dp-size", "--nnodes"),
        )
    # Before --attn-dp-size the switch turns attention DP on and --dp-size is the group count
    # (``assert tp_size % dp_size == 0``); the resolved width there only says "on".
    attn = attn_dp_size(ctx) if ATTN_DP_SIZE_FLAG.present_in(ctx.version) else (dp if attn_dp_size(ctx) > 1 else 1)
    if attn > 1 and tp % attn:
        yield RULE.finding(
            f"attention DP of {attn} does not divide {ctx.flag('--tp-size')} {tp}: each DP-attention group takes "
            "tp / dp ranks, so SGLang cannot lay the groups out",
            flags=attn_dp_flags_of(ctx),
        )


def attn_dp_flags_of(ctx: CheckContext) -> tuple[str, ...]:
    return tuple(f for f in ("--tp-size", "--attn-dp-size", "--dp-size") if ctx.spec.has(f))


RULE = Rule(
    check=check,
    code="PL008",
    category=Category.START,
    name="multi-node-inconsistent",
    summary="--nnodes / --node-rank / --dist-init-addr or the parallel sizes do not fit together",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="Checks a multi-node launch: a rendezvous address, a node rank below the node count, tp x pp "
        "divisible by the nodes, no multi-node DP replicas (0.5.22+), and an attention-DP size that divides tp.",
        why="`check_server_args` asserts `(tp_size * pp_size) % nnodes == 0` and rejects `dp_size > 1` replicas "
        "across nodes (0.5.23 validation_hook.py:177-202). A missing `--dist-init-addr` or a rank outside the "
        "node count fails only once the processes try to meet. Attention DP splits the tp ranks into groups, so "
        "its size must divide tp. slime sets these flags itself, so the rule speaks to SGLang launches.",
        fix="No automatic fix: the right address, rank and sizes depend on the cluster.",
        fix_safety="No fix is offered.",
    ),
    bad=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-V3", "--tp-size", "16", "--nnodes", "2", "--node-rank", "0",
              "--speculative-algorithm", "EAGLE"),
    ),
    good=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-V3", "--tp-size", "16", "--nnodes", "2", "--node-rank", "0",
              "--dist-init-addr", "10.0.0.1:5000", "--speculative-algorithm", "EAGLE"),
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/validation_hook.py:177-202",
        "sglang 0.5.23: python/sglang/srt/arg_groups/parallel_hook.py:150-170",
        "design: shared/design/dialects.md §1.3 (slime sets nnodes, node_rank, dist_init_addr itself)",
    ),
    dialects=(Dialect.SGLANG,),
)
