"""QT435 fp4-deepseek-nextn-bf16-moe-on-deepep."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs

# The NextN layer drops the modelopt_fp4 config ("Overriding DeepseekV3ForCausalLMNextN quant config for
# modelopt_fp4 Deepseek model.", 0.5.3.post3 models/deepseek_nextn.py:52-56), so its experts are BF16 while the
# deepep all-to-all builds them as DeepEPMoE. Only DeepEP's low-latency format with the flashinfer_cutedsl runner
# runs the FP4 target's experts; there the draft's BF16 layer calls quant_method.apply_without_routing_weights,
# which UnquantizedFusedMoEMethod does not have (0.5.3.post3 layers/moe/ep_moe/layer.py:223-227, 431-447). Every
# other DeepEP path asserts `deep_gemm_wrapper.ENABLE_JIT_DEEPGEMM and self.use_fp8_w8a8` (:221, :228), which the
# FP4 target's own experts fail first (use_fp8_w8a8 is False for them, :105-107), speculation or not.
TARGET_ARCHITECTURE = "DeepseekV3ForCausalLM"
NEXTN_ARCHITECTURE = "DeepseekV3ForCausalLMNextN"


def drafts_with_nextn(ctx: CheckContext) -> bool:
    """The draft is DeepSeek's NextN layer: SGLang fills an unset draft path with the target's
    (0.5.3.post3 server_args.py:1218-1231), or the path names the target or an exported NextN."""
    path = ctx.spec.get("speculative_draft_model_path")
    if path is None or path == ctx.spec.get("model_path"):
        return True
    return ctx.draft is not None and ctx.draft.architecture == NEXTN_ARCHITECTURE


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "EAGLE"
        or ctx.target is None
        or ctx.target.architecture != TARGET_ARCHITECTURE
    ):
        return
    gpu = ctx.env.gpu
    if gpu is not None and gpu.platform != "cuda":
        return  # ROCm (aiter) and Ascend have their own DeepEP paths
    if (
        ctx.spec.get("quantization") != "modelopt_fp4"
        or ctx.spec.last_value("--moe-a2a-backend") != "deepep"
    ):
        return
    if not drafts_with_nextn(ctx):
        return
    if (
        ctx.spec.last_value("--deepep-mode") != "low_latency"
        or ctx.spec.last_value("--moe-runner-backend") != "flashinfer_cutedsl"
    ):
        return  # the FP4 target's own experts hit DeepEPMoE's FP8 assert: not the draft's doing
    yield RULE.finding(
        f"EAGLE (NextN/MTP) on {TARGET_ARCHITECTURE} with {ctx.flag('--quantization')} modelopt_fp4, "
        f"{ctx.flag('--moe-a2a-backend')} deepep in low-latency mode and the flashinfer_cutedsl MoE runner in SGLang "
        f"{ctx.version}: the NextN layer is built without the FP4 config, so its BF16 experts run through DeepEP's "
        "cutedsl path, which only FP4 experts support; the draft's first forward fails with AttributeError: "
        "'UnquantizedFusedMoEMethod' object has no attribute 'apply_without_routing_weights'. SGLang 0.5.4 casts "
        "the NextN experts to FP8 for DeepEP; on this release drop the speculative algorithm or the deepep "
        "all-to-all",
        flags=(
            "--speculative-algorithm",
            "--quantization",
            "--moe-a2a-backend",
            "--deepep-mode",
            "--moe-runner-backend",
        ),
    )


_FP4_DEEPEP_MTP = (
    "--model-path",
    "nvidia/DeepSeek-R1-0528-FP4",
    "--tp",
    "8",
    "--quantization",
    "modelopt_fp4",
    "--moe-a2a-backend",
    "deepep",
    "--deepep-mode",
    "low_latency",
    "--moe-runner-backend",
    "flashinfer_cutedsl",
    "--enable-dp-attention",
    "--dp-size",
    "8",
)
_DEEPSEEK_V3 = {"architectures": (TARGET_ARCHITECTURE,), "kv_lora_rank": 512}

RULE = Rule(
    check=check,
    code="QT435",
    category=Category.CRASH,
    name="fp4-deepseek-nextn-bf16-moe-on-deepep",
    summary="DeepSeek-V3/R1 modelopt_fp4 on low-latency deepep with flashinfer_cutedsl and EAGLE/NEXTN: the BF16 "
    "NextN experts crash in DeepEP's cutedsl path (0.5.3rc0-0.5.3.post3)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="EAGLE/NEXTN with DeepSeek's NextN draft (no draft path, the target's path, or an exported "
        "DeepseekV3ForCausalLMNextN) on a DeepseekV3ForCausalLM target with `--quantization modelopt_fp4` and "
        "`--moe-a2a-backend deepep`, `--deepep-mode low_latency` and `--moe-runner-backend flashinfer_cutedsl` on "
        "CUDA, SGLang 0.5.3rc0 to 0.5.3.post3. In any other DeepEP mode or runner the FP4 target's own experts "
        "fail DeepEPMoE's FP8 assert (use_fp8_w8a8 is False for them, 0.5.3.post3 ep_moe/layer.py:105-107, "
        "221, 228) with or without speculation, so the rule stays quiet.",
        why="DeepseekModelNextN sets its quant config to None for modelopt_fp4 (0.5.3rc0 models/deepseek_nextn.py:"
        "49-53; 0.5.3.post3 :52-56), so the NextN experts are BF16 (UnquantizedFusedMoEMethod). With deepep, "
        "get_moe_impl_class returns DeepEPMoE for every MoE layer (0.5.3.post3 layers/moe/ep_moe/layer.py:708-710), "
        "and DeepEPMoE.moe_impl asserts `deep_gemm_wrapper.ENABLE_JIT_DEEPGEMM and self.use_fp8_w8a8` for the "
        "normal and low-latency formats, except that low-latency with the flashinfer_cutedsl runner calls "
        "quant_method.apply_without_routing_weights (0.5.3rc0 layer.py:467-475; 0.5.3.post3 :212-233, 431-447), "
        "which only the ModelOpt FP4 method defines (quantization/modelopt_quant.py:1456; absent from "
        "quantization/unquant.py). 0.5.3rc0 added that cutedsl branch, the first release whose FP4 target runs "
        "DeepEP at all; 0.5.4 gives the NextN MoE an FP8 config and quantizes its weights when the target is "
        "modelopt_fp4 on deepep (models/deepseek_v2.py:206-211 enable_nextn_moe_bf16_cast_to_fp8, "
        "deepseek_nextn.py:58) and gates the cutedsl branch on modelopt_fp4 (ep_moe/layer.py:194-204).",
        fix="Upgrade to SGLang 0.5.4, or serve without the deepep all-to-all or without speculation.",
        fix_safety="No automatic fix: each choice changes the deployment.",
    ),
    bad=Example(
        argv=(*_FP4_DEEPEP_MTP, "--speculative-algorithm", "EAGLE"),
        target=_DEEPSEEK_V3,
        gpu="B200",
        sglang_version="0.5.3.post3",
    ),
    good=Example(
        argv=_FP4_DEEPEP_MTP,
        target=_DEEPSEEK_V3,
        gpu="B200",
        sglang_version="0.5.3.post3",
    ),
    sources=(
        "sglang 0.5.2: python/sglang/srt/layers/moe/ep_moe/layer.py (no flashinfer_cutedsl branch: an FP4 target cannot run DeepEP)",
        "sglang 0.5.3rc0: python/sglang/srt/models/deepseek_nextn.py:49-53; python/sglang/srt/layers/moe/ep_moe/layer.py:467-475",
        "sglang 0.5.3.post3: python/sglang/srt/models/deepseek_nextn.py:52-56; python/sglang/srt/layers/moe/ep_moe/layer.py:212-233, 431-447, 708-710; python/sglang/srt/server_args.py:1218-1231",
        "sglang 0.5.4: python/sglang/srt/models/deepseek_v2.py:206-211; python/sglang/srt/models/deepseek_nextn.py:58; python/sglang/srt/layers/moe/ep_moe/layer.py:194-204",
    ),
    sglang_versions=">=0.5.3rc0,<0.5.4",
    log_signatures=(
        r"'UnquantizedFusedMoEMethod' object has no attribute 'apply_without_routing_weights'",
    ),
)
