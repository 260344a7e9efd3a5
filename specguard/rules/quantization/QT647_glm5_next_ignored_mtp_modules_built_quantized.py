"""QT647 glm5-next-ignored-mtp-modules-built-quantized."""

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
)
from specguard.rules.quantization.QT646_glm5_dsa_quark_bf16_mtp_built_quantized import (
    BESIDE_DECODER,
    DRAFT_DECODER,
    EXPERTS,
    NEVER_QUANTIZED,
)
from specguard.rules.spec_params._shared import device

GLM5_NEXT = "Glm5NextForConditionalGeneration"
COMPRESSED_TENSORS = "compressed-tensors"


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    if ctx.algorithm != "EAGLE" or target is None or target.architecture != GLM5_NEXT:
        return
    if (
        not ctx.drafts_from_target_checkpoint
        or ctx.spec.has(DRAFT_QUANT)
        or target.quantization != COMPRESSED_TENSORS
        or device(ctx)
        == "npu"  # NPU names the draft's layer layers.<N> (deepseek_nextn.py:117-121): not traced
    ):
        return
    layers, ignore = target.num_hidden_layers, target.quantization_ignore
    if layers is None or ignore is None or f"model.layers.{layers}.*" in ignore:
        return  # that entry makes 0.5.20 build the whole draft in BF16 (glm5_next_nextn.py:34-53)
    built_quantized = _ignored_mtp_modules_built_quantized(ignore, layers)
    if not built_quantized:
        return
    yield RULE.finding(
        f"a compressed-tensors {GLM5_NEXT} checkpoint whose quantization_config.ignore keeps MTP modules in BF16 "
        f"under their checkpoint names ({built_quantized[0]}{' ...' if len(built_quantized) > 1 else ''}), drafted "
        f"from its own MTP layer in SGLang {ctx.version}: the NextN draft's name mapper rewrites only "
        f"model.layers.{layers}, so these entries never name the draft's model.decoder.* modules, which are built "
        "quantized for BF16 weights. A packed scheme fails to load the draft at start; with FP8 the weights are "
        "cast without their scales and the draft proposes garbage. SGLang 0.5.21 maps the language_model names: "
        "upgrade, or serve without speculative decoding",
        flags=("--model-path", "--speculative-algorithm"),
    )


def _ignored_mtp_modules_built_quantized(
    ignore: tuple[str, ...], layers: int
) -> list[str]:
    """The model.language_model.layers.<N> decoder entries whose draft module (model.decoder.<module>) no entry
    matches, neither as 0.5.20's mapper left it nor unmapped (tried too, to stay quiet when unsure)."""
    checkpoint_layer = f"model.language_model.layers.{layers}"
    # WeightsMapper._map_name: the first occurrence of the substring, which sits inside "language_model.layers.<N>"
    mapped = {
        name.replace(f"model.layers.{layers}", DRAFT_DECODER, 1) for name in ignore
    }
    entries = set(ignore) | mapped
    found = []
    for name in ignore:
        if not name.startswith(checkpoint_layer + "."):
            continue
        # eh_proj is an unquantized nn.Linear outside Quark, the norms are never quantized; the routed experts'
        # FusedMoE path was not traced: both left out, quiet.
        if (
            any(part in name for part in BESIDE_DECODER)
            or EXPERTS + "." in name
            or name.endswith(NEVER_QUANTIZED)
        ):
            continue
        module = DRAFT_DECODER + name.removeprefix(checkpoint_layer)
        if not any(_matches(module, entry) for entry in entries):
            found.append(name)
    return found


def _matches(module: str, entry: str) -> bool:
    """compressed-tensors' check_equal_or_regex_match: a 're:' regex (re.match), else equal or a dotted suffix
    (0.5.20 layers/quantization/compressed_tensors/utils.py:79-100,171-190)."""
    if entry.startswith("re:"):
        try:
            return re.match(entry[3:], module) is not None
        except re.error:
            return (
                True  # SGLang would fail on the pattern itself: not this rule's to say
            )
    return entry == module or module.endswith("." + entry)


GLM5_NEXT_MTP = (
    "--model-path",
    "./GLM-5-Next-FP8",
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
GLM5_NEXT_CT = {
    "architectures": (GLM5_NEXT,),
    "num_hidden_layers": 78,
    "quantization": COMPRESSED_TENSORS,
    "quantization_ignore": (
        "lm_head",
        "model.language_model.layers.78.self_attn.q_a_proj",
        "model.language_model.layers.78.self_attn.kv_a_proj_with_mqa",
    ),
}

RULE = Rule(
    check=check,
    code="QT647",
    category=Category.START,
    name="glm5-next-ignored-mtp-modules-built-quantized",
    summary="0.5.20: a compressed-tensors GLM-5-Next checkpoint that ignores its MTP modules under "
    "model.language_model.layers.<N> gets a quantized MTP draft for BF16 weights",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE/NEXTN drafting from the target's own MTP layer on a `Glm5NextForConditionalGeneration` target "
        "whose config.json `quantization_config` is compressed-tensors and whose `ignore` names MTP decoder modules "
        "as `model.language_model.layers.<num_hidden_layers>.<module>` (not the routed experts, the router `mlp.gate`, "
        "the indexer's `wk`/`weights_proj` or a norm), with no entry matching the draft's "
        "`model.decoder.<module>` and no `model.layers.<num_hidden_layers>.*` entry, without "
        "`--speculative-draft-model-quantization`, SGLang 0.5.20.",
        why="0.5.20 drafts GLM-5-Next with Glm5NextForConditionalGenerationNextN (configs/model_config.py:824-826), a "
        "DeepSeek NextN class that builds the MTP layer as `model.decoder.*` with the checkpoint's quant config. "
        "The loader rewrites the config's module names with the draft's mapper (model_loader/loader.py:265-272; "
        "compressed_tensors.py:164-172), which in 0.5.20 maps only the substring `model.layers.<N>` to "
        "`model.decoder` (glm5_next_nextn.py:25-32): `model.language_model.layers.<N>.x` becomes "
        "`model.language_model.decoder.x`, which compressed-tensors' ignore test (equal, dotted suffix or `re:`, "
        "compressed_tensors/utils.py:24-100) never matches for `model.decoder.x`, so the module gets the quantized "
        "scheme (compressed_tensors.py:177-193) while the checkpoint holds it in BF16. Only an exact "
        "`model.layers.<N>.*` entry drops the draft's quant config (glm5_next_nextn.py:34-53). A packed scheme "
        "cannot take the BF16 tensors; FP8 casts them without scales. The scheme is not read, so the finding is a "
        "warning. 0.5.21 adds the target's own mapper and the `model.language_model.layers.<N>` rules "
        "(glm5_next_nextn.py:24-40). 0.5.19 has no GLM-5-Next model.",
        fix="Use SGLang 0.5.21 or later, or serve without speculative decoding. No automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=GLM5_NEXT_MTP, target=GLM5_NEXT_CT, gpu="B200", sglang_version="0.5.20"
    ),
    good=Example(
        argv=GLM5_NEXT_MTP, target=GLM5_NEXT_CT, gpu="B200", sglang_version="0.5.21"
    ),
    sources=(
        "sglang 0.5.19: python/sglang/srt/models (no glm5_next.py, no glm5_next_nextn.py)",
        "sglang 0.5.20: python/sglang/srt/models/glm5_next_nextn.py:24-53; configs/model_config.py:824-826",
        "sglang 0.5.20: python/sglang/srt/model_loader/loader.py:265-272",
        "sglang 0.5.20: python/sglang/srt/layers/quantization/compressed_tensors/compressed_tensors.py:164-193",
        "sglang 0.5.20: python/sglang/srt/layers/quantization/compressed_tensors/utils.py:24-100,171-190",
        "sglang 0.5.21: python/sglang/srt/models/glm5_next_nextn.py:24-40",
    ),
    sglang_versions="==0.5.20",
)
