"""HY023 swa-triton-verify-mask-offset."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    proposed_backend,
)
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

# gpt-oss alternates full and 128-token sliding-window layers. Gemma 2/3 and MiMo-V2 are HY021's
# (their EAGLE passes on triton fail outright, in every release); this rule is the silent part.
AFFECTED_ARCHITECTURES = frozenset({"GptOssForCausalLM"})



def _runs_triton(ctx: CheckContext) -> tuple[bool, bool]:
    """(runs triton, typed) for a gpt-oss target: untyped, its backend is triton on every GPU in
    these releases (sglang 0.5.0rc1 server_args.py:2106-2108), whatever the generic default is."""
    typed = ctx.spec.get("attention_backend")
    return (typed == "triton", True) if typed is not None else (True, False)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None:
        return
    arch = ctx.target.architecture
    if arch not in AFFECTED_ARCHITECTURES:
        return
    triton, typed = _runs_triton(ctx)
    if not triton:
        return
    replacement = proposed_backend(ctx, avoid=frozenset({"triton", "flashinfer"}))
    how = "" if typed else " (SGLang's default for this target in this release)"
    next_step = (
        f"Use {ctx.flag('--attention-backend')} {replacement}, or SGLang 0.5.1 or later"
        if replacement
        else "Use SGLang 0.5.1 or later"
    )
    yield RULE.finding(
        f"{arch} has sliding-window layers, and in SGLang {ctx.version} the triton backend{how} reads EAGLE's "
        "target-verify mask from the start of the sequence instead of the start of the window: once a request "
        "passes the window, verification attends with the wrong mask and answers lose accuracy with no error "
        f"(PR 9279 measured MMLU 0.777 before its fix, 0.816 after). {next_step}",
        flags=("--attention-backend",),
        fix=fix_of(f"use {replacement}", Applicability.UNSAFE, Edit(name="--attention-backend", value=replacement))
        if replacement
        else None,
    )


RULE = Rule(
    check=check,
    code="HY023",
    category=Category.WRONG_OUTPUT,
    name="swa-triton-verify-mask-offset",
    summary="EAGLE on gpt-oss with triton before 0.5.1: the sliding-window verify mask is misread",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 or STANDALONE on gpt-oss (sliding-window layers) whose attention runs on triton (typed, "
        "or gpt-oss's default in these releases) in SGLang before 0.5.1.",
        why="The triton backend's target-verify pass builds a window-sized KV list for sliding-window layers but "
        "indexed the custom mask as if the KV started at token 0; PR 9279 added `window_kv_offsets` so the kernel "
        "reads the mask from the window's start (first shipped in 0.5.1, triton_backend.py:262-276; 0.5.0rc1 "
        ":255-266 has no offset). Before it, gpt-oss-20b with EAGLE3 on triton scored 0.777 on MMLU, 0.816 after. "
        "gpt-oss defaults to triton in these releases (0.5.0rc1 server_args.py:2106-2108).",
        fix="Use fa3 on Hopper (gpt-oss accepts triton, trtllm_mha and fa3), or SGLang 0.5.1 or later.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=("--model-path", "openai/gpt-oss-20b", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "zhuyksir/EAGLE3-gpt-oss-20b-bf16", "--attention-backend", "triton"),
        target={"architectures": ("GptOssForCausalLM",)},
        gpu="H100",
        sglang_version="0.5.0rc2",
    ),
    good=Example(
        argv=("--model-path", "openai/gpt-oss-20b", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "zhuyksir/EAGLE3-gpt-oss-20b-bf16", "--attention-backend", "triton"),
        target={"architectures": ("GptOssForCausalLM",)},
        gpu="H100",
        sglang_version="0.5.1",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/pull/9279",
        "sglang 0.5.0rc1: python/sglang/srt/layers/attention/triton_backend.py:255-266 (no window offset)",
        "sglang 0.5.1: python/sglang/srt/layers/attention/triton_backend.py:262-276 (window_kv_offsets)",
        "sglang 0.5.0rc1: python/sglang/srt/server_args.py:2106-2112 (gpt-oss defaults to triton)",
    ),
    # PR 9279 (window_kv_offsets into the verify custom mask) first shipped in 0.5.1.
    sglang_versions="<0.5.1",
    dialects=SGLANG_DIALECTS,
)
