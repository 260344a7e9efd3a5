"""QT561 qwen35-quark-partial-mtp-exclude-built-bf16."""

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
from specguard.rules.quantization.QT462_qwen35_quark_bf16_mtp_built_quantized import (
    DRAFT_QUANT,
    MTP_PREFIX,
    QUARK,
    QWEN35_MXFP4_MTP,
    QWEN35_QUARK,
)

# Only the MoE target has routed experts, the signal 0.5.21 reads: a dense target's full and partial MTP excludes
# look alike (neither names mlp.experts), so it is left quiet.
QWEN35_MOE_MTP_TARGET = "Qwen3_5MoeForConditionalGeneration"
# 0.5.21 models/qwen3_5_mtp.py:83-90: the MTP is built unquantized only when its excluded layers include these.
ROUTED_EXPERTS = "mlp.experts"


def mtp_excludes(ctx: CheckContext) -> list[str]:
    """The target's Quark exclude entries that name MTP modules (models/qwen3_5_mtp.py's own test)."""
    target = ctx.target
    if target is None or target.quantization != QUARK:
        return []
    return [
        name
        for name in target.quantization_exclude or ()
        if name.startswith(MTP_PREFIX)
    ]


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    if (
        ctx.algorithm != "EAGLE"
        or target is None
        or target.architecture != QWEN35_MOE_MTP_TARGET
    ):
        return
    # On NPU the draft drops its quant config whatever the exclude list says (0.5.20 qwen3_5_mtp.py:71-72).
    if (
        not ctx.drafts_from_target_checkpoint
        or ctx.spec.has(DRAFT_QUANT)
        or ctx.spec.last_value("--device") == "npu"
    ):
        return
    excluded = mtp_excludes(ctx)
    if not excluded or any(ROUTED_EXPERTS in name for name in excluded):
        return
    yield RULE.finding(
        f"a Quark checkpoint of {target.architecture} whose quantization_config.exclude names some MTP modules "
        f"({excluded[0]}{' ...' if len(excluded) > 1 else ''}) but not its routed experts (mlp.experts), drafted from "
        f"its own MTP layer in SGLang {ctx.version}: this release builds the whole MTP draft unquantized as soon as "
        "one mtp.* entry is excluded, so its MoE allocates BF16 experts that the MXFP4 expert shards do not fit and "
        "loading the draft fails at start. SGLang 0.5.21 keeps the quantization unless the routed experts are "
        "excluded: upgrade, or serve without speculative decoding",
        flags=("--model-path", "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="QT561",
    category=Category.START,
    name="qwen35-quark-partial-mtp-exclude-built-bf16",
    summary="A Quark Qwen3.5 MoE checkpoint that excludes some MTP modules but keeps the MTP experts quantized fails "
    "to load its MTP draft (0.5.12 to 0.5.20)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE/NEXTN drafting from the target's own MTP layer on a Qwen3.5 MoE target (`architectures[0]` "
        "Qwen3_5MoeForConditionalGeneration) whose config.json `quantization_config` is Quark (`quant_method: quark`) "
        "and whose `exclude` has `mtp.` entries none of which contains `mlp.experts`, without "
        "`--speculative-draft-model-quantization`, not on `--device npu`, SGLang 0.5.12 to 0.5.20.",
        why="0.5.12 made the Qwen3.5 MTP draft drop its Quark config whenever any exclude entry starts with `mtp.`, "
        "for checkpoints that ship the whole MTP module in BF16 (models/qwen3_5_mtp.py:65-75, sglang#23113; 0.5.20 "
        "`_mtp_quant_config` :76-83, used by the constructor :110 and the loader's fusion gate :92). Mixed exports keep "
        "the routed experts MXFP4 while attention, the shared expert and fc are excluded; for those the draft's MoE "
        "allocates BF16 experts that 'the MXFP4 checkpoint shards no longer fit' (0.5.21 qwen3_5_mtp.py:76-82). 0.5.21 "
        "skips the quantization only when an excluded mtp.* layer contains `mlp.experts` (:83-90) and lets the "
        "per-layer exclusions keep the other modules BF16. 0.5.9 to 0.5.11 fail differently (QT462).",
        fix="Use SGLang 0.5.21 or later, or serve without speculative decoding. No automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=QWEN35_MXFP4_MTP,
        target={
            **QWEN35_QUARK,
            "quantization_exclude": (
                "lm_head",
                "mtp.fc",
                "mtp.layers.0.self_attn.q_proj",
            ),
        },
        gpu="MI355X",
        sglang_version="0.5.20",
    ),
    good=Example(
        argv=QWEN35_MXFP4_MTP,
        target={
            **QWEN35_QUARK,
            "quantization_exclude": (
                "lm_head",
                "mtp.fc",
                "mtp.layers.0.self_attn.q_proj",
            ),
        },
        gpu="MI355X",
        sglang_version="0.5.21",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/23113 ([Bug] [rocm] qwen 3.5 mtp fp4 broken)",
        "sglang 0.5.11: python/sglang/srt/models/qwen3_5_mtp.py:56-63 (no Quark exclude test)",
        "sglang 0.5.12: python/sglang/srt/models/qwen3_5_mtp.py:65-75",
        "sglang 0.5.20: python/sglang/srt/models/qwen3_5_mtp.py:51-83,92,110",
        "sglang 0.5.21: python/sglang/srt/models/qwen3_5_mtp.py:50-90",
    ),
    sglang_versions=">=0.5.12,<0.5.21",
)
