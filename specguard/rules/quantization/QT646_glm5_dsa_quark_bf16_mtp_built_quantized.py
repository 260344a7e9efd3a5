"""QT646 glm5-dsa-quark-bf16-mtp-built-quantized."""

from __future__ import annotations

import re
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
    QUARK,
)
from specguard.rules.spec_params._shared import device

GLM5_DSA = "GlmMoeDsaForCausalLM"
# The draft class these releases use for it, DeepseekV3ForCausalLMNextN, renames DeepSeek's MTP layer only:
# WeightsMapper({"model.layers.61": "model.decoder"}) (0.5.15.post1 models/deepseek_nextn.py:324-331), which the
# loader also applies to Quark's exclude names (model_loader/loader.py, quark.py:114-121).
DEEPSEEK_MTP_LAYER = "model.layers.61"
DRAFT_DECODER = "model.decoder"
# MTP-only modules that sit beside the decoder (norms, never quantized; eh_proj an unquantized nn.Linear before
# 0.5.11): left out, so the rule speaks only of the decoder's modules.
BESIDE_DECODER = (".eh_proj", ".enorm", ".hnorm", ".shared_head")
# Decoder modules the draft never builds with the quant config, so an entry naming one changes nothing: the router
# is a bare Parameter (0.5.15.post1 deepseek_v2.py:434-451), the DSA indexer's weights_proj a BF16 ReplicatedLinear
# without it and wk one too where CUDA fuses it into wk_weights_proj (dsa_indexer.py:409-438; 0.5.9
# nsa_indexer.py:181-201), and every norm. Left out, quiet.
NEVER_QUANTIZED = (".mlp.gate", ".indexer.weights_proj", ".indexer.wk", "norm")
# The routed experts are one FusedMoE module, queried by this prefix whatever expert an entry names.
EXPERTS = ".mlp.experts"


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    if ctx.algorithm != "EAGLE" or target is None or target.architecture != GLM5_DSA:
        return
    if (
        not ctx.drafts_from_target_checkpoint
        or ctx.spec.has(DRAFT_QUANT)
        or target.quantization != QUARK
        or device(ctx)
        != "cuda"  # on NPU the draft's decoder keeps the checkpoint's layer name
    ):
        return
    layers, exclude = target.num_hidden_layers, target.quantization_exclude
    if (
        layers is None
        or exclude is None
        or f"model.layers.{layers}" == DEEPSEEK_MTP_LAYER
    ):
        return
    built_quantized = _excluded_mtp_modules_built_quantized(
        exclude, f"model.layers.{layers}"
    )
    if not built_quantized:
        return
    yield RULE.finding(
        f"a Quark {GLM5_DSA} checkpoint whose quantization_config.exclude keeps MTP modules of layer {layers} in BF16 "
        f"({built_quantized[0]}{' ...' if len(built_quantized) > 1 else ''}), drafted from its own MTP layer in SGLang "
        f"{ctx.version}: the DeepSeek NextN draft class renames only layer 61 and builds the layer as model.decoder.*, "
        "so no exclude entry matches its modules and they get Quark's quantized parameters for BF16 weights. With "
        "a packed scheme (MXFP4) loading the draft fails at start; with FP8 the weights are cast without their scales "
        "and the draft proposes garbage. SGLang 0.5.16 maps these names for GLM-5: upgrade, or serve without "
        "speculative decoding",
        flags=("--model-path", "--speculative-algorithm"),
    )


def _excluded_mtp_modules_built_quantized(
    exclude: tuple[str, ...], mtp_layer: str
) -> list[str]:
    """The exclude entries naming the MTP layer's decoder modules whose draft module no entry matches: SGLang asks
    Quark about each module by its draft name (quark/utils.py should_ignore_layer: equal, or re.match for 're:'),
    against the entries as the 61-only mapper left them (also tried unmapped, to stay quiet when unsure)."""
    entries = set(exclude) | {
        name.replace(DEEPSEEK_MTP_LAYER, DRAFT_DECODER) for name in exclude
    }
    if any(_matches(mtp_layer, entry) for entry in entries):
        return []  # from 0.5.11 the whole draft is built unquantized (deepseek_nextn.py quark check)
    found = []
    for name in exclude:
        if (
            not name.startswith(mtp_layer + ".")
            or any(part in name for part in BESIDE_DECODER)
            or name.endswith(NEVER_QUANTIZED)
        ):
            continue
        module = DRAFT_DECODER + name.removeprefix(mtp_layer)
        if EXPERTS + "." in module:
            module = module[: module.index(EXPERTS) + len(EXPERTS)]
        if not any(_matches(module, entry) for entry in entries):
            found.append(name)
    return found


def _matches(module: str, entry: str) -> bool:
    """Quark's _is_equal_or_regex_match (0.5.15.post1 quark/utils.py:104-120)."""
    if entry.startswith("re:"):
        try:
            return re.match(entry[3:], module) is not None
        except re.error:
            return (
                True  # SGLang would fail on the pattern itself: not this rule's to say
            )
    return entry == module


GLM5_QUARK_MTP = (
    "--model-path",
    "./GLM-5-Quark-MXFP4",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)
GLM5_QUARK = {
    "architectures": (GLM5_DSA,),
    "num_hidden_layers": 78,
    "num_nextn_predict_layers": 1,
    "quantization": QUARK,
    "quantization_exclude": (
        "lm_head",
        "model.layers.78.self_attn.q_a_proj",
        "model.layers.78.self_attn.kv_a_proj_with_mqa",
        "model.layers.78.mlp.experts.0.gate_proj",
    ),
}

RULE = Rule(
    check=check,
    code="QT646",
    category=Category.START,
    name="glm5-dsa-quark-bf16-mtp-built-quantized",
    summary="A Quark GLM-5 (DSA) checkpoint that excludes its MTP layer's modules by name gets a quantized MTP draft "
    "for BF16 weights (0.5.9 to 0.5.15.post1)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE/NEXTN drafting from the target's own MTP layer on a `GlmMoeDsaForCausalLM` target (GPU, not NPU) "
        "whose config.json `quantization_config` is Quark and whose `exclude` names modules of the MTP decoder "
        "layer as `model.layers.<num_hidden_layers>.<module>` (num_hidden_layers not 61; not the router `mlp.gate`, "
        "the indexer's `wk`/`weights_proj` or a norm, which the draft never quantizes), with no entry matching "
        "the draft's module (`model.decoder.<module>`, the routed experts `model.decoder.mlp.experts`) nor the "
        "whole layer `model.layers.<num_hidden_layers>`, without `--speculative-draft-model-quantization`, SGLang "
        "0.5.9 to 0.5.15.post1.",
        why="These releases draft GLM-5 with DeepSeek's NextN class (0.5.9 configs/model_config.py:275-279; "
        "0.5.15.post1 :533-539), which builds the MTP layer as `model.decoder.*` (deepseek_nextn.py:162-186 on "
        "GPU; NPU keeps `layers.<N>`) with the target's quant config. Its name mapper rewrites only "
        "`model.layers.61` (deepseek_nextn.py:324-331), and Quark decides per module by its own name, equal or "
        "`re:` match (quark/quark.py:123-156, quark/utils.py:36-120), so entries naming `model.layers.78.*` "
        "(GLM-5) match no draft module: each is built quantized while the checkpoint holds it in BF16. From 0.5.11 "
        "the draft is built unquantized only when an entry matches the whole `model.layers.<N>` "
        "(deepseek_nextn.py:356-366); per-module names do not. A packed scheme's parameters cannot take the BF16 "
        "tensors (the load fails); an FP8 scheme casts them and never loads their scales (a broken draft). The "
        "Quark scheme (and `layer_quant_config`) is not read, so the finding is a warning. 0.5.16 gives GLM-5 its "
        "own GlmMoeDsaForCausalLMNextN, which maps `model.layers.<N>.*` exclude and layer_quant_config names to "
        "the draft's (glm4_moe.py:1471-1530; model_config.py:561-562). 0.5.8.post1 has no GlmMoeDsaForCausalLM.",
        fix="Use SGLang 0.5.16 or later, or serve without speculative decoding. No automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=GLM5_QUARK_MTP,
        target=GLM5_QUARK,
        gpu="MI355X",
        sglang_version="0.5.15.post1",
    ),
    good=Example(
        argv=GLM5_QUARK_MTP,
        target=GLM5_QUARK,
        gpu="MI355X",
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.8.post1: python/sglang/srt/configs/model_config.py (no GlmMoeDsaForCausalLM)",
        "sglang 0.5.9: python/sglang/srt/configs/model_config.py:275-279; models/deepseek_nextn.py:103-121,215-217",
        "sglang 0.5.9: python/sglang/srt/layers/quantization/quark/quark.py:77-81",
        "sglang 0.5.15.post1: python/sglang/srt/configs/model_config.py:533-539",
        "sglang 0.5.15.post1: python/sglang/srt/models/deepseek_nextn.py:162-186,324-331,356-370",
        "sglang 0.5.15.post1: python/sglang/srt/layers/quantization/quark/quark.py:114-156; quark/utils.py:36-120",
        "sglang 0.5.16: python/sglang/srt/models/glm4_moe.py:1471-1530; configs/model_config.py:561-562",
    ),
    sglang_versions=">=0.5.9,<0.5.16",
)
