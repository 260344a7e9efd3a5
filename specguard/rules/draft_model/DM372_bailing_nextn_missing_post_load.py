"""DM372 bailing-nextn-missing-post-load."""

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
from specguard.rules.draft_model._common import draft_config
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import BAILING_NEXTN_DRAFT

# The model_type for which BailingMoeForCausalLMNextN takes its loaders from BailingMoeV2_5ForCausalLM,
# which has post_load_weights; every other Bailing config takes BailingMoEForCausalLM's (bailing_moe_nextn.py:215-220).
HYBRID_MODEL_TYPE = "bailing_hybrid"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS:
        return
    facts = draft_config(ctx)
    if (
        facts is None
        or facts.model_type is None
        or facts.model_type == HYBRID_MODEL_TYPE
    ):
        return
    rewrite = BAILING_NEXTN_DRAFT.get(facts.architecture or "")
    if rewrite is None or not rewrite.present_in(ctx.version):
        return
    whose = "the target's" if facts is ctx.target else "the draft's"
    yield RULE.finding(
        f"{whose} config.json ({facts.architecture}, model_type {facts.model_type}) is loaded as the "
        f"BailingMoeForCausalLMNextN draft, which in SGLang {ctx.version} looks up "
        "BailingMoEForCausalLM.post_load_weights, a method that class does not have: building the draft raises "
        "\"AttributeError: type object 'BailingMoEForCausalLM' has no attribute 'post_load_weights'\" after the "
        "target's weights have loaded. Use SGLang 0.5.12 or later, or NGRAM",
        flags=("--speculative-algorithm",)
        if facts is ctx.target
        else ("--speculative-draft-model-path",),
    )


# Ling-mini-2.0 declares BailingMoeV2ForCausalLM with model_type bailing_moe (SGLang's test of its config).
LING_MTP = (
    "--model-path",
    "inclusionAI/Ling-mini-2.0",
    "--speculative-algorithm",
    "NEXTN",
)
LING_FACTS = {
    "architectures": ("BailingMoeV2ForCausalLM",),
    "num_nextn_predict_layers": 1,
}

RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own draft model loading
    check=check,
    code="DM372",
    category=Category.START,
    name="bailing-nextn-missing-post-load",
    summary="A non-hybrid Bailing (Ling) checkpoint cannot draft as its MTP layer (0.5.9 to 0.5.11)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    sglang_versions=">=0.5.9,<0.5.12",
    docs=RuleDocs(
        what="EAGLE/NEXTN (or EAGLE3, STANDALONE) whose draft checkpoint (the target's own path, or a separate "
        "draft) is a Bailing MoE one that SGLang loads as `BailingMoeForCausalLMNextN` (`BailingMoeForCausalLM`, "
        "`BailingMoeV2ForCausalLM`, `BailingMoeV2_5ForCausalLM`) and whose config.json `model_type` is not "
        "`bailing_hybrid` (Ling 2.0: `bailing_moe`), SGLang 0.5.9 to 0.5.11.",
        why="0.5.9 gave `BailingMoeForCausalLMNextN.__init__` a choice of loaders by model_type: `bailing_hybrid` "
        "takes `BailingMoeV2_5ForCausalLM`'s, anything else takes `BailingMoEForCausalLM.load_weights` and "
        "`BailingMoEForCausalLM.post_load_weights` (0.5.9 and 0.5.11 models/bailing_moe_nextn.py:215-220). "
        "`BailingMoEForCausalLM` defines no `post_load_weights` (0.5.9 models/bailing_moe.py:805 onward, 0.5.11 "
        ":808 onward), so the lookup raises AttributeError while the draft model is built. 0.5.8.post1's NextN "
        "draft has no such lookup; 0.5.12 sets `post_load_weights_func = None` for these configs and skips it "
        "(bailing_moe_nextn.py:218-221, :247-253). The rewrite to the NextN draft is configs/model_config.py:374-379 "
        "(0.5.11).",
        fix="Upgrade to SGLang 0.5.12, or speculate with NGRAM. No automatic fix.",
        fix_safety="No fix: it needs another release.",
    ),
    bad=Example(
        argv=LING_MTP,
        target={**LING_FACTS, "model_type": "bailing_moe"},
        sglang_version="0.5.9",
    ),
    good=Example(
        argv=LING_MTP,
        target={**LING_FACTS, "model_type": "bailing_moe"},
        sglang_version="0.5.12",
    ),
    sources=(
        "sglang 0.5.8.post1: python/sglang/srt/models/bailing_moe_nextn.py:123-164 (no post_load_weights lookup)",
        "sglang 0.5.9: python/sglang/srt/models/bailing_moe_nextn.py:215-220; models/bailing_moe.py:805 (no post_load_weights)",
        (
            "sglang 0.5.11: python/sglang/srt/models/bailing_moe_nextn.py:215-220; models/bailing_moe.py:808 (no "
            "post_load_weights); configs/model_config.py:374-379"
        ),
        "sglang 0.5.12: python/sglang/srt/models/bailing_moe_nextn.py:215-221, 247-253",
    ),
    log_signatures=(
        r"type object 'BailingMoEForCausalLM' has no attribute 'post_load_weights'",
    ),
)
