"""DM104 mtp-weights-missing."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs

# Targets whose config's num_nextn_predict_layers names MTP weights SGLang loads from the target
# checkpoint, where the weights' names are known (specguard/weights.py mtp_prefixes):
# model.layers.{num_hidden_layers} for DeepSeek (deepseek_weight_loader.py:570-577) and GLM-4.5+
# (glm4_moe.py:1077-1086), model.mtp_layers for MiMo (mimo_mtp.py:185).
MTP_CHECKPOINT_FAMILIES = frozenset(
    {"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "Glm4MoeForCausalLM", "MiMoForCausalLM"}
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    if ctx.algorithm != "EAGLE" or target is None or target.weights is None or not target.has_mtp_layers:
        return
    if target.architecture not in MTP_CHECKPOINT_FAMILIES or target.weights.mtp_tensors:
        return
    draft_path = ctx.spec.get("speculative_draft_model_path")
    if draft_path and draft_path != ctx.spec.get("model_path"):
        return  # a separate draft checkpoint: the target's own MTP layer is not loaded
    yield RULE.finding(
        f"the target's config.json claims num_nextn_predict_layers {target.num_nextn_predict_layers}, but none of "
        f"its {target.weights.tensor_count} tensors is an MTP layer (read from {target.weights.source}): this "
        "checkpoint was exported without them (common in re-quantized copies). SGLang loads the MTP draft from "
        "the target's checkpoint, finds nothing, and drafts with uninitialised weights: acceptance collapses "
        "with no error. Use a checkpoint that keeps the MTP layer, or drop speculative decoding",
        flags=("--model-path", "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="DM104",
    category=Category.START,
    name="mtp-weights-missing",
    summary="MTP speculation on a target checkpoint that lacks the MTP layer's weights",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="With EAGLE/NEXTN on the target's own MTP layers, checks the target's safetensors tensor names "
        "(headers, or the index's weight_map) for the MTP layer its config claims.",
        why="SGLang's draft worker for DeepSeek V3/R1/V3.2, GLM-4.5+ and MiMo loads the MTP module from the "
        "target checkpoint: DeepSeek and GLM under `model.layers.{num_hidden_layers}` "
        "(`models/deepseek_common/deepseek_weight_loader.py:570-583`, `models/glm4_moe.py:1077-1086`), MiMo "
        "under `model.mtp_layers.` (`models/mimo_mtp.py:185`). Names it does not find are simply not loaded, "
        "so a checkpoint re-exported without the MTP layer (the config still says `num_nextn_predict_layers: 1`) "
        "starts, and drafts with uninitialised weights.",
        fix="Use the original checkpoint (or a quantized one that keeps the MTP layer). No automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-V3", "--speculative-algorithm", "EAGLE"),
        target={"architectures": ("DeepseekV3ForCausalLM",), "num_hidden_layers": 61, "num_nextn_predict_layers": 1,
                "weights": {"source": "example", "tensor_count": 91000, "mtp_tensors": 0}},
    ),
    good=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-V3", "--speculative-algorithm", "EAGLE"),
        target={"architectures": ("DeepseekV3ForCausalLM",), "num_hidden_layers": 61, "num_nextn_predict_layers": 1,
                "weights": {"source": "example", "tensor_count": 91000, "mtp_tensors": 1500}},
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/models/deepseek_common/deepseek_weight_loader.py:560-583",
        "sglang 0.5.23: python/sglang/srt/models/glm4_moe.py:1077-1090",
        "sglang 0.5.23: python/sglang/srt/models/mimo_mtp.py:185",
        "catalog: deepseek-ai/DeepSeek-V3 config.json (num_nextn_predict_layers 1, num_hidden_layers 61)",
    ),
)
