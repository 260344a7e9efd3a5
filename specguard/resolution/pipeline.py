"""``resolve``: SGLang's argument resolution for a speculative launch, step by step in SGLang's order,
each step in the module of its concern."""

from __future__ import annotations

from typing import Any

from specguard.models import Dialect, Environment, ModelFacts
from specguard.resolution.backends import (
    TRTLLM_MHA_PAGE_SIZES,
    default_backend,
    dflash_draft_backend,
    resolved_page_size,
)
from specguard.resolution.common import canonical_algorithm
from specguard.resolution.cuda_graph import cuda_graph_max_bs
from specguard.resolution.model_hooks import (
    fp8_gemm_runner_backend,
    kimi_dspark_draft_backend,
    kimi_symm_mem_turned_off,
    linear_attn_verify_backend,
)
from specguard.resolution.overlap import (
    mixed_chunk_unsupported,
    overlap_forced_off,
    spec_v2_env_overrides_overlap_flag,
)
from specguard.resolution.parallel import attention_dp_size
from specguard.resolution.result import Resolution
from specguard.resolution.sgl_jax import resolve_sgl_jax
from specguard.resolution.speculative import (
    adaptive_decision,
    draft_model_path,
    max_running_requests,
    speculative_params,
)
from specguard.spec import LaunchSpec


def resolve(spec: LaunchSpec, target: ModelFacts | None, draft: ModelFacts | None, env: Environment) -> Resolution:
    """What SGLang will run with, decided once for every rule that needs it."""
    raw_algorithm = spec.get("speculative_algorithm")
    if spec.dialect is Dialect.SGL_JAX:
        return resolve_sgl_jax(spec) if raw_algorithm is not None else Resolution()
    attention_dp = attention_dp_size(spec, env)
    if raw_algorithm is None:
        return Resolution(attention_dp_size=attention_dp)
    set_by: dict[str, str] = {}
    values = _speculative_values(spec, raw_algorithm, target, draft, env, set_by)
    values.update(_scheduler_values(spec, values["algorithm"], values["eagle_topk"], env, set_by))
    values.update(_backend_values(spec, values["algorithm"], values["eagle_topk"], target, draft, env, set_by))
    values["cuda_graph_max_bs"] = _graph_max_bs(spec, env, set_by)
    values.update(_model_hook_values(spec, values["algorithm"], values["page_size"], target, env, set_by))
    return Resolution(**values, attention_dp_size=attention_dp, set_by=set_by)


def _speculative_values(
    spec: LaunchSpec, raw_algorithm: str, target: ModelFacts | None, draft: ModelFacts | None, env: Environment, set_by: dict[str, str]
) -> dict[str, Any]:
    algorithm = canonical_algorithm(raw_algorithm)
    if algorithm != raw_algorithm:
        set_by["algorithm"] = "NEXTN is an alias of EAGLE" if raw_algorithm.upper() == "NEXTN" else "upper-cased"
    values: dict[str, Any] = {"algorithm": algorithm, "draft_model_path": draft_model_path(spec, algorithm, target, set_by)}
    adaptive, off_reason = adaptive_decision(spec, algorithm, target, env)
    if adaptive is not None:
        values.update(adaptive=adaptive, adaptive_off_reason=off_reason)
    steps, topk, draft_tokens = speculative_params(spec, algorithm, target, draft, adaptive is True, set_by, env.version)
    values.update(num_steps=steps, eagle_topk=topk, num_draft_tokens=draft_tokens)
    values["max_running_requests"] = max_running_requests(spec, algorithm, set_by, env.version)
    return values


def _scheduler_values(spec: LaunchSpec, algorithm: str | None, topk: int | None, env: Environment, set_by: dict[str, str]) -> dict[str, Any]:
    """Mixed chunked prefill and the overlap scheduler, as SGLang leaves them for this algorithm."""
    mixed = spec.get("enable_mixed_chunk")
    if mixed and mixed_chunk_unsupported(algorithm, env):
        mixed = False
        set_by["enable_mixed_chunk"] = f"{algorithm} does not support mixed chunked prefill"
    overlap_off = spec.get("disable_overlap_schedule")
    env_overrides_flag = spec_v2_env_overrides_overlap_flag(spec, algorithm, env.version)
    if overlap_off and env_overrides_flag:
        overlap_off = False
        set_by["disable_overlap_schedule"] = "SGLANG_ENABLE_SPEC_V2=1 turns the overlap scheduler back on in this release"
    if not overlap_off and overlap_forced_off(spec, algorithm, topk, env):
        overlap_off = True
        set_by["disable_overlap_schedule"] = "the overlap scheduler does not run this speculative configuration"
    return {
        "enable_mixed_chunk": mixed,
        "disable_overlap_schedule": overlap_off,
        "spec_v2_env_overrides_overlap_flag": env_overrides_flag,
    }


def _backend_values(
    spec: LaunchSpec,
    algorithm: str | None,
    topk: int | None,
    target: ModelFacts | None,
    draft: ModelFacts | None,
    env: Environment,
    set_by: dict[str, str],
) -> dict[str, Any]:
    """The target's attention backend, the page size it allows, and DFLASH's draft backend."""
    backend = spec.get("attention_backend")
    if backend is None:
        backend = default_backend(spec, target, env, resolved_topk=topk)
        if backend is not None:
            set_by["attention_backend"] = f"SGLang's default on {env.gpu.name if env.gpu else '?'}"
    page = resolved_page_size(spec, target, env, backend)
    if page != (spec.get("page_size") or 1):
        set_by["page_size"] = f"{backend if backend in ('fa4', 'trtllm_mla') else 'trtllm_mha'} only runs this page size"
    draft_backend = spec.get("speculative_draft_attention_backend")
    if algorithm == "DFLASH":
        resolved = dflash_draft_backend(spec, backend, env, draft)
        if resolved != draft_backend:
            set_by["draft_attention_backend"] = "DFLASH's draft runs a supported backend (the target's prefill backend by default)"
        draft_backend = resolved
    return {"attention_backend": backend, "page_size": page, "draft_attention_backend": draft_backend}


def _graph_max_bs(spec: LaunchSpec, env: Environment, set_by: dict[str, str]) -> int | None:
    max_bs = cuda_graph_max_bs(spec, env)
    if max_bs is not None and spec.get("cuda_graph_max_bs_decode") is None and spec.get("cuda_graph_max_bs") is None:
        set_by["cuda_graph_max_bs"] = "decode CUDA-graph default for the GPU memory (lowered only by a max running requests you set)"
    return max_bs


def _model_hook_values(
    spec: LaunchSpec, algorithm: str | None, page: int, target: ModelFacts | None, env: Environment, set_by: dict[str, str]
) -> dict[str, Any]:
    """The defaults the LongCat-Flash, Kimi hybrid and GLM-5-Next model hooks set. They run before the backends'
    page constraints (0.5.17 server_args.py:3530 before :3537; 0.5.23 arg_groups/pipeline.py:225 before :242), so a
    trtllm_mha draft backend they set also moves the page size (0.5.17 arg_groups/overrides.py:2081-2094)."""
    values: dict[str, Any] = {}
    if (gemm := fp8_gemm_runner_backend(spec, target, env)) is not None:
        values["fp8_gemm_runner_backend"] = gemm
        set_by["fp8_gemm_runner_backend"] = "SGLang's FP8 GEMM for a LongCat-Flash FP8 checkpoint without ue8m0 scales on SM100"
    if (verify := linear_attn_verify_backend(spec, target, env)) is not None:
        values["linear_attn_verify_backend"] = verify
        set_by["linear_attn_verify_backend"] = "the model's hook pins the linear-attention verify kernel under speculative decoding"
    if (draft := kimi_dspark_draft_backend(spec, algorithm, target, env)) is not None:
        values["draft_attention_backend"] = draft
        set_by["draft_attention_backend"] = "the Kimi hybrid hook's DSPARK draft backend on SM100"
        if page not in TRTLLM_MHA_PAGE_SIZES:
            values["page_size"] = 64
            set_by["page_size"] = "trtllm_mha only runs this page size"
    if kimi_symm_mem_turned_off(spec, target, env):
        values["enable_symm_mem"] = False
        set_by["enable_symm_mem"] = "the Kimi hybrid hook drops symmetric memory while CUDA graphs are on"
    return values
