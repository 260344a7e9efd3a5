"""The backend defaults SGLang's per-model hooks set for a speculative launch (LongCat-Flash FP8, the Kimi hybrid
targets, GLM-5-Next), each gated by the release that added it (``sglang_facts.changes``)."""

from __future__ import annotations

from specguard.models import Environment, ModelFacts
from specguard.sglang_facts.architectures import KDA_ARCHITECTURES
from specguard.sglang_facts.changes import (
    GLM5_NEXT_SPEC_VERIFY_DEFAULT,
    KIMI_HYBRID_SPEC_BACKEND_DEFAULTS,
    KIMI_HYBRID_SYMM_MEM_OFF,
    KIMI_HYBRID_SYMM_MEM_OFF_DROPPED,
    LONGCAT_FP8_GEMM_TRTLLM_ON_SM100,
)
from specguard.spec import LaunchSpec

# The FP8 GEMM default's pass names LongcatFlashForCausalLMNextN too (0.5.16 arg_groups/overrides.py:1401), but it runs
# only from the DeepSeek-family branch of the target's architectures[0], whose list holds LongcatFlashForCausalLM alone
# (0.5.16 server_args.py:4366-4374, 4509; 0.5.23 arg_groups/model_hook.py:267-278, 439).
LONGCAT_FLASH_ARCHITECTURES = frozenset({"LongcatFlashForCausalLM"})
LONGCAT_FP8_QUANTIZATIONS = frozenset({"fp8", "modelopt_fp8"})
GLM5_NEXT_ARCHITECTURE = "Glm5NextForConditionalGeneration"  # 0.5.22 arg_groups/model_hook.py:251


def _sm100(env: Environment) -> bool:
    gpu = env.gpu
    return gpu is not None and gpu.platform == "cuda" and gpu.compute_capability is not None and gpu.compute_capability[0] == 10


def _architecture(target: ModelFacts | None) -> str | None:
    # SGLang's hooks key on the target's hf_config.architectures[0].
    return target.architecture if target is not None else None


def fp8_gemm_runner_backend(spec: LaunchSpec, target: ModelFacts | None, env: Environment) -> str | None:
    """flashinfer_trtllm where SGLang picks it for --fp8-gemm-backend auto, else None (left to SGLang's runtime).

    The quantization is --quantization (``unquant`` clears it) or, unset, config.json's quant_method
    (0.5.16 overrides.py:1358-1380, server_args.py:3418-3422)."""
    if not LONGCAT_FP8_GEMM_TRTLLM_ON_SM100.present_in(env.version) or not _sm100(env):
        return None
    if target is None or target.architecture not in LONGCAT_FLASH_ARCHITECTURES:
        return None
    if (spec.last_value("--fp8-gemm-backend") or "auto") != "auto":
        return None
    typed = spec.get("quantization")
    quantization = (None if typed == "unquant" else typed) if spec.has("--quantization") else target.quantization
    if quantization not in LONGCAT_FP8_QUANTIZATIONS or target.quant_scale_fmt == "ue8m0":
        return None
    return "flashinfer_trtllm"


def linear_attn_verify_backend(spec: LaunchSpec, target: ModelFacts | None, env: Environment) -> str | None:
    """nv_cutedsl where a model hook pins the linear-attention verify backend of a speculative launch."""
    if spec.has("--linear-attn-verify-backend"):
        return None
    architecture = _architecture(target)
    if architecture in KDA_ARCHITECTURES and KIMI_HYBRID_SPEC_BACKEND_DEFAULTS.present_in(env.version):
        return "nv_cutedsl"  # on any GPU (kimi_k3_hook.py:21-28)
    if architecture == GLM5_NEXT_ARCHITECTURE and GLM5_NEXT_SPEC_VERIFY_DEFAULT.present_in(env.version) and _sm100(env):
        return "nv_cutedsl"
    return None


def kimi_dspark_draft_backend(spec: LaunchSpec, algorithm: str | None, target: ModelFacts | None, env: Environment) -> str | None:
    """trtllm_mha for a Kimi hybrid target's DSPARK draft on SM100 with no draft backend typed (kimi_k3_hook.py:30-41).

    The hook compares the algorithm as typed, before SGLang upper-cases it (0.5.17 server_args.py:3530 before :3592,
    speculative_hook.py:80-81; 0.5.23 arg_groups/pipeline.py:225 before :306), so a typed ``dspark`` gets no default;
    the launch parser keeps only the upper-cased value (dialects.py), so that launch is reported too."""
    if algorithm != "DSPARK" or spec.has("--speculative-draft-attention-backend") or not _sm100(env):
        return None
    if _architecture(target) in KDA_ARCHITECTURES and KIMI_HYBRID_SPEC_BACKEND_DEFAULTS.present_in(env.version):
        return "trtllm_mha"
    return None


def kimi_symm_mem_turned_off(spec: LaunchSpec, target: ModelFacts | None, env: Environment) -> bool:
    """--enable-symm-mem dropped for a Kimi hybrid target while the decode CUDA graph is on (0.5.17-0.5.18,
    kimi_k3_hook.py:44-84). With decode capture off the prefill phase decides, which is not modelled here: quiet."""
    if not spec.has("--enable-symm-mem"):
        return False
    if not KIMI_HYBRID_SYMM_MEM_OFF.present_in(env.version) or KIMI_HYBRID_SYMM_MEM_OFF_DROPPED.present_in(env.version):
        return False
    if _architecture(target) not in KDA_ARCHITECTURES or (spec.last_value("--model-path") or "").startswith("instance://"):
        return False
    return _decode_graph_on(spec)


def _decode_graph_on(spec: LaunchSpec) -> bool:
    """The decode phase captures unless switched off (0.5.17 server_args.py:4297-4311: --cuda-graph-backend-decode
    wins over the off-switches); a --cuda-graph-config JSON is not read, so it counts as unknown (off)."""
    if spec.has("--cuda-graph-config"):
        return False
    backend = spec.last_value("--cuda-graph-backend-decode")
    if backend is not None:
        return backend != "disabled"
    return not (spec.get("disable_cuda_graph") or spec.has("--disable-decode-cuda-graph"))
