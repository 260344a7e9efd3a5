"""SP322 inkling-multi-step-draft-without-multi-layer-eagle."""

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
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

# The architectures whose config SGLang loads as InklingModelConfig / InklingMMConfig (configs/inkling.py).
INKLING_ARCHITECTURES = frozenset(
    {"InklingForConditionalGeneration", "InklingForConditionalGenerationMTP"}
)
MULTI_LAYER = "--enable-multi-layer-eagle"


def _draft_is_inkling(ctx: CheckContext) -> bool | None:
    """Whether the draft checkpoint is an Inkling one; None when specguard cannot tell."""
    draft_path = ctx.spec.get("speculative_draft_model_path")
    if draft_path is None or draft_path == ctx.spec.get("model_path"):
        # The draft worker loads the target checkpoint (its own MTP layers).
        return (
            ctx.target.architecture in INKLING_ARCHITECTURES
            if ctx.target is not None
            else None
        )
    if ctx.draft is None or ctx.draft.architecture is None:
        return None
    return ctx.draft.architecture in INKLING_ARCHITECTURES


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.spec.has(MULTI_LAYER):
        return
    steps = ctx.resolution.num_steps
    if steps is None or steps <= 1 or not _draft_is_inkling(ctx):
        return
    how = (
        ""
        if ctx.spec.has("--speculative-num-steps")
        else " (SGLang's automatic choice)"
    )
    yield RULE.finding(
        f"an Inkling draft with {steps} draft steps{how} and no {ctx.flag(MULTI_LAYER)} in SGLang "
        f"{ctx.env.sglang_version}: the EAGLE worker builds the multi-step draft decode backend, which refuses an "
        "Inkling draft with \"NotImplementedError: Inkling's draft model runs its own short convs, which need the "
        'conv-state sidecar the multi-step draft decode backend cannot carry. Use --enable-multi-layer-eagle." '
        f"while the server starts. Add {ctx.flag(MULTI_LAYER)}, or draft one step "
        f"({ctx.flag('--speculative-num-steps')} 1)",
        flags=(MULTI_LAYER, "--speculative-num-steps"),
        fix=fix_of(
            f"add {MULTI_LAYER}",
            Applicability.UNSAFE,
            Edit(name=MULTI_LAYER, value=True),
        ),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own EAGLE worker
    check=check,
    code="SP322",
    category=Category.START,
    name="inkling-multi-step-draft-without-multi-layer-eagle",
    summary="An Inkling MTP draft with more than one draft step needs --enable-multi-layer-eagle (0.5.17+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="EAGLE/NEXTN (or another EAGLE-worker algorithm) whose draft is an Inkling checkpoint (the "
        "`InklingForConditionalGeneration` target's own MTP layers, or a draft of that architecture), with more than "
        "one draft step (given, or SGLang's automatic 3) and without `--enable-multi-layer-eagle`, SGLang 0.5.17 "
        "or later.",
        why="0.5.17 adds `_assert_draft_needs_no_conv_sidecar` (speculative/draft_utils.py:13-25), which raises "
        "`NotImplementedError(\"Inkling's draft model runs its own short convs, which need the conv-state sidecar "
        'the multi-step draft decode backend cannot carry. Use --enable-multi-layer-eagle.")` for a draft whose '
        "config is InklingModelConfig or InklingMMConfig. `DraftBackendFactory.create_decode_backend` calls it "
        "whenever speculative_num_steps > 1 (:60-67), and the single-layer EAGLE worker builds that backend at "
        "start (eagle_worker_v2.py:327); multi-layer EAGLE has its own worker. No Inkling override turns "
        "multi-layer EAGLE on (arg_groups/overrides.py:1125-1172), and the automatic parameters for Inkling are "
        "the default (3, 1, 4) (speculative_hook.py:824-825), so a bare EAGLE launch fails. Unchanged in 0.5.23 "
        "(draft_utils.py:15-27, :84-94; eagle_worker_v2.py:405). 0.5.16, which added Inkling, has no such check.",
        fix="Add `--enable-multi-layer-eagle` (what SGLang's message asks), or set `--speculative-num-steps 1`.",
        fix_safety="Unsafe: it changes the draft worker SGLang runs.",
    ),
    bad=Example(
        argv=("--model-path", "./Inkling", "--speculative-algorithm", "EAGLE"),
        target={"architectures": ("InklingForConditionalGeneration",)},
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=(
            "--model-path",
            "./Inkling",
            "--speculative-algorithm",
            "EAGLE",
            MULTI_LAYER,
        ),
        target={"architectures": ("InklingForConditionalGeneration",)},
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.16: python/sglang/srt/speculative/draft_utils.py (create_decode_backend builds the backend without an Inkling check)",
        "sglang 0.5.17: python/sglang/srt/speculative/draft_utils.py:13-25, 60-67",
        "sglang 0.5.17: python/sglang/srt/speculative/eagle_worker_v2.py:327",
        "sglang 0.5.17: python/sglang/srt/arg_groups/overrides.py:1125-1172; arg_groups/speculative_hook.py:824-825",
        "sglang 0.5.23: python/sglang/srt/speculative/draft_utils.py:15-27, 84-94; eagle_worker_v2.py:405",
    ),
    sglang_versions=">=0.5.17",
    log_signatures=(r"Inkling's draft model runs its own short convs",),
)
