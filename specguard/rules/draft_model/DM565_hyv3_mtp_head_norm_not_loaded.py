"""DM565 hyv3-mtp-head-norm-not-loaded."""

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

# The target whose own MTP layer SGLang drafts with as HYV3ForCausalLMNextN (0.5.11 configs/model_config.py:405-406).
HYV3_TARGET = "HYV3ForCausalLM"


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    if ctx.algorithm != "EAGLE" or target is None or target.architecture != HYV3_TARGET:
        return
    if not ctx.drafts_from_target_checkpoint:
        return
    layer = (
        target.num_hidden_layers
        if target.num_hidden_layers is not None
        else "<num_hidden_layers>"
    )
    yield RULE.finding(
        f"EAGLE on the MTP layer of {HYV3_TARGET} in SGLang {ctx.version}: the released checkpoints store the draft "
        f"head's output norm as model.layers.{layer}.final_layernorm.weight, which this release's NextN loader maps "
        "to model.decoder.final_layernorm, a name no parameter has, so the weight is skipped and the head's norm "
        "keeps its initial ones: the draft predicts poorly and acceptance drops (verify keeps the output right). "
        "SGLang 0.5.16 loads it into shared_head.norm: upgrade for the full speed-up",
        flags=("--speculative-algorithm",),
    )


HYV3_MTP = (
    "--model-path",
    "/ckpt/hy-v3",
    "--tp",
    "8",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)
HYV3_FACTS = {
    "architectures": (HYV3_TARGET,),
    "num_hidden_layers": 80,
    "num_nextn_predict_layers": 1,
}

RULE = Rule(
    check=check,
    code="DM565",
    category=Category.PERF,
    name="hyv3-mtp-head-norm-not-loaded",
    summary="EAGLE/NEXTN on a HYV3 target's own MTP layer leaves the draft head's output norm unloaded, lowering "
    "acceptance (0.5.11 to 0.5.15.post1)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE or NEXTN drafting from the target's own MTP layer (no separate `--speculative-draft-model-path`) "
        "on a target whose config.json `architectures[0]` is HYV3ForCausalLM, SGLang 0.5.11 to 0.5.15.post1.",
        why="`HYV3ForCausalLMNextN.load_weights` maps every `model.layers.<num_hidden_layers>.*` tensor other than "
        "enorm/hnorm/eh_proj to `model.decoder.*` (0.5.11 and 0.5.15.post1 models/hunyuan_v3_nextn.py:161-189) and "
        "skips a name that matches no parameter (:246-247); the head's norm is `shared_head.norm` (:76-77), an "
        "RMSNorm initialised to ones (layers/layernorm.py:222), so a checkpoint that stores it as "
        "`model.layers.<N>.final_layernorm.weight` leaves it unloaded. 0.5.16 maps that name to "
        "`model.shared_head.norm.weight`, its comment saying 'Released checkpoints store the draft head's output "
        "norm as model.layers.<N>.final_layernorm.weight' (hunyuan_v3_nextn.py:189-192). The draft is only "
        "proposed: verify keeps the output right, the speed-up is lost. 0.5.10.post1 has no HYV3 NextN model.",
        fix="Use SGLang 0.5.16 or later. No automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=HYV3_MTP, target=HYV3_FACTS, gpu="H200", sglang_version="0.5.15.post1"
    ),
    good=Example(argv=HYV3_MTP, target=HYV3_FACTS, gpu="H200", sglang_version="0.5.16"),
    sources=(
        "sglang 0.5.10.post1: python/sglang/srt/models (no hunyuan_v3_nextn.py)",
        "sglang 0.5.11: python/sglang/srt/models/hunyuan_v3_nextn.py:76-77,161-189; configs/model_config.py:405-406",
        "sglang 0.5.15.post1: python/sglang/srt/models/hunyuan_v3_nextn.py:161-189,246-247; layers/layernorm.py:222",
        "sglang 0.5.16: python/sglang/srt/models/hunyuan_v3_nextn.py:184-192",
    ),
    sglang_versions=">=0.5.11,<0.5.16",
)
