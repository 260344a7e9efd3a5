"""PL004 ngram-constraints."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, set_flags
from specguard.rules.examples import QWEN25_7B_NGRAM
from specguard.rules.spec_params._shared import device
from specguard.sglang_facts.changes import (
    NGRAM_KEEPS_OVERLAP,
    NGRAM_ON_CPU,
    NGRAM_ON_XPU,
    NGRAM_ROCM_TREE_OP,
    Change,
    as_of,
)

# The devices _handle_ngram accepts, newest first; CUDA only before.
DEVICES: tuple[tuple[Change, tuple[str, ...]], ...] = (
    (NGRAM_ON_XPU, ("cuda", "cpu", "xpu")),
    (NGRAM_ON_CPU, ("cuda", "cpu")),
)


def allowed_devices(version: Version) -> tuple[str, ...]:
    return as_of(DEVICES, version, before=("cuda",))


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "NGRAM":
        return
    where = device(ctx)
    allowed = allowed_devices(ctx.version)
    if where is not None and where not in allowed:
        yield RULE.finding(
            f"NGRAM in SGLang {ctx.version} only runs on {', '.join(allowed)}, not {where!r}: it raises "
            "'Ngram speculative decoding only supports ...' at argument time",
            flags=("--device",),
        )
    if ctx.env.platform == "rocm" and where == "cuda" and ctx.version < NGRAM_ROCM_TREE_OP.release:
        yield RULE.finding(
            f"NGRAM on an AMD GPU in SGLang {ctx.version}: the verify step calls sgl_kernel's "
            "reconstruct_indices_from_tree_mask, which the ROCm sgl_kernel does not register, so the scheduler "
            "crashes with an AttributeError at the first speculative step (SGLang's device check passes: ROCm is "
            "'cuda' to torch). SGLang 0.5.23 uses an in-tree kernel on ROCm; otherwise drop NGRAM here",
            flags=("--speculative-algorithm",),
        )
    if ctx.version < NGRAM_KEEPS_OVERLAP.release and not ctx.spec.get("disable_overlap_schedule"):
        yield RULE.finding(
            f"SGLang {ctx.version} turns the overlap scheduler off for NGRAM (until 0.5.14 kept it): expect "
            "lower throughput than an overlapped run",
            flags=("--disable-overlap-schedule",),
            fix=set_flags("add --disable-overlap-schedule, what SGLang runs", Applicability.SAFE, disable_overlap_schedule=True),
            severity=Severity.INFO,
        )


RULE = Rule(
    check=check,
    code="PL004",
    category=Category.START,
    name="ngram-constraints",
    summary="NGRAM on a device it does not support in that release; overlap scheduler off before 0.5.14",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Checks the device NGRAM runs on against the release, and says where SGLang turns the overlap "
        "scheduler off for it.",
        why="The docs say NGRAM is CUDA-only and disables the overlap scheduler; the code moved on. "
        "On AMD GPUs the device check passes (ROCm is 'cuda' to torch), but up to 0.5.22 NGRAM's verify takes "
        "`reconstruct_indices_from_tree_mask` from sgl_kernel (0.5.3 speculative/ngram_worker.py:6; 0.5.21 "
        ":39-46), an op the ROCm sgl_kernel build never registered, so any NGRAM run dies at its first "
        "speculative step with an AttributeError (PR 29346, MI355X, closed unmerged); 0.5.23 uses an in-tree "
        "kernel on HIP (kernels/ops/speculative/reconstruct_tree.py:47-50). "
        "Devices: CUDA only up to 0.5.15, CUDA or CPU in 0.5.16-0.5.20, CUDA, CPU or XPU from 0.5.21 "
        "(catalogue P61). Overlap: disabled up to 0.5.13, kept from 0.5.14 (P37; CPU still disables it, "
        "P33). Mixed chunked prefill is PL009; topk > 1 with page_size > 1 needing flashinfer (P67) is AB002.",
        fix="Run on a supported device; nothing to fix for the overlap note.",
        fix_safety="Adding --disable-overlap-schedule where SGLang sets it anyway is safe.",
    ),
    bad=Example(
        argv=(*QWEN25_7B_NGRAM, "--device", "cpu"),
        sglang_version="0.5.15",
    ),
    good=Example(
        argv=(*QWEN25_7B_NGRAM, "--device", "cpu"),
        sglang_version="0.5.16",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/pull/29346",
        "sglang 0.5.21: python/sglang/srt/speculative/ngram_worker.py:39-46",
        "sglang 0.5.23: python/sglang/kernels/ops/speculative/reconstruct_tree.py:47-50",
        "seed: sglang-speculative-decoding.md (Ngram Speculative Decoding: only supports CUDA; disables the overlap scheduler)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1285-1308",
        "sglang 0.5.16: python/sglang/srt/arg_groups/speculative_hook.py:652-657",
        "sglang 0.5.13: python/sglang/srt/arg_groups/speculative_hook.py:427-430",
        "sglang 0.5.14: python/sglang/srt/arg_groups/speculative_hook.py:410, 451",
        "sglang 0.5.3rc2: python/sglang/srt/server_args.py:1127-1135 (NGRAM new: CUDA only, overlap off; none in 0.5.3rc0)",
        "catalogue: shared/design/sglang-spec-checks.md P33, P37, P61, P62",
    ),
    sglang_versions=">=0.5.3rc2",
)
