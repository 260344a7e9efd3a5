"""MM373 rejection-sampling-draft-probs-recycled."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import GLM52_FACTS, GLM52_FP8_TP8
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS
from specguard.sglang_facts.architectures import DSA_ARCHITECTURES

REJECTION = "--speculative-use-rejection-sampling"


def check(ctx: CheckContext) -> Iterator[Finding]:
    # topk other than 1 and other algorithms are refused at argument time (SP009); a one-step draft
    # captures no draft decode graph (0.5.20 speculative/eagle_worker_v2.py:459).
    if (
        not ctx.spec.has(REJECTION)
        or ctx.algorithm not in EAGLE_HEAD_ALGORITHMS
        or ctx.target is None
        or ctx.target.architecture not in DSA_ARCHITECTURES
        or ctx.spec.has("--disable-cuda-graph")
        # Multi-layer EAGLE samples its draft probabilities eagerly, outside any graph pool (0.5.20
        # speculative/multi_layer_eagle_worker_v2.py:672-716); 0.5.14-0.5.15 refuse the pair at argument time.
        or ctx.spec.has("--enable-multi-layer-eagle")
        or ctx.resolution.eagle_topk != 1
        or ctx.resolution.num_steps is None
        or ctx.resolution.num_steps < 2
    ):
        return
    yield RULE.finding(
        f"{ctx.flag(REJECTION)} on {ctx.target.architecture} with the draft decode CUDA graph: SGLang {ctx.version} "
        "keeps the draft probabilities in the graph's memory pool until the accept test after the target verify, "
        "and the pool recycles that block meanwhile (the DSA top-k mask lands there), so the rejection test reads "
        "overwritten probabilities (-inf in eagle_sample): wrong accept decisions or a failed sample. Drop "
        f"{ctx.flag(REJECTION)} (greedy/threshold verify), or use SGLang 0.5.21 or later",
        flags=(REJECTION,),
        fix=fix_of(
            f"drop {REJECTION}", Applicability.UNSAFE, Edit(name=REJECTION, value=None)
        ),
    )


GLM52_MTP = (
    *GLM52_FP8_TP8,
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    REJECTION,
)

RULE = Rule(
    check=check,
    code="MM373",
    category=Category.WRONG_OUTPUT,
    name="rejection-sampling-draft-probs-recycled",
    summary="Rejection sampling on a DSA target reads draft probabilities the CUDA-graph pool recycled (0.5.14 to 0.5.20)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    sglang_versions=">=0.5.14,<0.5.21",
    docs=RuleDocs(
        what="`--speculative-use-rejection-sampling` with EAGLE/EAGLE3 (NEXTN, MTP), topk 1 and more than one "
        "draft step (so the draft decode CUDA graph runs) on a DSA target (DeepSeek-V3.2 `DeepseekV32ForCausalLM`, "
        "GLM-5 `GlmMoeDsaForCausalLM`), CUDA graphs on, without `--enable-multi-layer-eagle` (whose worker computes "
        "the draft probabilities eagerly), SGLang 0.5.14 to 0.5.20.",
        why="With rejection sampling the draft CUDA graph also returns `draft_probs` (the stacked per-step draft "
        "distributions, 0.5.14 speculative/eagle_worker_v2.py:494-496, :701-706), handed unchanged to the verify "
        "input (:572) and read by the accept test only after the target forward (0.5.20 :628-630, :644-650). The tensor "
        "lives in the graph's private memory pool, which recycles the block in the meantime; SGLang 0.5.21 clones "
        'it at the boundary and says why: "The pool recycles that block in the meantime -- in practice the DSA '
        'top-k mask lands there and eagle_sample sees -inf" (0.5.21 eagle_worker_v2.py:644-654). The flag and '
        "`draft_probs` are new in 0.5.14 (0.5.13 has neither). Only DSA targets are reported; other targets may "
        "be hit too, but specguard cannot tell which allocation lands there, so it stays quiet for them.",
        fix="Drop `--speculative-use-rejection-sampling`, or upgrade to SGLang 0.5.21.",
        fix_safety="Unsafe: verify goes back to SGLang's default accept rule, which changes the sampled output's "
        "distribution under temperature.",
    ),
    bad=Example(
        argv=GLM52_MTP, target=GLM52_FACTS, gpu="H200", sglang_version="0.5.20"
    ),
    good=Example(
        argv=GLM52_MTP, target=GLM52_FACTS, gpu="H200", sglang_version="0.5.21"
    ),
    sources=(
        "sglang 0.5.13: python/sglang/srt/server_args.py (no speculative_use_rejection_sampling); speculative/eagle_worker_v2.py (no draft_probs)",
        "sglang 0.5.14: python/sglang/srt/speculative/eagle_worker_v2.py:494-496, 572, 701-706",
        "sglang 0.5.20: python/sglang/srt/speculative/eagle_worker_v2.py:459, 628-630, 644-650",
        "sglang 0.5.21: python/sglang/srt/speculative/eagle_worker_v2.py:644-654 (draft_probs cloned)",
        "sglang 0.5.20: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:648-716 (eager draft probs)",
    ),
)
