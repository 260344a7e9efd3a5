"""DM445 dflash-target-lacks-capture-hook."""

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
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.sglang_facts.changes import DSPARK_PARAMS, Change

# The registered target classes (EntryClass names under sglang/srt/models/) whose class or a base defines
# set_dflash_layers_to_capture, by the first release that has it; read in every wheel from 0.5.11 to 0.5.23 (each
# class keeps it once it has it). A class registered in a release and not listed here for it has no such method.
_HOOK_RELEASES: tuple[tuple[Change, tuple[str, ...]], ...] = (
    (
        Change(
            "0.5.11",
            "0.5.11 models/{llama,qwen3,qwen3_moe,qwen3_next,qwen3_5,qwen3_vl,gpt_oss,deepseek_v2,kimi_k25}.py",
        ),
        (
            "DeepseekV2ForCausalLM",
            "DeepseekV32ForCausalLM",
            "DeepseekV3ForCausalLM",
            "DeepseekV3ForCausalLMNextN",
            "Glm4MoeLiteForCausalLM",
            "GlmMoeDsaForCausalLM",
            "GptOssForCausalLM",
            "IQuestCoderForCausalLM",
            "InternLM3ForCausalLM",
            "InternS1ProForConditionalGeneration",
            "KimiK25ForConditionalGeneration",
            "Llama4ForCausalLM",
            "LlamaForCausalLM",
            "LlamaForCausalLMEagle",
            "LlamaForCausalLMEagle3",
            "Ministral3ForCausalLM",
            "MistralForCausalLM",
            "MistralForCausalLMEagle",
            "MistralLarge3ForCausalLM",
            "MistralLarge3ForCausalLMEagle",
            "Phi3ForCausalLM",
            "Qwen3ForCausalLM",
            "Qwen3MoeForCausalLM",
            "Qwen3NextForCausalLM",
            "Qwen3NextForCausalLMMTP",
            "Qwen3VLForConditionalGeneration",
            "Qwen3VLMoeForConditionalGeneration",
            "Qwen3_5ForConditionalGeneration",
            "Qwen3_5MoeForConditionalGeneration",
            "TeleFLMForCausalLM",
        ),
    ),
    (
        Change("0.5.12", "0.5.12 models/interns2preview.py:5 (a Qwen3.5-MoE subclass)"),
        ("InternS2PreviewForConditionalGeneration",),
    ),
    (
        Change(
            "0.5.13",
            "0.5.13 models/glm4_moe_lite.py; qwen3_moe_mtp.py:39 (a Qwen3-MoE subclass)",
        ),
        ("Glm4MoeLiteForCausalLMNextN", "Qwen3MoeForCausalLMMTP"),
    ),
    (
        Change("0.5.14", "0.5.14 models/gemma4_causal.py, gemma4_mm.py"),
        (
            "Gemma4AssistantForCausalLM",
            "Gemma4ForCausalLM",
            "Gemma4ForConditionalGeneration",
            "Gemma4UnifiedAssistantForCausalLM",
            "Gemma4UnifiedForConditionalGeneration",
        ),
    ),
    (Change("0.5.15", "0.5.15 models/laguna.py"), ("LagunaForCausalLM",)),
    (
        Change(
            "0.5.16",
            "0.5.16 models/glm4_moe.py:1471, mellum.py:481 (DeepSeek-V3 NextN and Qwen3-MoE subclasses)",
        ),
        ("GlmMoeDsaForCausalLMNextN", "MellumForCausalLM"),
    ),
    (
        Change("0.5.17", "0.5.17 models/inkling.py"),
        ("InklingForConditionalGeneration",),
    ),
    (
        Change("0.5.18", "0.5.18 models/qwen3_5_text.py, muse_glimmer.py"),
        (
            "InternS2MobiusForConditionalGeneration",
            "MuseGlimmerForCausalLM",
            "MuseGlimmerForConditionalGeneration",
            "Qwen3_5ForCausalLM",
            "Qwen3_5MoeForCausalLM",
        ),
    ),
    (
        Change("0.5.19", "0.5.19 models/lfm2.py, lfm2_moe.py, nemotron_h.py"),
        (
            "Lfm2BidirectionalModel",
            "Lfm2ForCausalLM",
            "Lfm2MoeForCausalLM",
            "NemotronHForCausalLM",
            "NemotronHForCausalLMMTP",
            "NemotronHPuzzleForCausalLM",
        ),
    ),
    (
        Change(
            "0.5.20",
            "0.5.20 models/glm5_next.py, mimo_v2.py, nanbeige.py, nano_nemotron_vl.py",
        ),
        (
            "Cosmos3ForConditionalGeneration",
            "Glm5NextForConditionalGeneration",
            "Glm5NextForConditionalGenerationNextN",
            "MiMoV2FlashForCausalLM",
            "MiMoV2ForCausalLM",
            "MiMoV2MTP",
            "NanbeigeForCausalLM",
            "NemotronH_Omni_Reasoning_V3",
            "Qwen4ExpForConditionalGeneration",
        ),
    ),
    (
        Change("0.5.21", "0.5.21 models/kimi_k3.py, lfm2_vl.py"),
        (
            "KimiK3ForConditionalGeneration",
            "KimiK3LinearForCausalLM",
            "Lfm2VlForConditionalGeneration",
        ),
    ),
    (
        Change("0.5.23", "0.5.23 models/beam.py, minimax_m3_vl.py, muse_spark.py"),
        (
            "BeamForCausalLM",
            "MiniMaxM3SparseForConditionalGeneration",
            "MuseSparkForConditionalGeneration",
        ),
    ),
)
DFLASH_CAPTURE_HOOK: dict[str, Change] = {
    name: change for change, names in _HOOK_RELEASES for name in names
}
# The registered target classes whose class or a base defines set_dspark_layers_to_capture, which DSPARK calls in
# place of the DFLASH hook (0.5.16 model_runner_components/attention_backend_setup.py:55-58), read the same way in
# every wheel from 0.5.16 (the first with DSPARK) to 0.5.23.
_DSPARK_HOOK_RELEASES: tuple[tuple[Change, tuple[str, ...]], ...] = (
    (
        Change("0.5.16", "0.5.16 models/deepseek_v4.py:2449"),
        ("DeepseekV4ForCausalLM", "DeepseekV4ForCausalLMNextN"),
    ),
    (
        Change("0.5.17", "0.5.17 models/kimi_k3.py, kimi_linear.py"),
        ("KimiK3ForConditionalGeneration", "KimiLinearForCausalLM"),
    ),
    (
        Change("0.5.19", "0.5.19 models/bailing_moe_v3.py, kimi_k3.py"),
        ("BailingMoeV3ForCausalLM", "KimiK3LinearForCausalLM"),
    ),
    (
        Change("0.5.23", "0.5.23 models/minimax_m3_vl.py"),
        ("MiniMaxM3SparseForConditionalGeneration",),
    ),
)
DSPARK_CAPTURE_HOOK: dict[str, Change] = {
    name: change for change, names in _DSPARK_HOOK_RELEASES for name in names
}
# Classes whose answer depends on more than their bases (a __getattr__ forwarding to a per-version inner model, or a
# base outside sglang/srt/models/): never judged.
UNDECIDED = frozenset(
    {
        "MindSporeForCausalLM",
        "MiniCPMV",
        "MiniCPMV4_6ForConditionalGeneration",
        "MiniCPMV4_7ForConditionalGeneration",
        "Mistral3ForConditionalGeneration",
        "NemotronH_Nano_Omni_Reasoning_V3",
        "NemotronH_Nano_VL_V2",
        "WhisperForConditionalGeneration",
    }
)
# The releases that raise each message (model_runner.py to 0.5.15.post1, attention_backend_setup.py from 0.5.16):
# "Model X does not implement set_dflash_layers_to_capture, which is required for DFLASH."
# "Model X implements neither set_dspark_layers_to_capture nor set_dflash_layers_to_capture, one of which is required
# for DFLASH/DSPARK."


def _first_hook(arch: str, algorithm: str) -> Change | None:
    """The first release whose class ``arch`` has a hook ``algorithm`` accepts: DFLASH only its own, DSPARK either."""
    hooks = [DFLASH_CAPTURE_HOOK.get(arch)]
    if algorithm == "DSPARK":
        hooks.append(DSPARK_CAPTURE_HOOK.get(arch))
    return min(
        (hook for hook in hooks if hook is not None),
        key=lambda hook: hook.release,
        default=None,
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    from specguard.versions import history  # the release history loads only here

    target = ctx.target
    impl = ctx.spec.item("--model-impl")
    if (
        not (ctx.algorithm == "DFLASH" or ctx.algorithm == "DSPARK")
        # before 0.5.16 the server refuses the DSPARK choice itself, before any hook is looked up
        or (ctx.algorithm == "DSPARK" and not DSPARK_PARAMS.present_in(ctx.version))
        or target is None
        or not (arch := target.architecture)
        or arch in UNDECIDED
        or (
            impl is not None
            and impl.values
            and impl.values[-1] not in ("auto", "sglang")
        )
    ):
        return
    hook = _first_hook(arch, ctx.algorithm)
    if hook is not None and hook.present_in(ctx.version):
        return
    data = history()
    index = data.index_of(ctx.version)
    if index is None or index not in data.architecture_releases(arch):
        return  # a class this release does not register: VB012's, or the Transformers fallback's
    later = f"; SGLang {hook.first_release} adds it" if hook is not None else ""
    lacks = "has no set_dflash_layers_to_capture()"
    if ctx.algorithm == "DSPARK":
        lacks = "has neither set_dspark_layers_to_capture() nor set_dflash_layers_to_capture()"
    yield RULE.finding(
        f"SGLang {ctx.version}'s {arch} (the target's class) {lacks}, which the {ctx.algorithm} "
        "target must have to hand its hidden states to the draft: the server fails with a ValueError ('Model "
        f"{arch} does not implement set_dflash_layers_to_capture' or '... implements neither "
        "set_dspark_layers_to_capture nor set_dflash_layers_to_capture') after the target's weights have loaded"
        f"{later}. {ctx.algorithm} cannot run on this target in this release",
        flags=("--speculative-algorithm",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM445",
    category=Category.START,
    name="dflash-target-lacks-capture-hook",
    summary="DFLASH on a target whose SGLang class has no set_dflash_layers_to_capture (DSPARK: nor "
    "set_dspark_layers_to_capture) fails after loading (0.5.11+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a target whose `architectures[0]` is a class the release "
        "registers, neither it nor a base of it defining `set_dflash_layers_to_capture` in that release (0.5.11: "
        "Llama and its subclasses, Qwen3/Qwen3-MoE/Qwen3-Next/Qwen3.5/Qwen3-VL, gpt-oss, DeepSeek-V2/V3, Kimi-K2.5; "
        "later releases add Gemma 4, Laguna, Nemotron-H, MiMo-V2 and others). Qwen2, Gemma 3, GLM-4 MoE or "
        "MiniMax-M2 targets have none in any release up to 0.5.23, nor has MiniMax-M3's text class "
        "`MiniMaxM3SparseForCausalLM` (0.5.16-0.5.23). Likewise `--speculative-algorithm DSPARK` (0.5.16+) with a "
        "target class that has neither that method nor `set_dspark_layers_to_capture` (DeepSeek-V4 from 0.5.16, "
        "Kimi-K3 and Kimi-Linear from 0.5.17, Bailing-MoE-V3 from 0.5.19, MiniMax-M3 VL from 0.5.23).",
        why="The target runner captures the hidden states the DFLASH draft reads through the model's "
        "`set_dflash_layers_to_capture`, and raises `ValueError: Model X does not implement "
        "set_dflash_layers_to_capture, which is required for DFLASH.` when the class has none (0.5.11 "
        "`model_executor/model_runner.py:824-830`, 0.5.15.post1 :1055-1061); from 0.5.16 the check moved to "
        "`configure_aux_hidden_state_capture`, which raises `Model X implements neither set_dspark_layers_to_capture "
        "nor set_dflash_layers_to_capture, one of which is required for DFLASH/DSPARK.` (0.5.16 "
        "`model_executor/model_runner_components/attention_backend_setup.py:39-64`, 0.5.23 :40-72). Both run after "
        "the target's weights have loaded. DSPARK calls `set_dspark_layers_to_capture` when the class has it and "
        "`set_dflash_layers_to_capture` otherwise (0.5.16 attention_backend_setup.py:55-65; 0.5.23 :62-72); DFLASH "
        "never takes the DSPARK hook. Which classes have the method was read in every wheel from 0.5.11 to "
        "0.5.23 (the `EntryClass` names under `sglang/srt/models/`, with their bases), and the class registry from "
        "`specguard/data/sglang-history.json`; classes that forward attributes to an inner model are not judged, "
        "nor is `--model-impl` other than auto/sglang.",
        fix="Use a target architecture the release can capture from, another release that adds the method, or an "
        "algorithm that needs no capture hook.",
        fix_safety="No automatic fix: the target and the algorithm are the user's choice.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "Qwen/Qwen2.5-7B-Instruct",
            "--speculative-algorithm",
            "DFLASH",
            "--speculative-draft-model-path",
            "d",
        ),
        target={"architectures": ("Qwen2ForCausalLM",)},
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=QWEN3_8B_DFLASH,
        target={"architectures": ("Qwen3ForCausalLM",)},
        sglang_version="0.5.11",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/model_executor/model_runner.py:824-830",
        "sglang 0.5.11: python/sglang/srt/models/{llama,qwen3,qwen3_moe,qwen3_next,qwen3_5,qwen3_vl,gpt_oss,deepseek_v2,kimi_k25}.py (set_dflash_layers_to_capture)",
        "sglang 0.5.15.post1: python/sglang/srt/model_executor/model_runner.py:1055-1061",
        "sglang 0.5.16: python/sglang/srt/model_executor/model_runner_components/attention_backend_setup.py:39-64",
        "sglang 0.5.23: python/sglang/srt/model_executor/model_runner_components/attention_backend_setup.py:40-72",
        "sglang 0.5.23: python/sglang/srt/models/qwen2.py, gemma3_causal.py, glm4_moe.py, minimax_m2.py (no set_dflash_layers_to_capture)",
        "sglang 0.5.16: python/sglang/srt/models/minimax_m3.py:1418-1507 (EAGLE hooks, no DFLASH/DSPARK hook; 0.5.23 :1972-2274 the same)",
        "sglang 0.5.16: python/sglang/srt/models/deepseek_v4.py:2449 (set_dspark_layers_to_capture only)",
    ),
    sglang_versions=">=0.5.11",
    log_signatures=(
        r"does not implement set_dflash_layers_to_capture, which is required for DFLASH",
        r"implements neither set_dspark_layers_to_capture nor set_dflash_layers_to_capture",
    ),
)
