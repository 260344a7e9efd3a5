"""DM352 glm47-flash-mtp-built-as-gqa."""

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

GLM4_MOE_LITE = "Glm4MoeLiteForCausalLM"
DRAFT_PATH = "--speculative-draft-model-path"


def drafts_with_own_mtp_layer(ctx: CheckContext) -> bool:
    if not ctx.spec.has(DRAFT_PATH):
        return True  # SGLang fills the target's own path in (0.5.8 server_args.py:2174-2181)
    return ctx.draft is not None and ctx.draft.architecture == GLM4_MOE_LITE


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "EAGLE"
        or ctx.target is None
        or ctx.target.architecture != GLM4_MOE_LITE
        or not drafts_with_own_mtp_layer(ctx)
    ):
        return
    yield RULE.finding(
        f"{ctx.spec.get('speculative_algorithm')} on {GLM4_MOE_LITE} (GLM-4.7-Flash) in SGLang {ctx.version}: the MTP "
        "draft is loaded as Glm4MoeForCausalLMNextN, a GQA decoder layer, over this MLA checkpoint, and its KV "
        "pool takes v_head_dim from the config while the layer writes head_dim-wide values, so the first draft "
        "forward (the draft CUDA-graph capture at start-up) fails ('value tensor of shape [bs, 5, 64] cannot be "
        "broadcast to [bs, 5, 256]'). SGLang 0.5.13 builds an MLA NextN draft for this model; upgrade, or serve "
        "it without MTP",
        flags=("--speculative-algorithm",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own draft class mapping
    check=check,
    code="DM352",
    category=Category.START,
    name="glm47-flash-mtp-built-as-gqa",
    summary="GLM-4.7-Flash's MTP draft is built as the GQA Glm4MoeForCausalLMNextN and fails at its first forward "
    "(0.5.8-0.5.12.post1)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm` EAGLE or NEXTN on a target whose config.json architectures[0] is "
        "Glm4MoeLiteForCausalLM (GLM-4.7-Flash), drafting with its own MTP layer (no "
        "`--speculative-draft-model-path`, or one whose architecture is the same), SGLang 0.5.8 through 0.5.12.post1.",
        why="0.5.8 registers Glm4MoeLiteForCausalLM (an MLA model) and rewrites its draft's architecture to "
        "Glm4MoeForCausalLMNextN (configs/model_config.py:275-279), whose decoder is the GQA Glm4MoeDecoderLayer "
        "(models/glm4_moe_nextn.py:35, :70). The renamed draft drops out of the MLA list (:381-393), so its model "
        "config takes head_dim and v_head_dim straight from config.json (:370-378) and builds an MHA KV pool "
        "with the MLA v_head_dim, while Glm4MoeAttention writes values head_dim wide (0.5.12.post1 "
        "models/glm4_moe.py:221, :804-806). sglang#26088 reports the result on GLM-4.7-Flash with MTP: 'value "
        "tensor of shape [bs, 5, 64] cannot be broadcast to [bs, 5, 256]' during draft CUDA graph capture. "
        "0.5.12.post1 still maps it so (model_config.py:430-434, MLA list :598-612); 0.5.13 maps it to the new "
        "MLA Glm4MoeLiteForCausalLMNextN (model_config.py:431-435, :619-620; models/glm4_moe_lite_nextn.py:133, "
        "EntryClass :182). 0.5.7 has no Glm4MoeLiteForCausalLM.",
        fix="Upgrade to SGLang 0.5.13, or serve GLM-4.7-Flash without MTP. No automatic fix.",
        fix_safety="No fix: the release is the user's choice.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "zai-org/GLM-4.7-Flash",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
        ),
        target={"architectures": (GLM4_MOE_LITE,)},
        sglang_version="0.5.12.post1",
    ),
    good=Example(
        argv=(
            "--model-path",
            "zai-org/GLM-4.7-Flash",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
        ),
        target={"architectures": (GLM4_MOE_LITE,)},
        sglang_version="0.5.13",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/pull/26088",
        "sglang 0.5.7: python/sglang/srt/ (no Glm4MoeLiteForCausalLM)",
        "sglang 0.5.8: python/sglang/srt/configs/model_config.py:275-279,370-378,381-393; models/glm4_moe_nextn.py:35,70,162",
        "sglang 0.5.12.post1: python/sglang/srt/configs/model_config.py:430-434,575-586,598-612; models/glm4_moe.py:221,804-806",
        "sglang 0.5.13: python/sglang/srt/configs/model_config.py:431-435,619-620; models/glm4_moe_lite_nextn.py:133,182",
    ),
    sglang_versions=">=0.5.8,<=0.5.12.post1",
    log_signatures=(
        r"value tensor of shape \[\w+, \d+, \d+\] cannot be broadcast to \[\w+, \d+, \d+\]",
    ),
)
