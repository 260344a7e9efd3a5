"""QT462 qwen35-quark-bf16-mtp-built-quantized."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.sglang_facts.changes import QUARK_PACKS_GATE_UP

# The targets whose own checkpoint SGLang drafts from as Qwen3_5ForCausalLMMTP (0.5.9 configs/model_config.py:324-329;
# 0.5.11 :390-395).
QWEN35_MTP_TARGETS = frozenset(
    {"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"}
)
QUARK = "quark"
# Quark exclude entries under this prefix name MTP modules kept in BF16 (0.5.12 models/qwen3_5_mtp.py:65-75).
MTP_PREFIX = "mtp."
# Checkpoint names that the draft's fused modules never match in Quark's exclude test, so listing one leaves a quantized
# module for BF16 weights: the q/k/v shards of qkv_proj (no packed mapping names them for the MTP class), the
# gate/up shards of gate_up_proj until the loader maps them for Quark, and per-expert weights (the FusedMoE prefix is
# mlp.experts, quark/quark.py:76-104).
QKV_SHARD_SUFFIXES = (".q_proj", ".k_proj", ".v_proj")
GATE_UP_SHARD_SUFFIXES = (".gate_proj", ".up_proj")
EXPERT_PART = ".experts."
DRAFT_QUANT = "--speculative-draft-model-quantization"


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    if (
        ctx.algorithm != "EAGLE"
        or target is None
        or target.architecture not in QWEN35_MTP_TARGETS
    ):
        return
    if (
        not ctx.drafts_from_target_checkpoint
        or ctx.spec.has(DRAFT_QUANT)
        or target.quantization != QUARK
    ):
        return
    excluded = [
        name
        for name in target.quantization_exclude or ()
        if _built_quantized_in_bf16(name, ctx.version)
    ]
    if not excluded:
        return
    yield RULE.finding(
        f"a Quark checkpoint of {target.architecture} whose quantization_config.exclude keeps its MTP layer in BF16 "
        f"({excluded[0]}{' ...' if len(excluded) > 1 else ''}), drafted from its own MTP layer in SGLang {ctx.version}: "
        "this release builds the MTP draft with the target's Quark config, and its fused modules (qkv_proj, the routed "
        "experts) do not match the unfused names in the exclude list, so they are allocated quantized while the "
        "checkpoint holds BF16 weights and loading the draft fails at start. SGLang 0.5.12 builds such a draft "
        "unquantized: upgrade, or serve without speculative decoding",
        flags=("--model-path", "--speculative-algorithm"),
    )


def _built_quantized_in_bf16(excluded: str, version: Version) -> bool:
    """An MTP exclude entry that names a module SGLang builds fused, whose own prefix no entry matches."""
    unmatched: tuple[str, ...] = QKV_SHARD_SUFFIXES
    if not QUARK_PACKS_GATE_UP.present_in(version):
        unmatched += GATE_UP_SHARD_SUFFIXES
    return excluded.startswith(MTP_PREFIX) and (
        excluded.endswith(unmatched) or EXPERT_PART in excluded
    )


QWEN35_MXFP4_MTP = (
    "--model-path",
    "amd/Qwen3.5-397B-A17B-MXFP4",
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
QWEN35_QUARK = {
    "architectures": ("Qwen3_5MoeForConditionalGeneration",),
    "model_type": "qwen3_5_moe",
    "quantization": QUARK,
    "quantization_exclude": ("lm_head", "mtp.fc", "mtp.layers.0.self_attn.q_proj"),
}

RULE = Rule(
    check=check,
    code="QT462",
    category=Category.START,
    name="qwen35-quark-bf16-mtp-built-quantized",
    summary="A Quark Qwen3.5 checkpoint whose MTP layer is excluded from quantization fails to load its MTP draft "
    "(0.5.9 to 0.5.11)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE/NEXTN drafting from the target's own MTP layer on a Qwen3.5 target (`architectures[0]` "
        "Qwen3_5ForConditionalGeneration or Qwen3_5MoeForConditionalGeneration) whose config.json "
        "`quantization_config` is Quark (`quant_method: quark`) whose `exclude` names an MTP module SGLang builds fused "
        "(an `mtp.` entry ending in `.q_proj`, `.k_proj` or `.v_proj`, before 0.5.11 also `.gate_proj` or `.up_proj`, "
        "or naming per-expert weights `.experts.`), "
        "without `--speculative-draft-model-quantization`, SGLang 0.5.9 to 0.5.11.",
        why="Such checkpoints (the Quark MXFP4 Qwen3.5 exports) ship the MTP module in BF16 and list its modules in "
        "`exclude`. Up to 0.5.11 `Qwen3_5ForCausalLMMTP.__init__` drops the draft's quant config only for "
        "modelopt_fp4 (and on NPU) (0.5.9 models/qwen3_5_mtp.py:51-53; 0.5.11 :56-63), so the draft is built with "
        "the Quark config, which skips a module only when its own prefix matches an exclude entry "
        "(layers/quantization/quark/quark.py:76-104, quark/utils.py:36-89): the MTP class declares no "
        "packed_modules_mapping and the loader maps only gate_up_proj for Quark, from 0.5.11 (model_loader/loader.py:201-207; "
        "none in 0.5.10.post1), so its fused `qkv_proj` (and `gate_up_proj` before 0.5.11) and the `FusedMoE` experts "
        "(prefix `mlp.experts`) match none of the unfused names and get quantized parameters that the BF16 weights do "
        "not fit. Entries naming modules built unfused (`mtp.fc`, `o_proj`, `down_proj`) are matched as they are and "
        "break nothing. 0.5.12 drops the quant config whenever an "
        "exclude entry starts with `mtp.` ('so linear/MoE weight loaders allocate bf16 shapes (see "
        "sgl-project/sglang#23113)', qwen3_5_mtp.py:65-75). 0.5.8.post1 has no Qwen3.5 model.",
        fix="Use SGLang 0.5.12 or later, or serve without speculative decoding. No automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=QWEN35_MXFP4_MTP,
        target=QWEN35_QUARK,
        gpu="MI355X",
        sglang_version="0.5.11",
    ),
    good=Example(
        argv=QWEN35_MXFP4_MTP,
        target=QWEN35_QUARK,
        gpu="MI355X",
        sglang_version="0.5.12",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/23113 ([Bug] [rocm] qwen 3.5 mtp fp4 broken)",
        "sglang 0.5.8.post1: python/sglang/srt/models (no qwen3_5.py, no qwen3_5_mtp.py)",
        "sglang 0.5.9: python/sglang/srt/models/qwen3_5_mtp.py:51-53; configs/model_config.py:324-329",
        "sglang 0.5.11: python/sglang/srt/models/qwen3_5_mtp.py:56-63; model_loader/loader.py:192-207",
        "sglang 0.5.11: python/sglang/srt/layers/quantization/quark/quark.py:76-104; layers/quantization/quark/utils.py:36-89",
        "sglang 0.5.12: python/sglang/srt/models/qwen3_5_mtp.py:65-75",
    ),
    sglang_versions=">=0.5.9,<0.5.12",
)
