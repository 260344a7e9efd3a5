"""AB065 rocm-eagle-custom-allreduce-verify-hang."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.architectures import (
    MINIMAX_M3_SPARSE_ARCHITECTURES,
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or gpu is None
        or gpu.platform != "rocm"
    ):
        return
    tp = ctx.spec.get("tp_size") or 1
    if tp <= 1 or ctx.spec.has("--disable-custom-all-reduce"):
        return
    if (
        ctx.target is not None
        and ctx.target.architecture in MINIMAX_M3_SPARSE_ARCHITECTURES
    ):
        return  # SGLang turns the custom all-reduce off for MiniMax-M3 on ROCm itself
    yield RULE.finding(
        f"{ctx.algorithm} on ROCm ({gpu.name}) at {ctx.flag('--tp-size')} {tp} with the custom all-reduce on: aiter's "
        "two-stage custom all-reduce can busy-wait forever in the EAGLE target-verify step at high concurrency "
        "(reported from 16-32 concurrent requests on MI355X), and the server hangs without an error. Add "
        f"{ctx.flag('--disable-custom-all-reduce')} (RCCL instead, negligible cost per the report)",
        flags=("--disable-custom-all-reduce",),
        fix=fix_of(
            "use RCCL for the all-reduce",
            Applicability.UNSAFE,
            Edit(name="--disable-custom-all-reduce", value=True),
        ),
    )


RULE = Rule(
    check=check,
    code="AB065",
    category=Category.CRASH,
    name="rocm-eagle-custom-allreduce-verify-hang",
    summary="EAGLE-family speculation on ROCm with TP > 1 and aiter's custom all-reduce: the verify step can hang at high concurrency",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="EAGLE, EAGLE3, NEXTN or STANDALONE on an AMD GPU with `--tp-size` > 1 and without "
        "`--disable-custom-all-reduce`, from 0.5.13.",
        why="PR 29313 (the GLM-5.1 cookbook's AMD recipe, June 2026) diagnosed with py-spy and rocgdb that the aiter "
        "custom all-reduce kernel (`aiter::cross_device_reduce_2stage`) deadlocks during the EAGLE target-verify "
        "step: it busy-waits on cross-device signal flags and never returns (hangs at 16+ concurrent requests with "
        "EAGLE 4/1/5 and 32+ with 3/1/4 on MI355X); RCCL, selected by `--disable-custom-all-reduce`, resolves it with "
        "negligible cost, and the cookbook now requires the flag for EAGLE on AMD. SGLang 0.5.23 still keeps the "
        "custom all-reduce on for this case (it is disabled automatically only for MiniMax-M3 on ROCm, "
        "arg_groups/model_overrides/minimax_m3.py:140-146).",
        fix="Add `--disable-custom-all-reduce`.",
        fix_safety="Unsafe: the all-reduce implementation changes (the report measured negligible cost).",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "amd/GLM-5.1-MXFP4",
            "--tp",
            "4",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
        ),
        gpu="MI355X",
        sglang_version="0.5.13",
    ),
    good=Example(
        argv=(
            "--model-path",
            "amd/GLM-5.1-MXFP4",
            "--tp",
            "4",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
            "--disable-custom-all-reduce",
        ),
        gpu="MI355X",
        sglang_version="0.5.13",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/pull/29313",
        "https://github.com/sgl-project/sglang/pull/29194",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_overrides/minimax_m3.py:140-146",
    ),
    sglang_versions=">=0.5.13",
    dialects=SGLANG_DIALECTS,
)
