"""PL212 deepep-v2-speculative-draft."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)

TARGET_A2A = "--moe-a2a-backend"
DRAFT_A2A = "--speculative-moe-a2a-backend"
DEEPEP_V2 = "deepep_v2"

# DeepSeek-V3 over 8 GPUs drafting with its own MTP layer (a MoE draft).
DEEPSEEK_V3_NEXTN = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp-size",
    "8",
    "--speculative-algorithm",
    "NEXTN",
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    # NGRAM has no draft model, so the target's backend is not inherited there; a draft backend
    # written explicitly is checked for every algorithm (0.5.19 moe_hook.py:362-376).
    if ctx.algorithm is None:
        return
    draft = ctx.spec.last_value(DRAFT_A2A)
    backend: str | None
    if draft is not None:
        flag, backend = DRAFT_A2A, draft
    elif ctx.algorithm != "NGRAM":
        flag, backend = TARGET_A2A, ctx.spec.last_value(TARGET_A2A)
    else:
        return
    if backend != DEEPEP_V2:
        return
    how = (
        ""
        if flag == DRAFT_A2A
        else f" (the draft inherits {ctx.flag(TARGET_A2A)} when {ctx.flag(DRAFT_A2A)} is unset)"
    )
    yield RULE.finding(
        f"{ctx.flag(flag)} {DEEPEP_V2} with {ctx.algorithm} in SGLang {ctx.version}: DeepEP v2 is not validated as a "
        f"speculative draft's MoE all-to-all{how}, so argument handling raises ValueError 'DeepEP v2 MoE is not "
        f"validated as a speculative draft backend'. Give the draft another backend with {ctx.flag(DRAFT_A2A)} "
        f"(deepep, or none), or drop {ctx.flag('--speculative-algorithm')}",
        flags=(flag, "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="PL212",
    category=Category.START,
    name="deepep-v2-speculative-draft",
    summary="A speculative draft on the deepep_v2 MoE all-to-all (written, or inherited from --moe-a2a-backend) "
    "is refused (0.5.19+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--speculative-moe-a2a-backend deepep_v2` with any speculative algorithm, or `--moe-a2a-backend "
        "deepep_v2` without `--speculative-moe-a2a-backend` and an algorithm other than NGRAM (the draft then "
        "inherits the target's backend), SGLang 0.5.19 or later.",
        why="0.5.19 added the deepep_v2 all-to-all backend (server_args.py:2376, 2391; absent from 0.5.18) and "
        "`validate_deepep_v2_speculative_draft` (arg_groups/moe_hook.py:362-376), run at the end of argument "
        "resolution (pipeline.py:366-367): it takes the draft's backend, or the target's when unset and the "
        "algorithm is not NGRAM, and raises ValueError for deepep_v2. It runs whatever the draft's architecture, "
        "dense EAGLE heads included. Unchanged in 0.5.23 (moe_hook.py:624-638, pipeline.py:374).",
        fix="Set `--speculative-moe-a2a-backend` to another backend (deepep, or none). The choice depends on the "
        "draft's MoE layers and the expert-parallel layout, so no automatic fix.",
        fix_safety="No fix: which backend the draft's experts should use is the user's choice.",
    ),
    bad=Example(
        argv=(*DEEPSEEK_V3_NEXTN, TARGET_A2A, DEEPEP_V2), sglang_version="0.5.19"
    ),
    good=Example(
        argv=(*DEEPSEEK_V3_NEXTN, TARGET_A2A, DEEPEP_V2, DRAFT_A2A, "deepep"),
        sglang_version="0.5.19",
    ),
    sources=(
        "sglang 0.5.18: python/sglang/srt/server_args.py (no deepep_v2 a2a backend)",
        "sglang 0.5.19: python/sglang/srt/server_args.py:2376,2391",
        "sglang 0.5.19: python/sglang/srt/arg_groups/moe_hook.py:362-376",
        "sglang 0.5.19: python/sglang/srt/arg_groups/pipeline.py:366-368",
        "sglang 0.5.23: python/sglang/srt/arg_groups/moe_hook.py:624-638; arg_groups/pipeline.py:374",
    ),
    sglang_versions=">=0.5.19",
    log_signatures=(r"DeepEP v2 MoE is not validated as a speculative draft backend",),
)
