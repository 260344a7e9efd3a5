"""QT556 fp4-deepseek-nextn-built-fp4."""

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
from specguard.rules.quantization.QT435_fp4_deepseek_nextn_bf16_moe_on_deepep import (
    TARGET_ARCHITECTURE,
    drafts_with_nextn,
)
from specguard.sglang_facts.algorithms import MTP_DRAFT_ALGORITHMS

FP4 = "modelopt_fp4"
DEEPSEEK_R1_FP4_MTP = (
    "--model-path", "nvidia/DeepSeek-R1-FP4", "--tp", "8", "--trust-remote-code", "--quantization", FP4,
    "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
    "--speculative-num-draft-tokens", "4",
)  # fmt: skip


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm not in MTP_DRAFT_ALGORITHMS
        or ctx.target is None
        or ctx.target.architecture != TARGET_ARCHITECTURE
    ):
        return
    if ctx.spec.get("quantization") != FP4 or not drafts_with_nextn(ctx):
        return
    yield RULE.finding(
        f"EAGLE (NextN/MTP) on {TARGET_ARCHITECTURE} with {ctx.flag('--quantization')} {FP4} in SGLang {ctx.version}: "
        "the NextN draft is built with the target's FP4 config (packed-FP4 experts and linears), but DeepSeek FP4 "
        "checkpoints keep the NextN layer in BF16, so loading the draft fails on a shape mismatch after the target "
        "has loaded. SGLang 0.4.8 builds the NextN layer unquantized; on this release drop the speculative "
        "algorithm",
        flags=("--quantization", "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="QT556",
    category=Category.START,
    name="fp4-deepseek-nextn-built-fp4",
    summary="0.4.7-0.4.7.post1: a modelopt_fp4 DeepSeek target's BF16 NextN draft is built as FP4 and fails to load",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE/NEXTN with DeepSeek's NextN draft (no draft path, the target's path, or an exported "
        "DeepseekV3ForCausalLMNextN) on a DeepseekV3ForCausalLM target with `--quantization modelopt_fp4`, "
        "SGLang 0.4.7 and 0.4.7.post1 (these releases take the FP4 method only when typed: a checkpoint's "
        "`hf_quant_config.json` reads as `modelopt`, configs/model_config.py:330-349, 380).",
        why="The draft's ModelConfig takes `server_args.quantization` (configs/model_config.py:256-266) and "
        "`DeepseekModelNextN` passes that config to its decoder layer (0.4.7.post1 models/deepseek_nextn.py:41-68). "
        "`ModelOptFp4Config.get_quant_method` returns the NVFP4 MoE method for every FusedMoE and the FP4 linear "
        "method for any linear whose prefix the exclude list does not name (layers/quantization/"
        "modelopt_quant.py:311-326; the NextN prefix is `model.decoder`), so the experts are uint8 "
        "`[E, 2I, H/2]` parameters (:525-567) and `FusedMoE._load_w13` copies each BF16 `[I, H]` checkpoint "
        "tensor into a half-width slice (layers/moe/fused_moe_triton/layer.py:429-455), which raises. NVIDIA's "
        "DeepSeek FP4 checkpoints keep the NextN layer unquantized (PR 7376: 'It's not quantized'). 0.4.8 sets "
        "the NextN quant config to None for modelopt_fp4 (deepseek_nextn.py:47-51). 0.4.6.post5 has no NVFP4 "
        "MoE method at all (the FP4 target itself cannot load its experts), so the window opens at 0.4.7.",
        fix="Upgrade to SGLang 0.4.8 or later, or serve without speculation.",
        fix_safety="No automatic fix: both change the deployment.",
    ),
    bad=Example(
        argv=DEEPSEEK_R1_FP4_MTP,
        target={"architectures": (TARGET_ARCHITECTURE,)},
        sglang_version="0.4.7.post1",
    ),
    good=Example(
        argv=DEEPSEEK_R1_FP4_MTP,
        target={"architectures": (TARGET_ARCHITECTURE,)},
        sglang_version="0.4.8",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/pull/7376 ('Update quant config to None for MTP module in Deepseek modelopt fp4. It's not quantized.')",
        "sglang 0.4.6.post5: python/sglang/srt/layers/quantization/modelopt_quant.py (no ModelOptNvFp4FusedMoEMethod)",
        "sglang 0.4.7.post1: python/sglang/srt/models/deepseek_nextn.py:41-68",
        "sglang 0.4.7.post1: python/sglang/srt/layers/quantization/modelopt_quant.py:311-326,525-567",
        "sglang 0.4.7.post1: python/sglang/srt/layers/moe/fused_moe_triton/layer.py:429-455",
        "sglang 0.4.8: python/sglang/srt/models/deepseek_nextn.py:47-51",
    ),
    sglang_versions=">=0.4.7,<0.4.8",
)
