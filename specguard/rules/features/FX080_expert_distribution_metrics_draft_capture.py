"""FX080 expert-distribution-metrics-draft-capture."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS

METRICS = "--enable-expert-distribution-metrics"
# With this env var 0.5.15-0.5.17 hand the balancedness to the metrics output instead of calling
# .item() on it (0.5.15 eplb/expert_distribution.py:737-745).
BALANCEDNESS_METRIC_ENV = "SGLANG_ENABLE_EPLB_BALANCEDNESS_METRIC"
# The EAGLE workers whose multi-step draft_forward runs full ModelRunner.forward passes.
MULTI_STEP_DRAFT_ALGORITHMS = EAGLE_HEAD_ALGORITHMS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.spec.has(METRICS) or ctx.algorithm not in MULTI_STEP_DRAFT_ALGORITHMS:
        return
    if ctx.spec.has("--disable-cuda-graph") or ctx.spec.env_flag(BALANCEDNESS_METRIC_ENV):
        return
    steps = ctx.resolution.num_steps
    if steps is None or steps < 2:
        return
    yield RULE.finding(
        f"{ctx.flag(METRICS)} with {ctx.algorithm} at {steps} draft steps: the draft CUDA-graph capture runs "
        "full forward passes, the expert-distribution recorder's pass-end bookkeeping does a GPU-to-CPU "
        "sync inside the capture ('operation not permitted when stream is capturing'), and the server "
        "fails at start-up, every time",
        flags=(METRICS,),
        fix=fix_of(f"drop {METRICS}", Applicability.UNSAFE, Edit(name=METRICS, value=None)),
    )


RULE = Rule(
    check=check,
    code="FX080",
    category=Category.START,
    name="expert-distribution-metrics-draft-capture",
    summary="--enable-expert-distribution-metrics with a multi-step EAGLE draft crashes draft CUDA-graph capture",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--enable-expert-distribution-metrics` with EAGLE/NEXTN/EAGLE3 at two or more draft steps and CUDA graphs on.",
        why="EAGLE's multi-step `draft_forward` calls `ModelRunner.forward` inside the draft CUDA-graph capture "
        "(the last step breaks before its forward, so one step is safe). The recorder's forward-pass boundary "
        "then runs while the stream captures, and its accumulator calls `.item()` on rank 0 "
        "(`_append_utilization_rate`): cudaErrorStreamCaptureUnsupported, then 'Capture cuda graph failed'. "
        "Reported on 0.5.15.post1 (sglang#32105, fix proposed in sglang#32106); every release from 0.4.9 to "
        "0.5.17 makes that sync by default. 0.5.18 moved the `.item()` behind "
        "`--eplb-min-rebalancing-utilization-threshold` below 1.0 (0.5.18 expert_distribution.py:776-794).",
        fix="Drop `--enable-expert-distribution-metrics`, or draft one step, or disable CUDA graphs.",
        fix_safety="Unsafe: the expert-balancedness metrics stop.",
    ),
    bad=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-V3", "--tp-size", "8", "--speculative-algorithm", "EAGLE",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
              METRICS),
        sglang_version="0.5.15.post1",
    ),
    good=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-V3", "--tp-size", "8", "--speculative-algorithm", "EAGLE",
              "--speculative-num-steps", "1", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "2",
              METRICS),
        sglang_version="0.5.15.post1",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/32105",
        "https://github.com/sgl-project/sglang/pull/32106",
        "sglang 0.5.15: python/sglang/srt/eplb/expert_distribution.py:193-205,731-747",
        "sglang 0.5.18: python/sglang/srt/eplb/expert_distribution.py:776-794",
    ),
    sglang_versions="<0.5.18",
)
