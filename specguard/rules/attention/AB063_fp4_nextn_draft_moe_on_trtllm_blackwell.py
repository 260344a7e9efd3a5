"""AB063 fp4-nextn-draft-moe-on-trtllm-blackwell."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of

# SGLang's DeepSeek family (0.5.23 arg_groups/overrides.py:745-757): their FP4 checkpoints keep the
# NextN (MTP) layer in BF16, and the draft MoE defaults are resolved for these architectures only.
DEEPSEEK_FAMILY_ARCHS = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "KimiK25ForConditionalGeneration",
    "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM",
    "Glm5NextForConditionalGeneration",
})
TRTLLM_RUNNER = "flashinfer_trtllm"


def draft_moe_runner(ctx: CheckContext) -> tuple[str | None, str]:
    """The MoE runner the BF16 NextN draft inherits on CUDA, and how it was chosen."""
    typed = ctx.spec.item("--moe-runner-backend")
    if typed is not None and typed.values:
        return typed.values[0], f"{ctx.flag('--moe-runner-backend')} {typed.values[0]}"
    a2a = ctx.spec.item("--moe-a2a-backend")
    gpu = ctx.env.gpu
    if (a2a is None or a2a.values == ("none",)) and gpu is not None and gpu.sm is not None and gpu.sm // 10 == 10:
        return TRTLLM_RUNNER, f"SGLang's automatic MoE runner on {gpu.name} ({TRTLLM_RUNNER})"
    return None, ""


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE" or ctx.spec.has("--speculative-moe-runner-backend"):
        return
    gpu = ctx.env.gpu
    if gpu is not None and gpu.platform != "cuda":
        return  # ROCm resolves the BF16 NextN draft to triton itself
    if ctx.spec.get("quantization") != "modelopt_fp4":
        return
    arch = ctx.target.architecture if ctx.target is not None else None
    if arch not in DEEPSEEK_FAMILY_ARCHS:
        return
    runner, how = draft_moe_runner(ctx)
    if runner != TRTLLM_RUNNER:
        return
    yield RULE.finding(
        f"{arch} with {ctx.flag('--quantization')} modelopt_fp4 and EAGLE (its BF16 NextN layer) in SGLang "
        f"{ctx.env.sglang_version}: the draft MoE inherits {how}, whose BF16 batched-GEMM kernels fail on "
        "Blackwell under speculative load (illegal memory access or 'Error occurred when running GEMM', at draft "
        "CUDA-graph capture or after hours of serving). SGLang picks triton for this draft only on ROCm. Set "
        f"{ctx.flag('--speculative-moe-runner-backend')} triton",
        flags=("--speculative-moe-runner-backend", "--moe-runner-backend"),
        fix=fix_of("run the BF16 NextN draft MoE on triton", Applicability.UNSAFE,
                   Edit(name="--speculative-moe-runner-backend", value="triton")),
    )


RULE = Rule(
    check=check,
    code="AB063",
    category=Category.CRASH,
    name="fp4-nextn-draft-moe-on-trtllm-blackwell",
    summary="DeepSeek-family FP4 target with EAGLE/MTP on CUDA: the BF16 NextN draft MoE inherits flashinfer_trtllm and crashes on Blackwell",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="EAGLE (NEXTN/MTP) on a DeepSeek-family target (DeepSeek V3/V3.2, Kimi K2.5, Mistral Large 3, GLM-5.x) "
        "with `--quantization modelopt_fp4` on CUDA, where `--speculative-moe-runner-backend` is unset and the "
        "target's MoE runner is flashinfer_trtllm (typed, or SGLang's automatic choice on SM100/SM103 without an "
        "A2A backend).",
        why="FP4 checkpoints of this family keep the NextN layer in BF16. 0.5.7-0.5.9 default that draft MoE to "
        "triton on SM100 (0.5.9 server_args.py:1289-1331, inside `if is_sm100_supported()`); 0.5.10 moved the block "
        "under `elif is_hip()` (0.5.10 server_args.py:1659-1695), and 0.5.15-0.5.23 keep it ROCm-only "
        "(arg_groups/overrides.py `_deepseek_spec_moe_resolution` returns early when not HIP, 0.5.23 :846-887); "
        "on CUDA an unset `--speculative-moe-runner-backend` inherits the target's runner (0.5.23 "
        "overrides.py:1649-1655), which on Blackwell is flashinfer_trtllm. Its BF16 batched-GEMM cubins "
        "(`bmm_Bfloat16_..._dynB_sm100f`) fail in the draft MoE: issue 25563 (GLM-5-NVFP4, 4x B300, 0.5.12: "
        "'Capture cuda graph failed ... trtllm_batched_gemm_runner.cu:276' at the draft's largest batch), issue "
        "31093 (GLM-5.2 NVFP4, 8x B200, 0.5.15: illegal memory access in decode CUDA-graph capture), issue 32377 "
        "(GLM-5.2-NVFP4, SM100 TP 4: 'Error occurred when running GEMM' in trtllm_bf16_moe at draft prefill) and "
        "issue 30209 (GLM-5.2/5.3 NVFP4 on B200/B300: sporadic illegal memory access every few hours). PR 30210 "
        "measured the flashinfer_trtllm draft MoE crashing 5 times in 5 h on 8x B200 and the triton one none in "
        "24 h; it was closed unmerged, so 0.5.23 still inherits. The failing kernel depends on the FlashInfer "
        "build as well (issue 25563's recipe ran on 0.5.11 and failed on 0.5.12), so this is a risk the reports "
        "show, not a certainty: a warning.",
        fix="`--speculative-moe-runner-backend triton` (PR 30210's production setting).",
        fix_safety="Unsafe: a different MoE kernel runs the draft (PR 30210 kept accept length 3.19 with it).",
    ),
    bad=Example(
        argv=("--model-path", "nvidia/GLM-5.2-NVFP4", "--tp", "8", "--quantization", "modelopt_fp4",
              "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4"),
        target={"architectures": ("GlmMoeDsaForCausalLM",)},
        gpu="B200",
        sglang_version="0.5.15",
    ),
    good=Example(
        argv=("--model-path", "nvidia/GLM-5.2-NVFP4", "--tp", "8", "--quantization", "modelopt_fp4",
              "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4", "--speculative-moe-runner-backend", "triton"),
        target={"architectures": ("GlmMoeDsaForCausalLM",)},
        gpu="B200",
        sglang_version="0.5.15",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/30209",
        "https://github.com/sgl-project/sglang/pull/30210",
        "https://github.com/sgl-project/sglang/issues/31093",
        "https://github.com/sgl-project/sglang/issues/32377",
        "https://github.com/sgl-project/sglang/issues/25563",
        "sgl-project/sgl-cookbook@7b5bd9c: src/components/autoregressive/GLM5ConfigGenerator/index.js (no speculative option for the NVFP4 B200 recipe)",
        "sglang 0.5.9: python/sglang/srt/server_args.py:1289-1331 (triton draft-MoE default on SM100)",
        "sglang 0.5.10: python/sglang/srt/server_args.py:1659-1695 (the same block, now under `elif is_hip()`)",
        "sglang 0.5.14: python/sglang/srt/server_args.py:3742-3777",
        "sglang 0.5.23: python/sglang/srt/arg_groups/overrides.py:745-757, 846-887, 1649-1655",
    ),
    sglang_versions=">=0.5.10",
    dialects=SGLANG_DIALECTS,
)
