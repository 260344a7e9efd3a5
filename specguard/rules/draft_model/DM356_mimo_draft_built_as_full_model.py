"""DM356 mimo-draft-built-as-full-model."""

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

MIMO = "MiMoForCausalLM"
DRAFT_PATH = "--speculative-draft-model-path"


def drafts_with_mimo(ctx: CheckContext) -> bool:
    if ctx.draft is not None and ctx.draft.architecture is not None:
        return ctx.draft.architecture == MIMO
    draft_path = ctx.spec.item(DRAFT_PATH)
    model_path = ctx.spec.item("--model-path")
    target_is_mimo = ctx.target is not None and ctx.target.architecture == MIMO
    return (
        target_is_mimo
        and draft_path is not None
        and model_path is not None
        and draft_path.values == model_path.values
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE" or not drafts_with_mimo(ctx):
        return
    yield RULE.finding(
        f"{ctx.spec.get('speculative_algorithm')} with a {MIMO} draft in SGLang {ctx.version}: this release has no MiMo "
        "MTP draft class, so the draft worker loads the whole MiMo model a second time and runs every draft step "
        "through all its layers, ignoring the target's hidden states. The weights and KV cache take twice the "
        "memory and drafting costs as much as decoding, so speculation is slower than none. SGLang 0.4.6.post5 "
        "loads only the MTP layers (MiMoMTP); upgrade, or serve without speculation",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own draft class mapping
    check=check,
    code="DM356",
    category=Category.PERF,
    name="mimo-draft-built-as-full-model",
    summary="a MiMo checkpoint as EAGLE/NEXTN draft is loaded as the whole model, not its MTP layers "
    "(0.4.6.post3-0.4.6.post4)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm` EAGLE or NEXTN with a draft whose config.json architectures[0] is "
        "MiMoForCausalLM (MiMo-7B's own path as draft, for its MTP layers), SGLang 0.4.6.post3 or 0.4.6.post4.",
        why="0.4.6.post3 registers MiMoForCausalLM (models/xiaomi_mimo.py:46, EntryClass :171; 0.4.6.post2 has no "
        "MiMo) with the EAGLE hooks (get_embed_and_head :156, set_embed_and_head :159, which the EAGLE worker calls, "
        "speculative/eagle_worker.py:120, :137), but configs/model_config.py has no draft rewrite for it, so the "
        "draft worker builds the full MiMoForCausalLM again. 0.4.6.post5 rewrites a MiMoForCausalLM draft to MiMoMTP "
        "(model_config.py:101-102; models/mimo_mtp.py:99, EntryClass :220), which loads only the MTP layer and "
        "reads the target's hidden states. The output stays verified; the cost is the second model.",
        fix="Upgrade to SGLang 0.4.6.post5, or serve MiMo without speculation. No automatic fix.",
        fix_safety="No fix: the release is the user's choice.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "XiaomiMiMo/MiMo-7B-RL",
            "--speculative-algorithm",
            "NEXTN",
            "--speculative-draft-model-path",
            "XiaomiMiMo/MiMo-7B-RL",
        ),
        target={"architectures": (MIMO,)},
        draft={"architectures": (MIMO,)},
        sglang_version="0.4.6.post4",
    ),
    good=Example(
        argv=(
            "--model-path",
            "XiaomiMiMo/MiMo-7B-RL",
            "--speculative-algorithm",
            "NEXTN",
            "--speculative-draft-model-path",
            "XiaomiMiMo/MiMo-7B-RL",
        ),
        target={"architectures": (MIMO,)},
        draft={"architectures": (MIMO,)},
        sglang_version="0.4.6.post5",
    ),
    sources=(
        "sglang 0.4.6.post2: python/sglang/srt/models/ (no MiMo)",
        "sglang 0.4.6.post3: python/sglang/srt/models/xiaomi_mimo.py:46,156-159,171",
        "sglang 0.4.6.post4: python/sglang/srt/models/xiaomi_mimo.py:156-165; speculative/eagle_worker.py:120,137; configs/model_config.py (no MiMo draft rewrite)",
        "sglang 0.4.6.post5: python/sglang/srt/configs/model_config.py:101-102; models/mimo_mtp.py:99,220",
    ),
    sglang_versions=">=0.4.6.post3,<=0.4.6.post4",
)
