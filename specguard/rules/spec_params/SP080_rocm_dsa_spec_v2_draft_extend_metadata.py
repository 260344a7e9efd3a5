"""SP080 rocm-dsa-spec-v2-draft-extend-metadata."""

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
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.architectures import DSA_ARCHITECTURES


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or gpu is None
        or gpu.vendor != "amd"
    ):
        return
    if ctx.target is None or ctx.target.architecture not in DSA_ARCHITECTURES:
        return
    if ctx.resolution.disable_overlap_schedule is not False:
        return
    yield RULE.finding(
        f"{ctx.algorithm} on a DSA target ({ctx.target.architecture}) on {gpu.name} with the overlap scheduler on, in "
        f"SGLang {ctx.env.sglang_version}: speculation always runs the V2 (overlap) worker, whose draft extend on "
        "ROCm leaves the CPU copies of the extend lengths unset, and the DSA backend's draft-extend metadata "
        "asserts on them (AssertionError: All of them must not be None); every request then fails with a 500 and "
        "the server dies. Add --disable-overlap-schedule, which the reporter found to run end to end",
        flags=("--disable-overlap-schedule",),
        fix=set_flags(
            "add --disable-overlap-schedule",
            Applicability.SAFE,
            disable_overlap_schedule=True,
        ),
    )


RULE = Rule(
    check=check,
    code="SP080",
    category=Category.CRASH,
    name="rocm-dsa-spec-v2-draft-extend-metadata",
    summary="EAGLE/MTP on a DSA target on ROCm with the overlap scheduler crashes in the draft extend (0.5.14)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="EAGLE-family speculation on an AMD GPU with a DSA target (`GlmMoeDsaForCausalLM`, "
        "`DeepseekV32ForCausalLM`) while the overlap scheduler stays on, on SGLang 0.5.14.",
        why="0.5.14 removed `SGLANG_ENABLE_SPEC_V2`: speculation always runs the V2 worker, which drafts under the "
        "overlap scheduler. Its draft extend builds the forward batch on the GPU-only path without the CPU "
        "mirrors of the extend lengths, and the DSA backend's draft-extend-v2 metadata asserts them "
        "(0.5.14 layers/attention/dsa_backend.py:692-697, `All of them must not be None`). On NVIDIA the draft "
        "extend replays a CUDA graph (PR 29413) and skips that eager path; on AMD it is not in the graph "
        "allowlist, so the eager assert fires: issue 29785 (GLM-5.2-FP8, EAGLE 5/1/6, 8x MI350X, "
        "v0.5.14 ROCm image; --disable-overlap-schedule works around it) and PR 29724 (the AMD MI35x DeepSeek-V3.2 "
        "MTP nightly jobs fail the same way). The rule covers the release reported: the assert is still in "
        "0.5.15-0.5.17 and no fix was read that ships, so later releases are left unjudged.",
        fix="Add `--disable-overlap-schedule` (the synchronous path runs the draft extend with its CPU metadata).",
        fix_safety="Safe: only the scheduling overlap is given up.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "zai-org/GLM-5.2-FP8",
            "--tp",
            "8",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "5",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "6",
        ),
        target={"architectures": ("GlmMoeDsaForCausalLM",)},
        gpu="MI350X",
        sglang_version="0.5.14",
    ),
    good=Example(
        argv=(
            "--model-path",
            "zai-org/GLM-5.2-FP8",
            "--tp",
            "8",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "5",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "6",
            "--disable-overlap-schedule",
        ),
        target={"architectures": ("GlmMoeDsaForCausalLM",)},
        gpu="MI350X",
        sglang_version="0.5.14",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/29785",
        "https://github.com/sgl-project/sglang/pull/29724",
        "sglang 0.5.14: python/sglang/srt/layers/attention/dsa_backend.py:692-697",
    ),
    sglang_versions="==0.5.14",
)
