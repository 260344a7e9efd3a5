"""HY021 sliding-window-eagle-backend."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    attention_backend,
    proposed_backend,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.hybrid._hybrid import SLIDING_WINDOW_ARCHITECTURES
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

BROKEN_BACKENDS = frozenset({"flashinfer", "triton"})


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None:
        return
    arch = ctx.target.architecture
    if arch not in SLIDING_WINDOW_ARCHITECTURES:
        return
    backend, given = attention_backend(ctx)
    decode = ctx.spec.get("decode_attention_backend") or backend
    prefill = ctx.spec.get("prefill_attention_backend") or backend
    broken = sorted({b for b in (prefill, decode) if b in BROKEN_BACKENDS})
    if not broken:
        return
    replacement = proposed_backend(ctx, avoid=BROKEN_BACKENDS)
    how = "" if given else f" (SGLang's default on {ctx.env.gpu.name})"  # type: ignore[union-attr]
    next_step = (
        f"Use {ctx.flag('--attention-backend')} {replacement}"
        if replacement
        else "No other backend fits this GPU: run this target without EAGLE"
    )
    yield RULE.finding(
        f"{arch} has sliding-window attention layers, and EAGLE's target-verify and draft-extend passes on "
        f"{'/'.join(broken)}{how} do not build the sliding-window metadata those layers need: reports show the "
        f"server failing at CUDA-graph capture or on the first requests. {next_step}",
        flags=("--attention-backend",),
        fix=fix_of(f"use {replacement}", Applicability.UNSAFE, Edit(name="--attention-backend", value=replacement))
        if replacement
        else None,
    )


RULE = Rule(
    check=check,
    code="HY021",
    category=Category.CRASH,
    name="sliding-window-eagle-backend",
    summary="EAGLE on a sliding-window target (Gemma 2/3, MiMo-V2) with flashinfer or triton",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 or STANDALONE on a target whose architecture has sliding-window layers (Gemma 2, "
        "Gemma 3, Gemma 3n, MiMo-V2) when the target's prefill or decode backend is flashinfer or triton "
        "(typed, or SGLang's default for the GPU).",
        why="In the EAGLE `is_target_verify()` / `is_draft_extend()` forward modes the sliding-window metadata the "
        "flashinfer and triton backends read is never filled, so it stays None (sglang#22679, filed on 0.5.10 for "
        "Gemma 2 and Gemma 3; first reported for Gemma 3 in sglang#8186 on 0.4.9). MiMo-V2.5's MTP layers reuse "
        "the target's sliding window and crash the triton extend kernel with kv_indices=None (sglang#24481). The "
        "fix PR 39287 (verification mask and window bounds for both backends) was still open in September 2026; "
        "fa3 builds its own page table and works (sglang#24481 on H200).",
        fix="Use fa3 on Hopper. Elsewhere no backend fits: serve without EAGLE.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=("--model-path", "google/gemma-2-9b-it", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "some/gemma-2-eagle3", "--attention-backend", "flashinfer"),
        target={"architectures": ("Gemma2ForCausalLM",)},
        gpu="H100",
    ),
    good=Example(
        argv=("--model-path", "google/gemma-2-9b-it", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "some/gemma-2-eagle3", "--attention-backend", "fa3"),
        target={"architectures": ("Gemma2ForCausalLM",)},
        gpu="H100",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/22679",
        "https://github.com/sgl-project/sglang/issues/8186",
        "https://github.com/sgl-project/sglang/issues/24481",
        "https://github.com/sgl-project/sglang/pull/39287",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_overrides/gemma2_gemma3.py:13-19",
    ),
    dialects=SGLANG_DIALECTS,
)
