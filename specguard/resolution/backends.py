"""The attention backends and KV page size SGLang resolves.

Default backend (P38): see ``DEFAULT_BACKEND_PICKED_BEFORE_SPEC`` and ``TRTLLM_DEFAULT_ON_SM100`` in
``sglang_facts.changes`` for when it is picked and what changed on SM100.
"""

from __future__ import annotations

from specguard.models import Dialect, Environment, ModelFacts
from specguard.resolution.common import canonical_algorithm, is_mla
from specguard.sglang_facts.changes import (
    DEFAULT_BACKEND_PICKED_BEFORE_SPEC,
    DFLASH_DRAFT_TRTLLM_MHA,
    DFLASH_DRAFT_TRTLLM_MHA_FA4_ON_SM100,
    DFLASH_TOPK_ONE_FOR_DEFAULT_BACKEND,
    FA4_DEFAULT_FOR_ASYMMETRIC_KV,
    FA4_PAGE_ONE_FOR_DIFFUSION_GEMMA,
    TRTLLM_DEFAULT_ON_BLACKWELL,
    TRTLLM_DEFAULT_ON_SM100,
    TRTLLM_MHA_PAGE_128_AND_DRAFT,
)
from specguard.spec import LaunchSpec

# The architectures ModelRunner gave fa3 by default on Hopper before the default moved ahead of the
# speculative settings (sglang 0.5.1 utils.py:2274-2290, is_fa3_default_architecture).
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
TRTLLM_MHA_PAGE_SIZES = (16, 32, 64, 128)  # 128 from 0.5.17 (TRTLLM_MHA_PAGE_128_AND_DRAFT)
# Targets fa4 on SM100 gives page size 1 instead of 128 (FA4_PAGE_ONE_FOR_DIFFUSION_GEMMA; any of config.json's architectures).
FA4_PAGE_ONE_ARCHITECTURES = frozenset({"DiffusionGemmaForBlockDiffusion"})
TRTLLM_MLA_PAGE_SIZES = (32, 64)


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
    if is_mla(target):
        return _mla_default_backend(major, target)
    return _mha_default_backend(spec, target, env, major, resolved_topk)


def _mla_default_backend(major: int, target: ModelFacts | None) -> str:
    if major == 9:
        return "fa3"
    if major == 10:
        architecture = target.architecture if target else None
        return "trtllm_mla" if architecture in TRTLLM_MLA_ON_SM100_ARCHITECTURES else "flashinfer"
    return "triton"


def _mha_default_backend(
    spec: LaunchSpec, target: ModelFacts | None, env: Environment, major: int, resolved_topk: int | None
) -> str | None:
    algorithm = canonical_algorithm(spec.get("speculative_algorithm"))
    page = spec.get("page_size") or 1
    before_spec = DEFAULT_BACKEND_PICKED_BEFORE_SPEC.present_in(env.version)
    typed_topk = spec.get("speculative_eagle_topk")
    topk = typed_topk if before_spec else (resolved_topk if resolved_topk is not None else typed_topk)
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
    if TRTLLM_DEFAULT_ON_SM100.present_in(env.version):
        if major != 10:
            return "flashinfer"
        dflash_as_chain = algorithm == "DFLASH" and DFLASH_TOPK_ONE_FOR_DEFAULT_BACKEND.present_in(env.version)
        if no_tree and (algorithm is None or dflash_as_chain or typed_topk is not None):
            return "fa4" if _asymmetric_kv(target) and FA4_DEFAULT_FOR_ASYMMETRIC_KV.present_in(env.version) else "trtllm_mha"
    elif major in (10, 12) and TRTLLM_DEFAULT_ON_BLACKWELL.present_in(env.version) and no_tree:
        return "trtllm_mha"  # 0.5.6.post1-0.5.6.post2: the automatic tree comes later and is refused (AB586)
    return "flashinfer"


def _asymmetric_kv(target: ModelFacts | None) -> bool:
    """K and V rows of different widths (MiMo-V2: 192 / 128); ModelConfig takes v_head_dim as head_dim when
    config.json has none (0.5.17 configs/model_config.py:803-823)."""
    if target is None or target.v_head_dim is None:
        return False
    head_dim = target.head_dim
    if head_dim is None and target.hidden_size and target.num_attention_heads:
        head_dim = target.hidden_size // target.num_attention_heads  # as ModelConfig derives it (:803-810)
    return head_dim is not None and head_dim != target.v_head_dim


def resolved_page_size(spec: LaunchSpec, target: ModelFacts | None, env: Environment, backend: str | None) -> int:
    """The page size after the backends' constraints, which run before the speculative hook
    (sglang 0.5.23 ``overrides.py:1144-1196`` trtllm_mla/trtllm_mha, ``:1274-1295`` fa4 on SM100
    for non-MLA targets while the *typed* topk is at most 1 (1 for a DiffusionGemma target from 0.5.22),
    ``:1341`` default 1)."""
    page = spec.get("page_size")
    if spec.dialect is Dialect.SGL_JAX:
        return page or 1
    split = {spec.get("prefill_attention_backend"), spec.get("decode_attention_backend")}
    targets = {backend, *split}
    if ("trtllm_mla" in targets) and page not in TRTLLM_MLA_PAGE_SIZES:
        page = 64
    with_128 = TRTLLM_MHA_PAGE_128_AND_DRAFT.present_in(env.version)
    draft_counts = with_128 and spec.get("speculative_draft_attention_backend") == "trtllm_mha"
    if ("trtllm_mha" in targets or draft_counts) and page not in (TRTLLM_MHA_PAGE_SIZES if with_128 else TRTLLM_MHA_PAGE_SIZES[:-1]):
        page = 64
    sm100 = env.gpu is not None and env.gpu.platform == "cuda" and env.gpu.compute_capability is not None and env.gpu.compute_capability[0] == 10
    if "fa4" in targets and sm100 and not is_mla(target) and (spec.get("speculative_eagle_topk") or 0) <= 1:
        page = 1 if _fa4_keeps_page_one(target, env) else 128
    return page or 1


def _fa4_keeps_page_one(target: ModelFacts | None, env: Environment) -> bool:
    architectures = set(target.architectures or ()) if target is not None else set()
    return FA4_PAGE_ONE_FOR_DIFFUSION_GEMMA.present_in(env.version) and bool(architectures & FA4_PAGE_ONE_ARCHITECTURES)


def dflash_draft_backend(spec: LaunchSpec, target_backend: str | None, env: Environment, draft: ModelFacts | None) -> str | None:
    """P78: sglang 0.5.23 ``speculative_hook.py:886-987``; trtllm_mha by release (``DFLASH_DRAFT_TRTLLM_MHA*``)."""
    fallback = "triton" if env.platform == "rocm" else "flashinfer"
    backend = spec.get("speculative_draft_attention_backend")
    if backend is None:
        backend = spec.get("prefill_attention_backend") or target_backend
    if backend is None:
        return fallback if env.gpu is not None else None
    if backend not in DRAFT_ATTENTION_BACKEND_CHOICES:
        return fallback
    if backend == "trtllm_mha":
        if not DFLASH_DRAFT_TRTLLM_MHA.present_in(env.version):
            return fallback
        if _draft_runs_trtllm_mha(draft):
            return backend
        gpu = env.gpu
        sm100 = gpu is not None and gpu.compute_capability is not None and gpu.compute_capability[0] == 10
        return "fa4" if sm100 and DFLASH_DRAFT_TRTLLM_MHA_FA4_ON_SM100.present_in(env.version) else fallback
    return backend


def _draft_runs_trtllm_mha(draft: ModelFacts | None) -> bool:
    """An all-sliding-window or explicitly causal draft config keeps trtllm_mha (0.5.17 speculative_hook.py:464-495, 0.5.23 :945-980).
    Unknown (no config at hand) counts as neither, as the DFLASH drafts published so far are (the SpecForge
    template has no is_causal and full-attention layers)."""
    if draft is None:
        return False
    layer_types = draft.layer_types or ()
    all_sliding = bool(layer_types) and len(layer_types) == draft.num_hidden_layers and set(layer_types) == {"sliding_attention"}
    return all_sliding or draft.is_causal is True
