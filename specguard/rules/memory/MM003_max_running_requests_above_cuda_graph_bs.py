"""MM003 max-running-requests-above-cuda-graph-bs."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.resolution.cuda_graph import configured_graph_bs
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import LLAMA2_7B_EAGLE


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None:
        return
    mrr = ctx.resolution.max_running_requests
    configured = configured_graph_bs(ctx.spec, ctx.env)
    if not mrr or not configured:
        return
    largest = max(configured)
    if mrr <= largest:
        return
    flag = ctx.flag("--max-running-requests")
    explicit = ctx.spec.get("max_running_requests") is not None
    message = (
        f"{flag} is {mrr}{'' if explicit else ' (SGLang sets 48 for speculative decoding)'} but the largest "
        f"CUDA graph batch size is {largest}: batches of {largest + 1}-{mrr} requests run target verify and the "
        "draft without CUDA graphs (eager), much slower"
    )
    if explicit:
        # Both chosen by the user, as in the seed's OOM recovery recipe: a deliberate memory trade.
        yield RULE.finding(message + "; a deliberate trade when memory is tight", flags=("--max-running-requests",), severity=Severity.INFO)
        return
    yield RULE.finding(
        message + f"; the OOM recipe's step 4 caps {flag} at {largest}",
        flags=("--max-running-requests",),
        fix=set_flags(f"step 4: --max-running-requests {largest}, the largest CUDA graph batch size", Applicability.UNSAFE, max_running_requests=largest),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="MM003",
    category=Category.PERF,
    name="max-running-requests-above-cuda-graph-bs",
    summary="--max-running-requests is above the largest CUDA graph batch size, so large batches run eager",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="Compares the resolved `--max-running-requests` (48 when unset under speculative decoding) with the "
        "largest decode CUDA-graph batch size SGLang resolves: the explicit `--cuda-graph-bs(-decode)` list, "
        "else `--cuda-graph-max-bs(-decode)`, else its GPU-memory default (8 below 20 GiB, 48 below 35 GiB, 32 "
        "below 60 GiB, 256 to 160 GiB, 512 above; 160/512 with tp >= 4), lowered to a user-set "
        "`--max-running-requests` (P28). A warning when SGLang chose the 48; info when the user set both, "
        "as the seed's recovery recipe does (`--cuda-graph-max-bs 2 --max-running-requests 4`).",
        why="A batch larger than the largest captured size fails `can_run_graph` (`cuda_graph_bs <= max_bs`, "
        "`decode_cuda_graph_runner.py:887-891`) and runs eagerly; the draft runners do the same. With "
        "speculative decoding every decode step is a verify over `bs x draft tokens` tokens plus several draft "
        "forwards, so eager steps cost much more than in plain decoding. It does not cost memory.",
        fix="The recipe's step 4: cap `--max-running-requests` at the largest captured batch size (or raise "
        "the graph max batch size, which costs memory).",
        fix_safety="Unsafe: it lowers the concurrency.",
    ),
    bad=Example(
        argv=(*LLAMA2_7B_EAGLE, "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
              "--speculative-num-draft-tokens", "16", "--mem-fraction-static", "0.7", "--cuda-graph-max-bs", "8"),
        sglang_version="0.5.13",
    ),
    good=Example(
        argv=(*LLAMA2_7B_EAGLE, "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
              "--speculative-num-draft-tokens", "16", "--mem-fraction-static", "0.7", "--cuda-graph-max-bs", "8",
              "--max-running-requests", "8"),
        sglang_version="0.5.13",
    ),
    sources=(
        "seed: sglang-speculative-decoding.md (EAGLE-2 launch with --cuda-graph-max-bs 8; OOM Troubleshooting, Step 4)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/memory_hook.py:88-188 (decode max_bs defaults, P28)",
        "sglang 0.5.23: python/sglang/srt/model_executor/runner/base_cuda_graph_runner.py:65-107 (clamp to request slots)",
        "sglang 0.5.23: python/sglang/srt/model_executor/runner/decode_cuda_graph_runner.py:845-891 (can_run_graph)",
    ),
)
