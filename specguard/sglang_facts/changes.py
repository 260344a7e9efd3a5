"""Every SGLang version boundary specguard uses, one named change each.

A change is the first release that behaves the new way, and where that was read (a release file
and line, a PR). Rules, the resolution, memory and the runtime import these names; none of them
writes a ``Version("0.x")`` of its own, so one boundary is never written twice with two values.

    if ctx.version >= SPEC_V2_DEFAULT_ON.release: ...
    if SPEC_V2_DEFAULT_ON.present_in(ctx.version): ...
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TypeVar

from packaging.version import Version

from specguard.records import Record

T = TypeVar("T")


class Change(Record, kw_only=False, dict=True):  # dict: room for the cached_property
    """The first SGLang release with a behaviour, and the source it was read from."""

    first_release: str
    source: str

    @cached_property
    def release(self) -> Version:
        # Parsed on first use: the check path imports every table but reads only a few of them.
        return Version(self.first_release)

    def present_in(self, version: Version) -> bool:
        return version >= self.release


def as_of(ladder: Sequence[tuple[Change, T]], version: Version, before: T) -> T:
    """The value of the newest change in ``ladder`` (newest first) that ``version`` has, else ``before``."""
    for change, value in ladder:
        if change.present_in(version):
            return value
    return before


# Read from the released wheels (``pip download --no-deps sglang==X``); paths under sglang/srt/.

# ---- SpecV2 (the overlap scheduler for speculative decoding) ---------------------------------------
# The life of SGLANG_ENABLE_SPEC_V2, read in each release's wheel (sglang/srt/...):
#   <= 0.5.4      no V2: the EAGLE family always turns the overlap scheduler off
#   0.5.5-0.5.10  V2 behind SGLANG_ENABLE_SPEC_V2 (default off): EAGLE and EAGLE3, STANDALONE from 0.5.8
#   0.5.11-0.5.12 default on; an explicit topk > 1 falls back to V1 (overlap off)
#   0.5.13        V2 always; the variable only chooses overlap
#   >= 0.5.14     the variable is gone (a warning until 0.5.20, no trace from 0.5.21)
SPEC_V2_ENV_ADDED = Change("0.5.5", "0.5.5 environ.py:258 EnvBool(False); server_args.py:1539-1552, no topk check")
SPEC_V2_TOPK_CHECKED = Change("0.5.7", "0.5.7 server_args.py:2000-2014 raises on an explicit topk > 1 (to 0.5.10)")
SPEC_V2_STANDALONE = Change("0.5.8", "0.5.8 server_args.py:2141 adds STANDALONE to the spec-v2 branch (0.5.7 :2001 has EAGLE, EAGLE3)")
SPEC_V2_DEFAULT_ON = Change("0.5.11", "0.5.11 environ.py:459 EnvBool(True); server_args.py:3460-3473 explicit topk > 1 falls back to V1")
SPEC_V2_ALWAYS = Change("0.5.13", "0.5.13 arg_groups/speculative_hook.py:288-293: V2 always, the env var only picks overlap; speculative/ has no eagle_worker.py (0.5.12 has it)")
SPEC_V2_ENV_REMOVED = Change("0.5.14", "0.5.14 arg_groups/speculative_hook.py:69-75 warns 'has been removed' (to 0.5.20)")
SPEC_V2_ENV_GONE = Change("0.5.21", "0.5.21: no SGLANG_ENABLE_SPEC_V2 anywhere under sglang/srt, 0.5.20 still warns (catalogue P36)")
# The algorithms that reach the V2 worker while SpecV2 is opt-in or default-on, newest first. Before
# SPEC_V2_STANDALONE: EAGLE and EAGLE3. In 0.5.5/0.5.6 the "Beta spec is enabled for eagle" branch names
# EAGLE only, but EAGLE3 reaches V2 too: the variable keeps the overlap scheduler on for the whole EAGLE
# family (0.5.5 server_args.py:1548-1552) and EAGLE3 shares EAGLE's worker factory, which returns
# EAGLEWorkerV2 whenever overlap is on (speculative/spec_info.py:264-269, 301-305); issue 14077 hit it.
SPEC_V2_ALGORITHMS: tuple[tuple[Change, frozenset[str]], ...] = (
    (SPEC_V2_STANDALONE, frozenset({"EAGLE", "EAGLE3", "STANDALONE"})),
)
SPEC_V2_ALGORITHMS_BEFORE = frozenset({"EAGLE", "EAGLE3"})


def spec_v2_algorithms(version: Version) -> frozenset[str]:
    return as_of(SPEC_V2_ALGORITHMS, version, before=SPEC_V2_ALGORITHMS_BEFORE)


NGRAM_KEEPS_OVERLAP = Change("0.5.14", "0.5.13 arg_groups/speculative_hook.py:427-430 turns overlap off for NGRAM; 0.5.14 only mixed chunk (P37)")
MIXED_CHUNK_PER_ALGORITHM = Change("0.5.19", "0.5.19 arg_groups/speculative_hook.py:675-684 SpeculativeAlgorithm.supports_mixed_chunk()")
# ---- the automatic speculative parameters (auto_choose_speculative_params) ------------------------
# With steps, topk and draft tokens all unset, SGLang picks them by the target's architectures[0]:
# Llama and Grok-1 always (5, 4, 8); the others (5, 4, 8) until 0.5.7 except a growing list given the
# chain (3, 1, 4), and the chain for every other architecture from 0.5.8. Before 0.4.4.post4 the three
# are plain field defaults (the release's own ServerArgs defaults, sglang-serverargs-defaults.json).
AUTO_SPEC_PARAMS = Change("0.4.4.post4", "0.4.4.post4 server_args.py:136-138 (None), 342-351, auto_choose_speculative_params at 1313 gives all (5, 4, 8); 0.4.4.post2 :134-136 field defaults 5, 4, 8")
AUTO_PARAMS_DEEPSEEK_CHAIN = Change("0.4.7", "0.4.7 server_args.py:1664 auto_choose_speculative_params: DeepseekV3/DeepseekV2 get (3, 1, 4); 0.4.6.post5 gives every architecture (5, 4, 8)")
AUTO_PARAMS_GPT_OSS_CHAIN = Change("0.5.1", "0.5.1 server_args.py:2468 adds GptOssForCausalLM to the (3, 1, 4) list")
AUTO_PARAMS_BAILING_CHAIN = Change("0.5.3rc0", "0.5.3rc0 server_args.py:2844 adds BailingMoeForCausalLM, BailingMoeV2ForCausalLM")
AUTO_PARAMS_DEEPSEEK_V32_CHAIN = Change("0.5.3rc2", "0.5.3rc2 server_args.py:3301 adds DeepseekV32ForCausalLM")
AUTO_PARAMS_GLM_MISTRAL_CHAIN = Change("0.5.6.post1", "0.5.6.post1 server_args.py:4579 adds Glm4MoeForCausalLM, MistralLarge3ForCausalLM, PixtralForConditionalGeneration")
AUTO_PARAMS_MIMO_FLASH_CHAIN = Change("0.5.7", "0.5.7 server_args.py:5151 adds MiMoV2FlashForCausalLM")
AUTO_PARAMS_CHAIN_BY_DEFAULT = Change("0.5.8", "0.5.8 server_args.py:5425 auto_choose_speculative_params: every architecture but Llama and Grok-1 gets (3, 1, 4); 0.5.7 gives them (5, 4, 8); 0.5.23 arg_groups/speculative_hook.py:1430-1461 unchanged")

# ---- adaptive speculation (--speculative-adaptive) -------------------------------------------------
ADAPTIVE_WITH_OVERLAP = Change("0.5.12", "PR 23336; 0.5.11 speculative/adaptive_spec_params.py:38-42 'only implemented for EAGLEWorker v1'")
ADAPTIVE_CANDIDATE_CHECK = Change(
    "0.5.13", "0.5.13 arg_groups/speculative_hook.py:120-130 validate_adaptive_initial_steps (adaptive_spec_params.py:129-139; "
    "default tiers [1, 3, 7], [1, 3], [1] at :23-42); 0.5.12 adaptive_spec_params.py:94-106 added the initial steps to the candidates instead",
)
ADAPTIVE_CANDIDATE_ZERO = Change("0.5.14", "0.5.14 speculative/adaptive_spec_params.py:24-42 tiers [1, 3, 7], [0, 1, 3], [0, 1], [0]; the check at arg_groups/speculative_hook.py:502-507")
ADAPTIVE_CANDIDATE_FIVE = Change("0.5.20", "0.5.20 speculative/adaptive_spec_params.py:28 candidate_steps [1, 3, 5, 7] (0.5.19 :28 [1, 3, 7])")
# ---- flags renamed, added, removed -----------------------------------------------------------------
CUDA_GRAPH_DECODE_FLAGS = Change("0.5.14", "0.5.14 server_args.py:6358-6373 --cuda-graph-max-bs-decode / --cuda-graph-bs-decode, old names deprecated")
CUDA_GRAPH_OLD_FLAGS_REMOVED = Change("0.5.20", "0.5.20 server_args.py: --cuda-graph-max-bs / --cuda-graph-bs gone, ambiguous prefixes (catalogue P01)")
DFLASH_DRAFT_WINDOW_FLAG = Change("0.5.11", "0.5.11 server_args.py:5418 --speculative-dflash-draft-window-size")
DRAFT_WINDOW_FLAG = Change("0.5.12", "0.5.12 server_args.py:5873-5874 --speculative-draft-window-size")
DFLASH_DRAFT_WINDOW_DEPRECATED = Change("0.5.14", "0.5.14 server_args.py:6341-6348 deprecates --speculative-dflash-draft-window-size")
DFLASH_DRAFT_WINDOW_REMOVED = Change("0.5.20", "0.5.20 server_args.py: --speculative-dflash-draft-window-size gone")
DRAFT_WINDOW_ANY_ALGORITHM = Change("0.5.13", "0.5.13 arg_groups/speculative_hook.py:79-93 checks the window for every algorithm (0.5.11 server_args.py:3319, 3378-3384 and 0.5.12 :3589, 3648-3653: inside the DFLASH branch)")
DRAFT_SINK_FLAG = Change("0.5.21", "0.5.21 arg_groups/fields/spec.py:162 speculative_draft_sink_size (absent in 0.5.20)")
TOKENSPEED_MLA_ALIAS = Change("0.5.23", "0.5.23 arg_groups/serving_hook.py:303-320 rewrites tokenspeed_mla to cutedsl_mla; tokenspeed_mla_backend.py is gone")
ATTN_DP_SIZE_FLAG = Change("0.5.22", "0.5.22 arg_groups/fields/parallel.py:81; server_args.py:416-424 deprecates --enable-dp-attention (P03)")
NGRAM_FLAGS = Change("0.5.3", "0.5.3 server_args.py:2106-2137 --speculative-ngram-* (none in 0.5.2)")
NGRAM_TRIE_DEPTH_FLAG = Change("0.5.10", "0.5.10 server_args.py:4880 --speculative-ngram-max-trie-depth (PR 21181)")
NGRAM_MATCH_WINDOW_FLAGS_REMOVED = Change("0.5.10", "PR 21225 matches every trie suffix; 0.5.9 server_args.py:4026-4060 has the window flags, 0.5.10 none")
MAMBA_RADIX_STRATEGY_FLAG = Change("0.5.14", "0.5.14 server_args.py:6350-6356 --mamba-radix-cache-strategy, --mamba-scheduler-strategy a deprecated alias")
DRAFT_QUANTIZATION_FLAG = Change("0.5.7", "sglang#14820; 0.5.7 server_args.py:432, 772-777 (absent from 0.5.6.post2)")
# ---- attention backends ----------------------------------------------------------------------------
# topk > 1 with page_size > 1: the backends allowed (catalogue P21, P67).
PAGE_TREE_FLASHINFER_ONLY = Change("0.5.2rc0", "0.5.2rc0 server_args.py:752-759 raises unless flashinfer (none in 0.5.1.post3)")
PAGE_TREE_FA3 = Change("0.5.6", "0.5.6 server_args.py:1752-1759 allows flashinfer and fa3")
PAGE_TREE_TRITON = Change("0.5.13", "0.5.13 arg_groups/speculative_hook.py:373-383 allows flashinfer, fa3 and triton")
NGRAM_PAGE_TREE_FLASHINFER_ONLY = Change("0.5.3", "0.5.3 server_args.py:1148-1153 NGRAM breadth > 1 with page_size > 1 only on flashinfer")
DRAFT_GRAPH_PADDED_REPLAY_FIX = Change("0.5.3", "PR 10892; 0.5.3 speculative/eagle_draft_cuda_graph_runner.py:302-305 (absent in 0.5.2)")
DEFAULT_BACKEND_PICKED_BEFORE_SPEC = Change("0.5.5", "0.5.5 server_args.py:1135-1178 (0.5.1 model_executor/model_runner.py:414-449 picked it after)")
TRTLLM_DEFAULT_ON_SM100 = Change("0.5.7", "0.5.7 server_args.py:1517 trtllm_mha the default attention backend on SM100")
NGRAM_TORCH_NATIVE_WARMUP_CRASH = Change("0.5.18", "sglang#36352: seen on 0.5.18, 'persists in the latest version'")
ROCM_VERIFY_BROADCAST = Change("0.5.18", "PR 34238; 0.5.18 speculative/eagle_utils.py:741-754")
MINIMAX_M3_ROCM_VERIFY = Change("0.5.22", "PRs 35889, 36659; 0.5.22 layers/attention/minimax_sparse_backend.py:280-285 (chain only), 428, 464, 570, 1457 (the HIP verify path)")
# Targets whose model override turns multi-layer EAGLE and SGLANG_ENABLE_SPEC_V2 on by itself for EAGLE.
FORCED_MULTI_LAYER_EAGLE: dict[str, Change] = {
    "MiMoV2FlashForCausalLM": Change("0.5.7", "0.5.7 server_args.py:1216-1223"),
    "Step3p5ForCausalLM": Change("0.5.9", "0.5.9 server_args.py:1426-1433 (absent in 0.5.8.post1)"),
}
# EAGLE-family verify commits the argmax for every request on some platforms. From 0.5.14 one
# function verifies for both spec paths (0.5.14 speculative/eagle_utils.py:437); before, the v1 path
# went greedy wherever the tree-sampling kernel was missing, which no launch shows.
GREEDY_VERIFY_ONE_PATH = Change("0.5.14", "0.5.14 speculative/eagle_utils.py:437 `is_all_greedy or _is_npu or _is_hip`")
XPU_TREE_KERNELS = Change("0.5.15", "0.5.15 speculative/eagle_utils.py:231,393 and eagle_worker_v2.py:406,436: XPU Triton tree kernels and graph runners (AB251)")
GREEDY_VERIFY_XPU = Change("0.5.15", "0.5.15 speculative/eagle_utils.py:620 adds _is_xpu")
GREEDY_VERIFY_CPU = Change("0.5.16", "0.5.16 speculative/eagle_utils.py:650 adds _is_cpu")
NPU_SAMPLED_VERIFY = Change("0.5.20", "0.5.20 speculative/eagle_utils.py:784 drops _is_npu (0.5.19 :744 had it)")
HIP_REJECTION_SAMPLED_VERIFY = Change(
    "0.5.21", "0.5.21 speculative/eagle_utils.py:695-710 (HIP samples under rejection sampling), "
    "arg_groups/speculative_hook.py:40-62,1073-1093 (turned on by itself for EAGLE chains)",
)
# The first release whose EAGLE tree build and greedy verify import their sgl_kernel ops on HIP too
# (the sampling ops stay CUDA-only, so a sampled verify on ROCm hit an unimported name).
EAGLE_HIP_KERNELS = Change(
    "0.4.4.post2", "0.4.4.post2 speculative/build_eagle_tree.py:9 `is_cuda_available() or is_hip()`, eagle_utils.py:19-27 "
    "imports verify_tree_greedy on HIP (0.4.4.post1 eagle_utils.py:22 CUDA only)",
)
# Before GREEDY_VERIFY_ONE_PATH each spec path verified apart on ROCm. V1 goes greedy where the
# tree-sampling kernel was not imported (CUDA only): from 0.5.1; 0.5.0rc2 called it anyway.
HIP_GREEDY_VERIFY_V1 = Change(
    "0.5.1", "0.5.1 speculative/eagle_utils.py:52,429-437 TREE_SPEC_KERNEL_AVAILABLE false on HIP: argmax "
    "(0.5.0rc2 :31-40 imports tree_speculative_sampling_target_only on CUDA only, :414-461 calls it when not all greedy)",
)
# The V2 worker's verify called that CUDA-only kernel on HIP until it listed _is_hip.
SPEC_V2_BETA_FLAG = Change("0.5.4", "0.5.4 server_args.py:1296-1302,2411 --enable-beta-spec runs EAGLE on the V2 worker")
HIP_GREEDY_VERIFY_V2 = Change(
    "0.5.10rc0", "0.5.10rc0 speculative/eagle_info_v2.py:313 adds _is_hip to the greedy test "
    "(0.5.9 :300 `is_all_greedy or _is_npu`, the kernel imported on CUDA only at :43-49)",
)
# NGRAM verify: greedy for every request until it sampled; the env var chose greedy again until the
# verify moved onto eagle_sample, after which nothing reads the variable.
NGRAM_SAMPLED_VERIFY = Change(
    "0.5.5.post3", "0.5.5.post3 speculative/ngram_info.py:412-425 samples unless SGLANG_NGRAM_FORCE_GREEDY_VERIFY "
    "(0.5.5.post2 :418-426 'forces to use greedy verification')",
)
NGRAM_VERIFY_VIA_EAGLE_SAMPLE = Change(
    "0.5.14", "0.5.14 speculative/ngram_worker.py:17,436 verifies through eagle_utils.eagle_sample; "
    "SGLANG_NGRAM_FORCE_GREEDY_VERIFY is read nowhere from then (0.5.13 ngram_info.py:440 read it)",
)
# Algorithm-table columns that changed with a release (sglang_facts/algorithms.py holds 0.5.23's).
DSPARK_DP_SPEC_PREFILL_COORDINATION = Change("0.5.22", "0.5.22 arg_groups/speculative_hook.py:244-251 (0.5.21: EAGLE and EAGLE3)")
DSPARK_ON_DEEPSEEK_V4 = Change("0.5.16", "0.5.16 arg_groups/deepseek_v4_hook.py:55-63 (0.5.12-0.5.15.post1 asserted EAGLE only)")
UNIFIED_MEMORY_DSPARK = Change("0.5.18", "0.5.18 server_args.py:8312-8317 (DSPARK only; 0.5.15-0.5.17 refused every algorithm)")
DEEPEP_V2_BUDGET_BY_ATTN_DP_SIZE = Change("0.5.22", "0.5.22 arg_groups/moe_hook.py:580-596 divides the request pool by view.attn_dp_size (before: --dp-size under --enable-dp-attention)")
MEGA_MOE_BUDGET_POOL_CAP = Change("0.5.23", "0.5.23 arg_groups/mega_moe_hook.py:94-106 caps the decode graph bucket by the request pool per attention-DP rank (0.5.21-0.5.22 :92-98 take the max bs)")
SPEC_TP_SYNC_DSPARK_DRAFT_SITE = Change("0.5.22", "0.5.22 speculative/spec_tp_sync.py:66-82 (site 17 dspark-draft; 2-6 kept as retired aliases)")
UNIFIED_MEMORY_EAGLE_DFLASH = Change("0.5.22", "0.5.22 arg_groups/kv_cache_hook.py:585-597")
# ---- hybrid (mamba / linear attention) targets -----------------------------------------------------
MAMBA_NO_BUFFER_ROCM_FALLBACK = Change("0.5.11", "PR 22908; 0.5.11 server_args.py:2441-2456 (0.5.10 raises on every platform)")
NGRAM_VERIFY_TRACKS_MAMBA = Change("0.5.14", "0.5.14 speculative/ngram_worker.py:334")
MAMBA_AUTO_EXTRA_BUFFER = Change("0.5.14", "0.5.14 server_args.py:4338-4351 'auto' mamba strategy resolves to extra_buffer (triton linear attention)")
# ---- features --------------------------------------------------------------------------------------
HICACHE_DRAFT_KV_BACKED = Change("0.5.11", "sglang#21125; 0.5.11 managers/scheduler.py:441,990-1030, managers/cache_controller.py:843-852")
TORCH_COMPILE_GRAPH_PADDING_ASSERT = Change("0.5.12", "0.5.12 server_args.py:7243 (catalogue P48)")
REJECTION_IMPLIED_BY_BLOCK = Change("0.5.22", "0.5.22 arg_groups/speculative_hook.py:171-181 block verification turns rejection sampling on for EAGLE/EAGLE3 (new flag)")
DETERMINISTIC_REJECTION_ON_CUDA = Change("0.5.23", "0.5.23 arg_groups/speculative_hook.py:1225-1230 refused only off CUDA; 0.5.22 :1144-1149 on every device")
# ---- parallelism, PD, LoRA -------------------------------------------------------------------------
CP_TP_SHARING_WIDENED = Change("0.5.23", "0.5.23 arg_groups/cp_tp_group_sharing_hook.py:21-24 adds Qwen4Exp, :53-66 lets GLM5-Next run DFLASH (0.5.22 :20, :48-54 native MTP only)")
PP_SPEC_EXCEPTIONS = Change("0.5.21", "0.5.21 check_pipeline_parallel_compat; 0.5.20 arg_groups/validation_hook.py:80-84 rejects every algorithm")
LORA_WITH_NGRAM = Change("0.5.5.post3", "sglang#12903; 0.5.5.post3 server_args.py:3876-3881 (0.5.5 has neither)")
LORA_WITH_EAGLE_DFLASH = Change("0.5.19", "0.5.19 arg_groups/lora_hook.py:170-190")
DFLASH_DP_ATTENTION_NPU = Change("0.5.20", "0.5.20 arg_groups/speculative_hook.py:209-212 'validated on NPU only'")
DFLASH_DP_ATTENTION_CUDA = Change("0.5.23", "0.5.23 arg_groups/speculative_hook.py:303-317")
NGRAM_ON_CPU = Change("0.5.16", "0.5.16 arg_groups/speculative_hook.py:652-655 'CUDA or CPU devices'")
NGRAM_ON_XPU = Change("0.5.21", "0.5.21 'CUDA, CPU, or XPU devices'; 0.5.23 speculative_hook.py:1287-1290")
NGRAM_ROCM_TREE_OP = Change("0.5.23", "0.5.23 kernels/ops/speculative/reconstruct_tree.py:47-50 (0.5.21 ngram_worker.py:39-46 sgl_kernel only)")
# The first release whose build_disagg_draft_input rebuilds each algorithm's draft input on a decode node.
PD_DECODE_DRAFT_INPUT: dict[str, Change] = {
    "DSPARK": Change("0.5.17", "0.5.17 speculative/spec_info.py:172-187 build_disagg_draft_input, DSPARK branch"),
    "DFLASH": Change("0.5.20", "0.5.20 speculative/spec_info.py:194-214 build_disagg_draft_input, DFLASH branch"),
}
# The algorithms --disaggregation-decode-enable-radix-cache accepts, newest first; none before.
DECODE_RADIX_CACHE_ALGORITHMS: tuple[tuple[Change, tuple[str, ...]], ...] = (
    (Change("0.5.23", "0.5.23 arg_groups/speculative_hook.py:164-173 (sglang#39150)"), ("DSPARK", "EAGLE", "EAGLE3")),
    (Change("0.5.21", "0.5.21 arg_groups/pd_disaggregation_hook.py:97"), ("DSPARK",)),
)
# ---- draft models ----------------------------------------------------------------------------------
DRAFT_CONTEXT_GUARD = Change("0.5.1", "PR 9388 stops stretching a short draft's context")
EAGLE3_AUX_COUNT_FROM_CONFIG = Change("0.5.12", "0.5.12 models/llama_eagle3.py:153-161 num_aux_hidden_states (0.5.11 :139 always hidden_size_in * 3)")
# The first release whose model class for these target architectures has the two hooks the
# EAGLE worker calls on the target: ``get_embed_and_head()`` (every EAGLE/EAGLE3 draft worker,
# unconditionally: ``speculative/eagle_worker.py:119`` in 0.4.6, :158 in 0.5.10) and
# ``set_eagle3_layers_to_capture()`` (EAGLE3 only, ``model_executor/model_runner.py:668`` in
# 0.5.10). Both arrive together in each of these classes, so one release per architecture.
# Read in the wheels (``models/<file>.py``, ``grep "def get_embed_and_head"``):
# - Qwen2.5-VL (``qwen2_5_vl.py``): absent in 0.4.6, 0.5.0rc1 and 0.5.1, present in 0.5.2 (:654-657,
#   sgl-project/sglang#8801); absent in 0.5.2rc0, rc1 and rc2 (read for this table).
# - Qwen3-VL (``qwen3_vl.py``): absent in 0.5.5, 0.5.9, 0.5.10 and 0.5.10.post1, present in 0.5.11
#   (:1395-1409, sgl-project/sglang#22230); ``Qwen3VLMoeForConditionalGeneration``
#   (``qwen3_vl_moe.py:173``) subclasses it.
# - Gemma 3 (``gemma3_mm.py``, ``gemma3_causal.py``): absent from 0.4.6 to 0.5.11, present in 0.5.12
#   (gemma3_mm.py:485-497, gemma3_causal.py:897-925, sgl-project/sglang#23976).
# - Kimi K2.5 (``kimi_k25.py``, the vision-language wrapper around DeepseekV3ForCausalLM): absent in
#   0.5.9, present in 0.5.10rc0 (:841-850) and 0.5.10 (sgl-project/sglang#19689).
# - Qwen3-MoE (``qwen3_moe.py``) and Llama 4 (``mllama4.py``): neither hook from their first wheel
#   (0.4.5.post2 / 0.4.5) to 0.4.8.post1 (EntryClass qwen3_moe.py:830, mllama4.py:227), both in 0.4.9.
# - Gemma 4 (``gemma4_causal.py``, ``gemma4_mm.py``): registered in 0.5.11 (EntryClass :1009 / :878)
#   without either hook, both from 0.5.12.
# - MiniMax-M2 (``minimax_m2.py``, EntryClass from 0.5.4.post1): get_embed_and_head only from
#   0.5.5.post3 (:824); its set_eagle3_layers_to_capture came earlier (EAGLE3_CAPTURE).
# - Bailing MoE (``bailing_moe.py``): 0.5.0rc0 to 0.5.2 register BailingMoeForCausalLM (EntryClass :425, class
#   :336) without get_embed_and_head; 0.5.3rc0 rebuilds it on BailingMoEForCausalLM, which has it (:816).
#   Its EAGLE3 hook came later (EAGLE3_CAPTURE).
# Architectures not listed here are not judged.
EAGLE_HOOKS: dict[str, Change] = {
    "Qwen2_5_VLForConditionalGeneration": Change("0.5.2", "sglang#8801; 0.5.2 models/qwen2_5_vl.py:654-657 (absent in 0.5.2rc0-rc2)"),
    "Qwen3VLForConditionalGeneration": Change("0.5.11", "sglang#22230; 0.5.11 models/qwen3_vl.py:1395-1409"),
    "Qwen3VLMoeForConditionalGeneration": Change("0.5.11", "0.5.11 models/qwen3_vl_moe.py:173 subclasses Qwen3-VL"),
    "Gemma3ForConditionalGeneration": Change("0.5.12", "sglang#23976; 0.5.12 models/gemma3_mm.py:485-497"),
    "Gemma3ForCausalLM": Change("0.5.12", "sglang#23976; 0.5.12 models/gemma3_causal.py:897-925"),
    "KimiK25ForConditionalGeneration": Change("0.5.10rc0", "sglang#19689; 0.5.10rc0 models/kimi_k25.py:841-850"),
    "Qwen3MoeForCausalLM": Change("0.4.9", "0.4.9 models/qwen3_moe.py:756, :759 (neither in 0.4.8.post1)"),
    "Llama4ForConditionalGeneration": Change("0.4.9", "0.4.9 models/mllama4.py:229, :233 (neither in 0.4.8.post1)"),
    "Gemma4ForCausalLM": Change("0.5.12", "0.5.12 models/gemma4_causal.py:1122, :1127 (neither in 0.5.11)"),
    "Gemma4ForConditionalGeneration": Change("0.5.12", "0.5.12 models/gemma4_mm.py:950, :955 (neither in 0.5.11)"),
    "MiniMaxM2ForCausalLM": Change("0.5.5.post3", "0.5.5.post3 models/minimax_m2.py:824 get_embed_and_head (absent in 0.5.5.post2)"),
    "BailingMoeForCausalLM": Change("0.5.3rc0", "0.5.3rc0 models/bailing_moe.py:816, inherited (absent in 0.5.2 :336-425)"),
}
# Classes that had ``get_embed_and_head()`` (so EAGLE and NEXTN run) long before a working
# ``set_eagle3_layers_to_capture()``: only EAGLE3 fails on them.
# - DeepSeek V2/V3 (``deepseek_v2.py``, DeepseekV3ForCausalLM subclasses DeepseekV2ForCausalLM):
#   get_embed_and_head from 0.4.5 (:1586) on; set_eagle3_layers_to_capture absent from 0.4.5 to
#   0.5.4.post1, present in 0.5.4.post3 (:3767) and 0.5.5 (:3822); there is no 0.5.4.post2 release.
# - Qwen3.5's VL wrappers subclass Qwen3VLForConditionalGeneration: before 0.5.11 neither has
#   set_eagle3_layers_to_capture (AttributeError); from 0.5.11 to 0.5.21 they inherit Qwen3-VL's, which
#   only assigns ``model.layers_to_capture`` while Qwen3.5's decoder collects aux states from layers
#   marked ``_is_layer_to_capture`` (set only for DFLASH), so EAGLE3 gets none and fails at start
#   (sgl-project/sglang#25408). 0.5.22 adds ``Qwen3_5ForCausalLM.set_eagle3_layers_to_capture``
#   (qwen3_5.py:1837-1840) and the wrapper delegates to it (qwen3_vl.py:1793-1794). Read in the
#   wheels 0.5.9 to 0.5.23 (``grep -n set_eagle3_layers_to_capture models/qwen3_5.py models/qwen3_vl.py``).
# - Qwen2ForCausalLM (Qwen2/2.5, QwQ): get_embed_and_head in every release read, set_eagle3_layers_to_capture
#   from 0.5.2rc0 (qwen2.py:630; absent in 0.4.9, 0.5.0rc1, 0.5.1 and 0.5.1.post3; sgl-project/sglang#9216).
# - Qwen3.5's text-only classes (``qwen3_5_text.py``, EntryClass from 0.5.17 :208; not registered before,
#   VB012's case, and models/transformers.py has no capture hook either): get_embed_and_head from 0.5.17
#   (:103), set_eagle3_layers_to_capture only from 0.5.22 (:130-139; absent in 0.5.17, 0.5.18 and 0.5.21),
#   which the EAGLE3 model runner calls unconditionally (0.5.21
#   model_runner_components/attention_backend_setup.py:54-55).
# - Classes with get_embed_and_head in every wheel that registers them, set_eagle3_layers_to_capture
#   from the release given (absent in the release before): Qwen3ForCausalLM (qwen3.py, 0.4.8.post1 :393
#   has only get_embed_and_head), Glm4MoeForCausalLM (glm4_moe.py, 0.5.4.post3 :1011 has only
#   get_embed_and_head), LongcatFlashForCausalLM (longcat_flash.py, 0.5.5.post3 :1006 likewise),
#   Qwen3NextForCausalLM (qwen3_next.py, none from 0.5.2, its first wheel, to 0.5.8.post1), and the
#   Bailing MoE classes (bailing_moe.py, BailingMoeForCausalLM and BailingMoeV2ForCausalLM inherit
#   BailingMoEForCausalLM; 0.5.8.post1 :837 has only get_embed_and_head).
# - MiniMaxM2ForCausalLM gets set_eagle3_layers_to_capture in 0.5.5.post1 (:809, absent in 0.5.5), two
#   releases before get_embed_and_head (EAGLE_HOOKS).
EAGLE3_CAPTURE: dict[str, Change] = {
    "DeepseekV2ForCausalLM": Change("0.5.4.post3", "0.5.4.post3 models/deepseek_v2.py:3767 (absent in 0.5.4.post1)"),
    "DeepseekV3ForCausalLM": Change("0.5.4.post3", "0.5.4.post3 models/deepseek_v2.py:3767, inherited"),
    "Qwen3_5ForConditionalGeneration": Change("0.5.22", "sglang#25408; 0.5.22 models/qwen3_5.py:1837-1840, qwen3_vl.py:1793-1794"),
    "Qwen3_5MoeForConditionalGeneration": Change("0.5.22", "sglang#25408; 0.5.22 models/qwen3_5.py:1837-1840, qwen3_vl.py:1793-1794"),
    "Qwen2ForCausalLM": Change("0.5.2rc0", "sglang#9216; 0.5.2rc0 models/qwen2.py:630 (absent in 0.5.1.post3)"),
    "Qwen3_5ForCausalLM": Change("0.5.22", "0.5.22 models/qwen3_5_text.py:130-139 (0.5.17-0.5.21 qwen3_5_text.py has none)"),
    "Qwen3_5MoeForCausalLM": Change("0.5.22", "0.5.22 models/qwen3_5_text.py:130-139, inherited (:223)"),
    "Qwen3ForCausalLM": Change("0.4.9", "0.4.9 models/qwen3.py:461 (absent in 0.4.8.post1)"),
    "Glm4MoeForCausalLM": Change("0.5.5", "0.5.5 models/glm4_moe.py:1165 (absent in 0.5.4.post3)"),
    "LongcatFlashForCausalLM": Change("0.5.6", "0.5.6 models/longcat_flash.py:1039 (absent in 0.5.5.post3)"),
    "Qwen3NextForCausalLM": Change("0.5.9", "0.5.9 models/qwen3_next.py:1139 (absent in 0.5.2-0.5.8.post1)"),
    "BailingMoeForCausalLM": Change("0.5.9", "0.5.9 models/bailing_moe.py:1034, inherited (absent in 0.5.8.post1)"),
    "BailingMoeV2ForCausalLM": Change("0.5.9", "0.5.9 models/bailing_moe.py:1034, inherited (absent in 0.5.8.post1)"),
    "MiniMaxM2ForCausalLM": Change("0.5.5.post1", "0.5.5.post1 models/minimax_m2.py:809 (absent in 0.5.5)"),
}
# From this release Qwen3.5's wrappers inherit a set_eagle3_layers_to_capture that marks no layer.
INHERITED_NO_OP_CAPTURE: dict[str, Change] = {
    "Qwen3_5ForConditionalGeneration": Change("0.5.11", "0.5.11 models/qwen3_vl.py:1398 set_eagle3_layers_to_capture, inherited"),
    "Qwen3_5MoeForConditionalGeneration": Change("0.5.11", "0.5.11 models/qwen3_vl.py:1398 set_eagle3_layers_to_capture, inherited"),
}
# Draft head classes SGLang registers only from a given release (EntryClass in that wheel, none before).
DRAFT_HEAD_CLASS: dict[str, Change] = {
    "Eagle3DeepseekV2ForCausalLM": Change("0.5.12", "0.5.12 models/kimi_k25_eagle3.py:472 (no such file in 0.5.11)"),
    "MistralForCausalLMEagle": Change("0.5.11", "0.5.11 models/mistral_eagle.py:208 (none in 0.5.10)"),
    "MuseGlimmerAssistantModel": Change("0.5.18", "0.5.18 models/dflash.py:628; 0.5.17 EntryClass :589 lacks it"),
}
# ---- slime / RL ------------------------------------------------------------------------------------
WEIGHTS_CPU_BACKUP = Change("0.5.3", "0.5.3 model_executor/model_runner.py:785-787 enable_weights_cpu_backup")
DRAFT_WEIGHTS_CPU_BACKUP = Change("0.5.5.post3", "0.5.5.post3 model_executor/model_runner.py:760-761 enable_draft_weights_cpu_backup")
# ---- trtllm attention backends refusing speculation at argument time (0.4.10.post2-0.5.0rc2) ------
# Read in server_args.py (__post_init__); 0.5.1 drops both raises (0.5.1 server_args.py:476-498).
TRTLLM_MHA_SPEC_REFUSED = Change("0.5.0rc0", "0.5.0rc0 server_args.py:452-471 trtllm_mha on any of the three backend flags raises with speculation (no trtllm_mha in 0.4.10.post2)")
TRTLLM_MLA_DECODE_FLAG_CHECKED = Change("0.5.0rc1", "0.5.0rc1 server_args.py:435-453 also checks --decode-attention-backend trtllm_mla (0.5.0rc0 :436 only --attention-backend)")
# Steps/topk/draft tokens left unset: 0.4.4.post4-0.4.5.post3 read a missing ServerArgs field; 0.4.6 reads
# <model_path>/config.json as a file, so a hub id fails; 0.4.6.post2 asks get_config (hub ids work).
AUTO_SPEC_PARAMS_LOCAL_CONFIG = Change("0.4.6", "0.4.6 server_args.py:1357-1365 os.path.join(model_path, 'config.json') (0.4.5.post3 :1367 self.decrypted_config_file)")
