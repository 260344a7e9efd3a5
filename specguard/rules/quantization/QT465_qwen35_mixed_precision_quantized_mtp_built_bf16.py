"""QT465 qwen35-mixed-precision-quantized-mtp-built-bf16."""

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
    MTP_PREFIX,
    QWEN35_MTP_TARGETS,
)

# config.json quantization_config that SGLang parses as ModelOpt (no quant_method, or "modelopt"): MIXED_PRECISION
# with an NVFP4 layer is modelopt_mixed, without one w4afp8 (0.5.15 configs/model_config.py:1153-1163; 0.5.19
# :1251-1257, 1359-1368).
MODELOPT_METHODS = (None, "modelopt")
MIXED_PRECISION = "MIXED_PRECISION"
NVFP4_ALGOS = frozenset({"NVFP4", "W4A16_NVFP4"})
QUANT_FLAGS = ("--quantization", "--speculative-draft-model-quantization")


def quantized_mtp_layers(ctx: CheckContext) -> list[str]:
    """The mtp.* modules a modelopt_mixed Qwen3.5 checkpoint's config.json lists as NVFP4, else []. Packed NVFP4
    weights cannot fit a BF16 parameter; an FP8 one has the BF16 shape and is copied in without its scale, a
    wrong draft rather than a failed start, which this rule does not judge."""
    target = ctx.target
    if (
        target is None
        or target.quantization not in MODELOPT_METHODS
        or target.quant_algo != MIXED_PRECISION
    ):
        return []
    layers = target.quantized_layers or {}
    if not NVFP4_ALGOS & set(layers.values()):
        return []  # w4afp8, not modelopt_mixed
    return [
        name
        for name, algo in layers.items()
        if name.startswith(MTP_PREFIX) and algo in NVFP4_ALGOS
    ]


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    if (
        ctx.algorithm != "EAGLE"
        or target is None
        or target.architecture not in QWEN35_MTP_TARGETS
    ):
        return
    if not ctx.drafts_from_target_checkpoint or any(
        ctx.spec.has(flag) for flag in QUANT_FLAGS
    ):
        return
    quantized = quantized_mtp_layers(ctx)
    if not quantized:
        return
    yield RULE.finding(
        f"a ModelOpt mixed-precision (NVFP4) checkpoint of {target.architecture} whose quantized_layers include its "
        f"MTP layer ({quantized[0]}{' ...' if len(quantized) > 1 else ''}), drafted from that MTP layer in SGLang "
        f"{ctx.version}: this release builds the MTP draft of every modelopt_mixed checkpoint unquantized, so the "
        "quantized MTP weights do not fit its BF16 parameters and loading the draft fails at start. SGLang 0.5.20 "
        "keeps the quantization when quantized_layers lists mtp.* modules: upgrade, or serve without speculative "
        "decoding",
        flags=("--model-path", "--speculative-algorithm"),
    )


QWEN35_NVFP4_MTP = (
    "--model-path",
    "/ckpt/qwen3.5-397b-a17b-nvfp4-mixed",
    "--tp",
    "4",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)
QWEN35_MIXED = {
    "architectures": ("Qwen3_5MoeForConditionalGeneration",),
    "model_type": "qwen3_5_moe",
    "quantization": "modelopt",
    "quant_algo": MIXED_PRECISION,
    "quantized_layers": {
        "model.language_model.layers.0.mlp.experts": "NVFP4",
        "mtp.layers.0.mlp.experts": "NVFP4",
    },
}

RULE = Rule(
    check=check,
    code="QT465",
    category=Category.START,
    name="qwen35-mixed-precision-quantized-mtp-built-bf16",
    summary="A ModelOpt mixed-precision Qwen3.5 checkpoint whose MTP layer is quantized fails to load its MTP draft "
    "(0.5.15 to 0.5.19)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE/NEXTN drafting from the target's own MTP layer on a Qwen3.5 target (`architectures[0]` "
        "Qwen3_5ForConditionalGeneration or Qwen3_5MoeForConditionalGeneration) whose config.json "
        "`quantization_config` is ModelOpt (`quant_method` absent or `modelopt`) with `quant_algo: MIXED_PRECISION`, "
        "an NVFP4 entry in `quantized_layers` (so SGLang serves it as modelopt_mixed) and NVFP4 (or W4A16_NVFP4) "
        "`quantized_layers` entries starting with `mtp.`, without `--quantization` or `--speculative-draft-model-quantization`, SGLang 0.5.15 "
        "to 0.5.19. A checkpoint that declares its quantization only in hf_quant_config.json is not judged.",
        why="0.5.15 makes the Qwen3.5 MTP draft drop its quant config for modelopt_mixed as for modelopt_fp4 ('The MTP "
        "model is unquantized in the nvfp4 checkpoint', models/qwen3_5_mtp.py:62-66; 0.5.19 `_mtp_quant_config` "
        ":59-67); 0.5.14 handed the mixed-precision config to the draft, which resolves each module's algorithm from "
        "quantized_layers. The BF16 draft then receives the packed quantized mtp.* weights, whose shapes do not fit "
        "(qwen3_5_mtp.py load_weights skips only scale and bias tensors, :280-292): packed NVFP4 weights do not fit; "
        "an FP8 mtp.* entry has the BF16 shape and loads without its scale (a wrong draft, not judged here). 0.5.20 keeps the config when an entry "
        "of quantized_layers starts with `mtp.` ('MIXED_PRECISION lists mtp.* layers only when the MTP head is "
        "quantized', :61-65). SGLang reads a config.json ModelOpt section as modelopt_mixed only with an NVFP4 layer "
        "(configs/model_config.py: 0.5.15 :1153-1163, 0.5.19 :1359-1368), else as w4afp8.",
        fix="Use SGLang 0.5.20 or later, or serve without speculative decoding. No automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=QWEN35_NVFP4_MTP, target=QWEN35_MIXED, gpu="B200", sglang_version="0.5.19"
    ),
    good=Example(
        argv=QWEN35_NVFP4_MTP, target=QWEN35_MIXED, gpu="B200", sglang_version="0.5.20"
    ),
    sources=(
        "sglang 0.5.14: python/sglang/srt/models/qwen3_5_mtp.py:62-63 (drops only modelopt_fp4; modelopt_mixed reaches the draft)",
        "sglang 0.5.15: python/sglang/srt/models/qwen3_5_mtp.py:62-66; configs/model_config.py:1044,1153-1163",
        "sglang 0.5.19: python/sglang/srt/models/qwen3_5_mtp.py:59-67,280-292; configs/model_config.py:1251-1257,1359-1368",
        "sglang 0.5.19: python/sglang/srt/layers/quantization/modelopt_quant.py:852-870,935-965",
        "sglang 0.5.20: python/sglang/srt/models/qwen3_5_mtp.py:61-65",
    ),
    sglang_versions=">=0.5.15,<0.5.20",
)
