"""Predict the speculative values SGLang will actually run with.

SGLang fills in and rewrites speculative settings during argument resolution
(``sglang/srt/arg_groups/speculative_hook.py`` in 0.5.23; ``server_args.py``
``_handle_speculative_decoding`` before the refactor). ``predict`` mirrors those steps as data,
each value with the step that set it, so ``check`` can show them before launch. The catalogue
IDs (P14, P17, ...) refer to ``shared/design/sglang-spec-checks.md``.
"""

from __future__ import annotations

from typing import Any

from packaging.version import Version

from specguard.frozen import Field
from specguard.models import Dialect, Environment, Frozen, ModelFacts
from specguard.spec import LaunchSpec


class SpecParams(Frozen):
    num_steps: int
    eagle_topk: int
    num_draft_tokens: int


# P14: SGLang's auto-chosen (steps, topk, draft tokens) by the target's architectures[0]
# (``auto_choose_speculative_params``, speculative_hook.py:1430-1461). STANDALONE always gets
# the default row.
AUTO_PARAMS_DEFAULT = SpecParams(num_steps=3, eagle_topk=1, num_draft_tokens=4)
AUTO_PARAMS_BY_ARCHITECTURE: dict[str, SpecParams] = {
    "LlamaForCausalLM": SpecParams(num_steps=5, eagle_topk=4, num_draft_tokens=8),
    "Grok1ForCausalLM": SpecParams(num_steps=5, eagle_topk=4, num_draft_tokens=8),
    "Grok1VForCausalLM": SpecParams(num_steps=5, eagle_topk=4, num_draft_tokens=8),
}

# P25: targets whose MTP layers SGLang uses as the draft when no draft path is given.
MTP_TARGET_ARCHITECTURES = frozenset(
    {
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "DeepseekV4ForCausalLM",
        "Glm4MoeForCausalLM",
        "Glm4MoeLiteForCausalLM",
        "GlmMoeDsaForCausalLM",
        "BailingMoeForCausalLM",
        "BailingMoeV2ForCausalLM",
        "BailingMoeV2_5ForCausalLM",
        "MistralLarge3ForCausalLM",
        "PixtralForConditionalGeneration",
        "HYV3ForCausalLM",
        "HYV4ForCausalLM",
        "Qwen4ExpForConditionalGeneration",
    }
)

EAGLE_FAMILY = frozenset({"EAGLE", "EAGLE3", "NEXTN", "STANDALONE"})
DEFAULT_MAX_RUNNING_REQUESTS_FOR_SPEC = 48
NGRAM_DEFAULT_MAX_BFS_BREADTH = 10
NGRAM_DEFAULT_DRAFT_TOKENS = 12
DFLASH_DEFAULT_BLOCK_SIZE = 16


class Resolution(Frozen):
    """The values SGLang will run with; ``set_by`` names the resolution step for each one it sets."""

    algorithm: str | None = None
    num_steps: int | None = None
    eagle_topk: int | None = None
    num_draft_tokens: int | None = None
    draft_model_path: str | None = None
    max_running_requests: int | None = None
    attention_backend: str | None = Field(
        default=None, description="the backend the target runs: --attention-backend, else SGLang's default for the GPU"
    )
    draft_attention_backend: str | None = None
    page_size: int | None = Field(default=None, description="the KV page size after the backends' page constraints")
    cuda_graph_max_bs: int | None = Field(default=None, description="the decode CUDA-graph max batch size at argument time")
    disable_overlap_schedule: bool | None = None
    enable_mixed_chunk: bool | None = None
    adaptive: bool | None = Field(
        default=None, description="--speculative-adaptive: True when SGLang runs it, False when it switches it off, None when not asked"
    )
    adaptive_off_reason: str | None = Field(default=None, description="why SGLang switches --speculative-adaptive off")
    attention_dp_size: int = Field(default=1, description="the attention-DP width SGLang resolves (1: no attention DP)")
    set_by: dict[str, str] = Field(default_factory=dict)

    def params(self) -> SpecParams | None:
        if None in (self.num_steps, self.eagle_topk, self.num_draft_tokens):
            return None
        return SpecParams(num_steps=self.num_steps, eagle_topk=self.eagle_topk, num_draft_tokens=self.num_draft_tokens)  # type: ignore[arg-type]


def canonical_algorithm(raw: str | None) -> str | None:
    """P05/P06: upper-cased, and NEXTN is EAGLE."""
    if raw is None:
        return None
    upper = raw.upper()
    return "EAGLE" if upper == "NEXTN" else upper


def auto_params(algorithm: str, target: ModelFacts | None) -> SpecParams | None:
    """P14. None when the target's architecture is unknown (SGLang would read it from the config)."""
    if algorithm == "STANDALONE":
        return AUTO_PARAMS_DEFAULT
    if target is None or target.architecture is None:
        return None
    return AUTO_PARAMS_BY_ARCHITECTURE.get(target.architecture, AUTO_PARAMS_DEFAULT)


def predict(spec: LaunchSpec, target: ModelFacts | None, draft: ModelFacts | None, env: Environment) -> Resolution:
    """What SGLang will run with, decided once for every rule that needs it."""
    resolved = _predict(spec, target, draft, env)
    if spec.dialect is Dialect.SGL_JAX:
        return resolved
    return resolved.model_copy(update={"attention_dp_size": attention_dp_size(spec, env)})


def _predict(spec: LaunchSpec, target: ModelFacts | None, draft: ModelFacts | None, env: Environment) -> Resolution:
    raw_algorithm = spec.get("speculative_algorithm")
    if raw_algorithm is None:
        return Resolution()
    if spec.dialect is Dialect.SGL_JAX:
        return _predict_sgl_jax(spec)
    algorithm = canonical_algorithm(raw_algorithm)
    steps = spec.get("speculative_num_steps")
    topk = spec.get("speculative_eagle_topk")
    draft_tokens = spec.get("speculative_num_draft_tokens")
    set_by: dict[str, str] = {}
    values: dict[str, Any] = {"algorithm": algorithm}
    if algorithm != raw_algorithm:
        set_by["algorithm"] = "NEXTN is an alias of EAGLE" if raw_algorithm.upper() == "NEXTN" else "upper-cased"

    draft_path = spec.get("speculative_draft_model_path")
    if (
        draft_path is None
        and algorithm in EAGLE_FAMILY
        and target is not None
        and target.architecture in MTP_TARGET_ARCHITECTURES
    ):
        draft_path = spec.get("model_path")
        set_by["draft_model_path"] = "MTP target: the draft is the target's own MTP layers"
    values["draft_model_path"] = draft_path

    adaptive_off = None
    if spec.has("--speculative-adaptive"):
        # Adaptive runs chains, so topk 1 is what the overlap scheduler would be judged with.
        overlap_off = bool(spec.get("disable_overlap_schedule")) or _overlap_forced_off(spec, algorithm, 1, env)
        adaptive_off = adaptive_off_reason(spec, algorithm, topk, env, overlap_off=overlap_off)
        values["adaptive"] = adaptive_off is None
        values["adaptive_off_reason"] = adaptive_off
    adaptive = values.get("adaptive") is True
    if adaptive:
        # P55: adaptive speculation runs a chain from the middle candidate (3 of [0, 1, 3, 5, 7]).
        steps = steps if steps is not None else ADAPTIVE_DEFAULT_STEPS
        topk, draft_tokens = 1, steps + 1
        for field in ("num_steps", "eagle_topk", "num_draft_tokens"):
            set_by[field] = "adaptive speculative decoding runs a chain"
    elif algorithm in EAGLE_FAMILY:
        if steps is None and topk is None and draft_tokens is None:
            auto = auto_params(algorithm, target)
            if auto is not None:
                steps, topk, draft_tokens = auto.num_steps, auto.eagle_topk, auto.num_draft_tokens
                for field in ("num_steps", "eagle_topk", "num_draft_tokens"):
                    set_by[field] = f"auto-chosen for {'STANDALONE' if algorithm == 'STANDALONE' else target.architecture if target else '?'}"
        # sgl-jax has no such rewrite: it runs what it is given (design/dialects.md section 2).
        if topk == 1 and steps is not None and draft_tokens != steps + 1 and spec.dialect is not Dialect.SGL_JAX:
            draft_tokens = steps + 1
            set_by["num_draft_tokens"] = "topk 1 forces draft tokens = steps + 1"
    elif algorithm == "NGRAM":
        breadth = spec.get("speculative_ngram_max_bfs_breadth")
        breadth = NGRAM_DEFAULT_MAX_BFS_BREADTH if breadth is None else breadth
        if topk != breadth:
            set_by["eagle_topk"] = "NGRAM takes topk from --speculative-ngram-max-bfs-breadth"
        topk = breadth
        if draft_tokens is None:
            draft_tokens = NGRAM_DEFAULT_DRAFT_TOKENS
            set_by["num_draft_tokens"] = "NGRAM default"
        if steps is None:
            steps = draft_tokens // topk if topk else None
            set_by["num_steps"] = "NGRAM: draft tokens // topk"
    elif algorithm == "DFLASH":
        if steps != 1:
            set_by["num_steps"] = "DFLASH only supports one step"
        if topk != 1:
            set_by["eagle_topk"] = "DFLASH only supports topk 1"
        steps, topk = 1, 1
        block = spec.get("speculative_dflash_block_size")
        if draft_tokens is None:
            draft_tokens = block or (draft.block_size if draft and draft.block_size else None)
            if draft_tokens is None and (draft is None or draft.block_size is None):
                draft_tokens = DFLASH_DEFAULT_BLOCK_SIZE if draft is not None else None
            set_by["num_draft_tokens"] = "DFLASH block size (flag, draft config, or 16)"
    values.update(num_steps=steps, eagle_topk=topk, num_draft_tokens=draft_tokens)

    mrr = spec.get("max_running_requests")
    if mrr is None and algorithm in (EAGLE_FAMILY | {"NGRAM", "DFLASH", "DSPARK", "FROZEN_KV_MTP"}):
        mrr = DEFAULT_MAX_RUNNING_REQUESTS_FOR_SPEC
        set_by["max_running_requests"] = "reset to 48 for speculative decoding"
    values["max_running_requests"] = mrr

    mixed = spec.get("enable_mixed_chunk")
    if mixed and _mixed_chunk_unsupported(algorithm, env):
        mixed = False
        set_by["enable_mixed_chunk"] = f"{algorithm} does not support mixed chunked prefill"
    values["enable_mixed_chunk"] = mixed

    overlap_off = spec.get("disable_overlap_schedule")
    if not overlap_off and _overlap_forced_off(spec, algorithm, topk, env):
        overlap_off = True
        set_by["disable_overlap_schedule"] = "the overlap scheduler does not run this speculative configuration"
    values["disable_overlap_schedule"] = overlap_off

    backend = spec.get("attention_backend")
    if backend is None:
        backend = default_backend(spec, target, env, resolved_topk=topk)
        if backend is not None:
            set_by["attention_backend"] = f"SGLang's default on {env.gpu.name if env.gpu else '?'}"
    values["attention_backend"] = backend

    page = resolved_page_size(spec, target, env, backend)
    if page != (spec.get("page_size") or 1):
        set_by["page_size"] = f"{backend if backend in ('fa4', 'trtllm_mla') else 'trtllm_mha'} only runs this page size"
    values["page_size"] = page

    draft_backend = spec.get("speculative_draft_attention_backend")
    if algorithm == "DFLASH" and spec.dialect is not Dialect.SGL_JAX:
        resolved = _dflash_draft_backend(spec, backend, draft, env)
        if resolved != draft_backend:
            set_by["draft_attention_backend"] = "DFLASH's draft runs a supported backend (the target's prefill backend by default)"
        draft_backend = resolved
    values["draft_attention_backend"] = draft_backend

    max_bs = cuda_graph_max_bs(spec, env)
    if max_bs is not None and spec.get("cuda_graph_max_bs_decode") is None and spec.get("cuda_graph_max_bs") is None:
        set_by["cuda_graph_max_bs"] = "decode CUDA-graph default for the GPU memory (lowered only by a max running requests you set)"
    values["cuda_graph_max_bs"] = max_bs
    return Resolution(**values, set_by=set_by)


# sgl-jax (sgl-project/sglang-jax HEAD cddbf6f1, python/sgl_jax/srt/server_args.py; design
# dialects.md section 2): plain field defaults, no choice by architecture, no topk-1 rewrite,
# NEXTN kept as its own name, attention backend "fa". It raises on the overlap scheduler
# instead of turning it off (JX002), and its max-running-requests default is not read here.
SGL_JAX_DEFAULT_PARAMS = SpecParams(num_steps=4, eagle_topk=5, num_draft_tokens=4)
SGL_JAX_DEFAULT_ATTENTION_BACKEND = "fa"


def _predict_sgl_jax(spec: LaunchSpec) -> Resolution:
    set_by: dict[str, str] = {}
    values: dict[str, Any] = {"algorithm": spec.get("speculative_algorithm").upper()}
    defaults = SGL_JAX_DEFAULT_PARAMS.model_dump()
    for field, dest in (
        ("num_steps", "speculative_num_steps"),
        ("eagle_topk", "speculative_eagle_topk"),
        ("num_draft_tokens", "speculative_num_draft_tokens"),
    ):
        value = spec.get(dest)
        if value is None:
            value = defaults[field]
            set_by[field] = "sgl-jax default"
        values[field] = value
    values["draft_model_path"] = spec.get("speculative_draft_model_path")
    values["max_running_requests"] = spec.get("max_running_requests")
    values["enable_mixed_chunk"] = spec.get("enable_mixed_chunk")
    values["disable_overlap_schedule"] = spec.get("disable_overlap_schedule")
    backend = spec.get("attention_backend")
    if backend is None:
        backend = SGL_JAX_DEFAULT_ATTENTION_BACKEND
        set_by["attention_backend"] = "sgl-jax default"
    values["attention_backend"] = backend
    values["page_size"] = spec.get("page_size") or 1
    return Resolution(**values, set_by=set_by)


# ---- attention backends ---------------------------------------------------------------------
# Default backend (P38). Up to 0.5.4 ``ModelRunner.model_specific_adjustment`` picked it after
# argument resolution, from the *resolved* topk (sglang 0.5.1
# ``model_executor/model_runner.py:414-449``); from 0.5.5 ``ServerArgs`` picks it before the
# speculative settings are resolved, from the topk the user typed (sglang 0.5.5
# ``server_args.py:1135-1178``; 0.5.23 ``arg_groups/model_override_base.py:277-351``).
# trtllm_mha became the default on SM100 in 0.5.7 (sglang 0.5.7 ``server_args.py:1517``).
DEFAULT_PICKED_BEFORE_SPEC_SINCE = Version("0.5.5")
TRTLLM_DEFAULT_ON_SM100_SINCE = Version("0.5.7")

# The architectures ModelRunner gave fa3 by default on Hopper before 0.5.5 (sglang 0.5.1
# utils.py:2274-2290, is_fa3_default_architecture).
FA3_DEFAULT_ARCHITECTURES_BEFORE_0_5_5 = frozenset(
    {
        "Qwen2ForCausalLM",
        "Llama4ForConditionalGeneration",
        "LlamaForCausalLM",
        "Gemma2ForCausalLM",
        "Gemma3ForConditionalGeneration",
        "Qwen3ForCausalLM",
        "Qwen3MoeForCausalLM",
        "Glm4MoeForCausalLM",
        "Glm4vMoeForConditionalGeneration",
        "Step3VLForConditionalGeneration",
    }
)
# MLA targets whose model override turns SGLang's SM100 MLA default (flashinfer) into
# trtllm_mla (sglang 0.5.23 arg_groups/model_overrides/deepseek_v2.py; earlier releases not read).
# Kimi K2.5/K2.6 are registered with the DeepSeek family there (:37-50) and take the same
# non-DSA branch (:178-188).
TRTLLM_MLA_ON_SM100_ARCHITECTURES = frozenset({"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "KimiK25ForConditionalGeneration"})
# The draft backends a DFLASH draft may run (sglang 0.5.23 arg_groups/choices.py:103-111).
DRAFT_ATTENTION_BACKEND_CHOICES = frozenset({"flashinfer", "fa3", "fa4", "triton", "ascend", "trtllm_mha", "intel_xpu"})


def _is_mla(target: ModelFacts | None) -> bool:
    return target is not None and target.kv_lora_rank is not None


def default_backend(
    spec: LaunchSpec, target: ModelFacts | None, env: Environment, resolved_topk: int | None = None
) -> str | None:
    """SGLang's own choice when ``--attention-backend`` is unset; None when the GPU is unknown.

    ``resolved_topk`` is the topk after resolution, which releases before 0.5.5 chose from.
    From 0.5.5 it is chosen before the speculative hook, from the topk the user typed
    (sglang 0.5.23 ``arg_groups/model_override_base.py:277-351``, ``utils/common.py:3960-3966``).
    """
    gpu = env.gpu
    if gpu is None:
        return None
    if gpu.platform == "rocm":
        return "aiter"
    if gpu.platform != "cuda" or gpu.compute_capability is None:
        return None
    major = gpu.compute_capability[0]
    algorithm = canonical_algorithm(spec.get("speculative_algorithm"))
    page = spec.get("page_size") or 1
    before_spec = env.version >= DEFAULT_PICKED_BEFORE_SPEC_SINCE
    typed_topk = spec.get("speculative_eagle_topk")
    topk = typed_topk if before_spec else (resolved_topk if resolved_topk is not None else typed_topk)
    if _is_mla(target):
        if major == 9:
            return "fa3"
        if major == 10:
            architecture = target.architecture if target else None
            return "trtllm_mla" if architecture in TRTLLM_MLA_ON_SM100_ARCHITECTURES else "flashinfer"
        return "triton"
    no_tree = algorithm is None or topk is None or (topk == 1 and page == 1)
    if major == 9:
        if not before_spec:
            architecture = target.architecture if target else None
            if architecture is None:
                return None
            no_tree = no_tree and architecture in FA3_DEFAULT_ARCHITECTURES_BEFORE_0_5_5
            if algorithm is not None and topk is None:
                return None
        return "fa3" if no_tree else "flashinfer"
    if major == 10 and env.version >= TRTLLM_DEFAULT_ON_SM100_SINCE:
        if no_tree and (algorithm is None or algorithm == "DFLASH" or typed_topk is not None):
            return "trtllm_mha"
    return "flashinfer"


TRTLLM_MHA_PAGE_SIZES = (16, 32, 64, 128)
TRTLLM_MLA_PAGE_SIZES = (32, 64)


def resolved_page_size(spec: LaunchSpec, target: ModelFacts | None, env: Environment, backend: str | None) -> int:
    """The page size after the backends' constraints, which run before the speculative hook
    (sglang 0.5.23 ``overrides.py:1144-1196`` trtllm_mla/trtllm_mha, ``:1274-1295`` fa4 on SM100
    for non-MLA targets while the *typed* topk is at most 1, ``:1341`` default 1)."""
    page = spec.get("page_size")
    if spec.dialect is Dialect.SGL_JAX:
        return page or 1
    split = {spec.get("prefill_attention_backend"), spec.get("decode_attention_backend")}
    targets = {backend, *split}
    if ("trtllm_mla" in targets) and page not in TRTLLM_MLA_PAGE_SIZES:
        page = 64
    if ("trtllm_mha" in targets or spec.get("speculative_draft_attention_backend") == "trtllm_mha") and page not in TRTLLM_MHA_PAGE_SIZES:
        page = 64
    sm100 = env.gpu is not None and env.gpu.platform == "cuda" and env.gpu.compute_capability is not None and env.gpu.compute_capability[0] == 10
    if "fa4" in targets and sm100 and not _is_mla(target) and (spec.get("speculative_eagle_topk") or 0) <= 1:
        page = 128
    return page or 1


def _dflash_draft_backend(spec: LaunchSpec, target_backend: str | None, draft: ModelFacts | None, env: Environment) -> str | None:
    """P78: sglang 0.5.23 ``speculative_hook.py:886-987``."""
    fallback = "triton" if env.platform == "rocm" else "flashinfer"
    backend = spec.get("speculative_draft_attention_backend")
    if backend is None:
        backend = spec.get("prefill_attention_backend") or target_backend
    if backend is None:
        return fallback if env.gpu is not None else None
    if backend not in DRAFT_ATTENTION_BACKEND_CHOICES:
        return fallback
    if backend == "trtllm_mha":
        # Kept only for an all-sliding-window or explicitly causal draft; the DFLASH drafts
        # published so far are neither (the SpecForge template has no is_causal).
        gpu = env.gpu
        return "fa4" if gpu is not None and gpu.compute_capability and gpu.compute_capability[0] == 10 else fallback
    return backend


def cuda_graph_max_bs(spec: LaunchSpec, env: Environment) -> int | None:
    """P28/P29: the decode CUDA-graph max batch size SGLang resolves (sglang 0.5.23
    ``arg_groups/memory_hook.py:84-215``): an explicit list's largest size, else the explicit
    max, else the GPU-memory default lowered to a max running requests the user set (not the
    automatic 48, which is set later). Unknown GPU: None."""
    from specguard.memory.estimate import (
        default_graph_max_bs,
        explicit_graph_bs,
        explicit_graph_max_bs,
        gpu_visible_mib,
    )

    given = explicit_graph_bs(spec)
    if given:
        return max(given)
    explicit = explicit_graph_max_bs(spec)
    if explicit is not None:
        return explicit
    if env.gpu is None or spec.dialect is Dialect.SGL_JAX:
        return None
    max_bs = default_graph_max_bs(gpu_visible_mib(env), spec.get("tp_size") or 1)
    user_mrr = spec.get("max_running_requests")
    if user_mrr is not None and max_bs > user_mrr:
        max_bs = user_mrr
    return max_bs


ADAPTIVE_DEFAULT_STEPS = 3
# ``--attn-dp-size`` arrived in 0.5.22; before it ``--enable-dp-attention`` alone turned it on.
ATTN_DP_SIZE_SINCE = Version("0.5.22")


def attention_dp_size(spec: LaunchSpec, env: Environment) -> int:
    """The attention-DP width SGLang resolves (1 = no attention DP)."""
    dp = spec.get("dp_size") or 1
    enabled = spec.get("enable_dp_attention")
    if env.version >= ATTN_DP_SIZE_SINCE:
        attn = spec.get("attn_dp_size") or 1
        if attn > 1:
            return attn
        return dp if enabled and dp > 1 else 1
    # Before 0.5.22 the switch itself is the test (``if ... and self.enable_dp_attention``).
    return max(dp, 2) if enabled else 1


# --speculative-adaptive arrived in 0.5.11 (server_args.py:5530-5540), also switched off while the
# overlap scheduler (SpecV2, on by default) runs (adaptive_spec_params.py:38-42: "adaptive is only
# implemented for EAGLEWorker v1"); 0.5.12 dropped that reason (PR 23336).
ADAPTIVE_OVERLAP_UNSUPPORTED_BEFORE = Version("0.5.12")


def adaptive_off_reason(spec: LaunchSpec, algorithm: str | None, topk: int | None, env: Environment, *, overlap_off: bool) -> str | None:
    """P55, decided once: why SGLang switches ``--speculative-adaptive`` off (it logs a warning and
    runs the static parameters), or None when it runs (sglang 0.5.23
    ``speculative/adaptive_spec_params.py:56-100`` ``adaptive_unsupported_reason``)."""
    from specguard.dialects import (
        _spelling,  # local: dialects imports spec, not resolution
    )

    if algorithm not in ("EAGLE", "EAGLE3"):
        return f"it supports only EAGLE/EAGLE3, not {algorithm}"
    if topk is not None and topk != 1:
        return f"it supports only topk 1, not {topk}"
    if attention_dp_size(spec, env) > 1:
        return "it does not support attention DP"
    for flag in ("--enable-multi-layer-eagle", "--enable-two-batch-overlap", "--enable-pdmux"):
        if spec.has(flag):
            return f"it does not support {_spelling(flag, spec.dialect)}"
    if env.version < ADAPTIVE_OVERLAP_UNSUPPORTED_BEFORE and not overlap_off:
        return (
            f"in {env.version} it only runs on the V1 worker and the overlap scheduler (SpecV2, on by default) is on; "
            f"set SGLANG_ENABLE_SPEC_V2=0 or {_spelling('--disable-overlap-schedule', spec.dialect)}"
        )
    return None

# SpecV2 (the overlap scheduler for speculative decoding), release by release, read from the
# wheels (``SGLANG_ENABLE_SPEC_V2`` in environ.py / server_args.py / speculative_hook.py):
#   <= 0.5.4    no V2: the EAGLE family always turns the overlap scheduler off
#   0.5.5-0.5.10  V2 behind SGLANG_ENABLE_SPEC_V2 (default off): EAGLE and EAGLE3 (0.5.5: EAGLE3
#                 shares EAGLE's worker factory, spec_info.py:264-269, 301-305), STANDALONE (0.5.9)
#   0.5.11-0.5.12 default on; an explicit topk > 1 falls back to V1 (overlap off)
#   0.5.13      V2 always; the variable only chooses overlap
#   >= 0.5.14   the variable is gone (a warning until 0.5.20, no trace from 0.5.21)
SPEC_V2_SINCE = Version("0.5.5")
SPEC_V2_DEFAULT_ON_SINCE = Version("0.5.11")
SPEC_V2_ALWAYS_SINCE = Version("0.5.13")
SPEC_V2_VARIABLE_GONE_SINCE = Version("0.5.14")
# NGRAM kept the overlap scheduler off up to 0.5.13 (speculative_hook.py:427-430 there).
NGRAM_OVERLAP_SINCE = Version("0.5.14")
# ``supports_mixed_chunk`` arrived in 0.5.19; before it the EAGLE family and DFLASH turned it off.
MIXED_CHUNK_PER_ALGORITHM_SINCE = Version("0.5.19")


def spec_v2_algorithms(version: Version) -> frozenset[str]:
    if version >= Version("0.5.9"):
        return frozenset({"EAGLE", "EAGLE3", "STANDALONE"})
    return frozenset({"EAGLE", "EAGLE3"})


def _mixed_chunk_unsupported(algorithm: str | None, env: Environment) -> bool:
    if algorithm in ("STANDALONE", "NGRAM", "FROZEN_KV_MTP"):
        return True
    return env.version < MIXED_CHUNK_PER_ALGORITHM_SINCE and algorithm in (EAGLE_FAMILY | {"DFLASH"})


def _overlap_forced_off(spec: LaunchSpec, algorithm: str | None, topk: int | None, env: Environment) -> bool:
    """Whether SGLang turns the overlap scheduler off (P33, P34, and SpecV2's history above)."""
    if (spec.get("pp_size") or 1) > 1:
        return True
    if spec.get("device") == "cpu" and algorithm in (EAGLE_FAMILY | {"NGRAM"}):
        return True
    version = env.version
    if algorithm == "NGRAM":
        return version < NGRAM_OVERLAP_SINCE
    if algorithm not in EAGLE_FAMILY:
        return False
    if version >= SPEC_V2_VARIABLE_GONE_SINCE:
        return False
    variable = spec.env_value("SGLANG_ENABLE_SPEC_V2")
    if version >= SPEC_V2_ALWAYS_SINCE:
        return variable is not None and not spec.env_flag("SGLANG_ENABLE_SPEC_V2")
    if version < SPEC_V2_SINCE or algorithm not in spec_v2_algorithms(version):
        return True
    explicit_topk = spec.get("speculative_eagle_topk")
    if version >= SPEC_V2_DEFAULT_ON_SINCE:
        enabled = variable is None or spec.env_flag("SGLANG_ENABLE_SPEC_V2")
        return not enabled or (explicit_topk is not None and explicit_topk > 1)
    return not spec.env_flag("SGLANG_ENABLE_SPEC_V2")
