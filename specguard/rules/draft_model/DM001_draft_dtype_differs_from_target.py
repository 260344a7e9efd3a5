"""DM001 draft-dtype-differs-from-target."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import DRAFT_CHECKPOINT_ALGORITHMS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in DRAFT_CHECKPOINT_ALGORITHMS or ctx.target is None or ctx.draft is None:
        return
    if ctx.spec.get("dtype") not in (None, "auto"):
        return
    target_dtype, draft_dtype = ctx.target.dtype, ctx.draft.dtype
    if target_dtype is None or draft_dtype is None or target_dtype == draft_dtype:
        return
    yield RULE.finding(
        f"the draft is {draft_dtype} ({ctx.draft.dtype_key}) and the target {target_dtype} "
        f"({ctx.target.dtype_key}), and {ctx.flag('--dtype')} is auto: each model loads in its own "
        "dtype and CUDA graph capture fails with 'mat1 and mat2 must have the same dtype'",
        flags=("--dtype",),
        fix=set_flags(f"set --dtype {target_dtype}, the target's dtype", Applicability.SAFE, dtype=target_dtype),
    )


RULE = Rule(
    check=check,
    code="DM001",
    category=Category.START,
    name="draft-dtype-differs-from-target",
    summary="The draft's dtype differs from the target's while --dtype is auto",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Compares the `dtype` (transformers 5) or `torch_dtype` of the draft's and the target's "
        "config.json when `--dtype` is left at `auto`.",
        why="With `--dtype auto` SGLang resolves each model's dtype from its own config.json, so a "
        "float16 draft beside a bfloat16 target runs in float16 while the hidden states it receives "
        "are bfloat16. CUDA graph capture then fails with `Capture cuda graph failed: mat1 and mat2 "
        "must have the same dtype` after the weights have loaded. SGLang checks none of this at "
        "argument time (catalogue P60), and the draft-extend CUDA-graph runner only assumes the two "
        "agree.",
        fix="Set `--dtype` explicitly; specguard proposes the target's dtype, so the target runs "
        "exactly as `auto` would have run it and only the draft is cast. (slime's guide sets "
        "float16, the draft's dtype, which also works for Llama-3.1.)",
        fix_safety="Safe: the target keeps the dtype `auto` gives it; only the draft is cast.",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE3,
        target={"dtype": "bfloat16", "dtype_key": "torch_dtype"},
        draft={"dtype": "float16", "dtype_key": "torch_dtype"},
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--dtype", "bfloat16"),
        target={"dtype": "bfloat16", "dtype_key": "torch_dtype"},
        draft={"dtype": "float16", "dtype_key": "torch_dtype"},
    ),
    sources=(
        "seed: slime-speculative-decoding.en.md (Important Configuration Notes, --sglang-dtype float16)",
        "https://github.com/sgl-project/sglang/pull/3431",
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_draft_extend_cuda_graph_runner.py:177-180",
        "sglang 0.5.23: python/sglang/srt/configs/model_config.py (_get_and_verify_dtype)",
    ),
    log_signatures=(
        r"mat1 and mat2 (must have|to have) the same dtype",
    ),
)
