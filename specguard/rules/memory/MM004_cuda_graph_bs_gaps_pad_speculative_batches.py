"""MM004 cuda-graph-bs-gaps-pad-speculative-batches."""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Fix, Severity
from specguard.resolution.cuda_graph import (
    explicit_graph_bs,
    graph_bs_flag,
    spec_graph_schedule,
)
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3

# A batch padded by more than this fraction of itself counts as a gap. The seed's slime
# workaround ($(seq 1 32) $(seq 40 8 64) $(seq 80 16 160)) pads at most 23% (65 -> 80), SGLang's
# own speculative schedule at most 21% (33 -> 40).
MAX_PADDING = 0.25


def gaps(sizes: list[int], upto: int) -> list[tuple[int, int, int]]:
    """(first batch, last batch, captured size they pad to) for batches padded > MAX_PADDING."""
    found: list[tuple[int, int, int]] = []
    for batch in range(1, min(upto, sizes[-1]) + 1):
        padded = sizes[bisect.bisect_left(sizes, batch)]
        if (padded - batch) / batch > MAX_PADDING:
            if found and found[-1][2] == padded and found[-1][1] == batch - 1:
                found[-1] = (found[-1][0], batch, padded)
            else:
                found.append((batch, batch, padded))
    return found


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or ctx.spec.get("disable_cuda_graph"):
        return
    sizes = explicit_graph_bs(ctx.spec)
    if not sizes:
        return
    mrr = ctx.resolution.max_running_requests or sizes[-1]
    found = gaps(sizes, mrr)
    if not found:
        return
    no_padding = bool(ctx.spec.get("disable_cuda_graph_padding"))
    ranges = ", ".join(f"{a}-{b} -> {p}" if a != b else f"{a} -> {p}" for a, b, p in found[:4])
    if len(found) > 4:
        ranges += ", ..."
    flag = graph_bs_flag(ctx.version)
    what = (
        "run eagerly (--disable-cuda-graph-padding replays only captured sizes)"
        if no_padding
        else "are padded up to the next captured size, wasting verify and draft compute; padded draft batches "
        "are where the seed's known CUDA-graph padding errors occur"
    )
    schedule = spec_graph_schedule(sizes[-1])
    edits = [Edit(name=flag, value=tuple(str(s) for s in schedule))]
    for old in ("--cuda-graph-bs",):
        if old != flag and ctx.spec.has(old):
            edits.append(Edit(name=old, value=None))
    yield RULE.finding(
        f"the CUDA graph batch sizes {' '.join(map(str, sizes))} leave gaps under speculative decoding: batches "
        f"{ranges} {what}. Capture SGLang's speculative schedule up to {sizes[-1]} instead",
        flags=(flag,),
        fix=Fix(
            title=f"set {flag} to SGLang's speculative schedule up to {sizes[-1]} ({len(schedule)} sizes)",
            applicability=Applicability.UNSAFE,
            edits=tuple(edits),
        ),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="MM004",
    category=Category.PERF,
    name="cuda-graph-bs-gaps-pad-speculative-batches",
    summary="An explicit CUDA graph batch-size list leaves gaps that pad speculative batches",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="For an explicit `--cuda-graph-bs` (SGLang < 0.5.14) / `--cuda-graph-bs-decode` list under "
        "speculative decoding, finds the batch sizes up to `--max-running-requests` that the replay pads by "
        "more than 25% (the next captured size is `bisect_left` of the list, "
        "`base_cuda_graph_runner.py:_pad_to_bucket`). SGLang's own speculative schedule (1-8, 10-32 step 2, "
        "40-64 step 4, 72-256 step 8, then step 16; P29) and the seed's slime workaround stay below that.",
        why="A padded replay runs the whole captured batch: with speculative decoding each padded request "
        "costs `draft tokens` verify tokens and `topk` draft branches per step. The slime seed lists 'Error "
        "occurs during CUDA graph padding in the speculative decoding draft stage' as a known issue and "
        "recommends a broader `--sglang-cuda-graph-bs` (`$(seq 1 32) $(seq 40 8 64) $(seq 80 16 160)`); "
        "0.5.23 resets padded draft buffers (PR 10892) but the wasted compute stays. With "
        "`--disable-cuda-graph-padding` the gaps run eagerly instead. Batches above the list's largest "
        "size run eagerly (MM003).",
        fix="Replace the list with SGLang's speculative schedule up to the same largest size, spelled for the "
        "SGLang version (`--cuda-graph-bs-decode` from 0.5.14; the old `--cuda-graph-bs` is removed in 0.5.20).",
        fix_safety="Unsafe: more graphs are captured (more capture time, a little more graph memory).",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--cuda-graph-bs-decode", "1", "2", "4", "8", "16", "32",
              "--max-running-requests", "32"),
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--cuda-graph-bs-decode", *map(str, range(1, 33)), "--max-running-requests", "32"),
    ),
    sources=(
        "seed: slime-speculative-decoding.en.md (Known issues: CUDA graph padding in the draft stage; --sglang-cuda-graph-bs workaround)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/cuda_graph_hook.py:500-529 (speculative capture schedule)",
        "sglang 0.5.23: python/sglang/srt/model_executor/runner/base_cuda_graph_runner.py:166-181 (_pad_to_bucket)",
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py:591-607 (padded replay reset)",
        "https://github.com/sgl-project/sglang/pull/10892",
    ),
)
