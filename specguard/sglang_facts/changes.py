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
#   <= 0.5.3.post1 no V2: the EAGLE family always turns the overlap scheduler off
#   0.5.3.post2-0.5.4  V2 behind --enable-beta-spec (SPEC_V2_BETA_FLAG)
#   0.5.4.post1-0.5.10 V2 behind SGLANG_ENABLE_SPEC_V2 (default off): EAGLE and EAGLE3, STANDALONE from 0.5.8
#   0.5.11-0.5.12 default on; an explicit topk > 1 falls back to V1 (overlap off)
#   0.5.13        V2 always; the variable only chooses overlap
#   >= 0.5.14     the variable is gone (a warning until 0.5.20, no trace from 0.5.21)
SPEC_V2_ENV_ADDED = Change("0.5.4.post1", "0.5.4.post1 environ.py:234 EnvBool(False); server_args.py:1434-1447, no topk check (0.5.5 environ.py:258, server_args.py:1539-1552 the same; 0.5.4 has --enable-beta-spec instead)")
SPEC_V2_TOPK_CHECKED = Change("0.5.7", "0.5.7 server_args.py:2000-2014 raises on an explicit topk > 1 (to 0.5.10)")
SPEC_V2_STANDALONE = Change("0.5.8", "0.5.8 server_args.py:2141 adds STANDALONE to the spec-v2 branch (0.5.7 :2001 has EAGLE, EAGLE3)")
SPEC_V2_DEFAULT_ON = Change("0.5.11", "0.5.11 environ.py:459 EnvBool(True); server_args.py:3460-3473 explicit topk > 1 falls back to V1")
SPEC_V2_ALWAYS = Change("0.5.13", "0.5.13 arg_groups/speculative_hook.py:288-293: V2 always, the env var only picks overlap; speculative/ has no eagle_worker.py (0.5.12 has it)")
# FROZEN_KV_MTP (new in 0.5.12) turned the overlap scheduler off ("spec v2 is not supported yet") until 0.5.14.
FROZEN_KV_MTP_OVERLAP = Change("0.5.14", "0.5.14 arg_groups/speculative_hook.py:245-257 _handle_frozen_kv_mtp no longer sets disable_overlap_schedule (0.5.13 :259-262, 0.5.12 server_args.py:3716-3726 did)")
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


# While SpecV2 is opt-in, SGLANG_ENABLE_SPEC_V2=1 sets disable_overlap_schedule back to False for these
# algorithms, over a typed --disable-overlap-schedule (newest first; EAGLE alone from SPEC_V2_ENV_ADDED: 0.5.4.post1
# server_args.py:1434-1441, 0.5.6.post2 :1745-1751). 0.5.11 keeps the flag (server_args.py:3460-3473).
SPEC_V2_ENV_FORCES_OVERLAP_EAGLE3 = Change("0.5.7", "0.5.7 server_args.py:2000-2006 names EAGLE and EAGLE3 (0.5.6.post2 :1745-1751 EAGLE only)")
SPEC_V2_ENV_FORCES_OVERLAP: tuple[tuple[Change, frozenset[str]], ...] = (
    (SPEC_V2_STANDALONE, frozenset({"EAGLE", "EAGLE3", "STANDALONE"})),  # 0.5.8 :2140-2146; 0.5.10.post1 :2999-3005
    (SPEC_V2_ENV_FORCES_OVERLAP_EAGLE3, frozenset({"EAGLE", "EAGLE3"})),
)
# DFLASH (new in 0.5.11) turned the overlap scheduler off ("spec v2 is not supported yet") until 0.5.14.
DFLASH_KEEPS_OVERLAP = Change("0.5.14", "0.5.14 arg_groups/speculative_hook.py:131-243 _handle_dflash no longer sets disable_overlap_schedule (0.5.13 :240-243, 0.5.11 server_args.py:3436-3439 did)")
# DSPARK (new in 0.5.16) sets its own steps, topk and draft tokens (gamma + 1) in _handle_dspark; it turned
# mixed chunked prefill off itself until MIXED_CHUNK_PER_ALGORITHM.
DSPARK_PARAMS = Change("0.5.16", "0.5.16 arg_groups/speculative_hook.py:323-381 (0.5.23 :757-839); 0.5.15 has no DSPARK")
NGRAM_KEEPS_OVERLAP = Change("0.5.14", "0.5.13 arg_groups/speculative_hook.py:427-430 turns overlap off for NGRAM; 0.5.14 only mixed chunk (P37)")
MIXED_CHUNK_PER_ALGORITHM = Change("0.5.19", "0.5.19 arg_groups/speculative_hook.py:675-684 SpeculativeAlgorithm.supports_mixed_chunk()")
# Before it the EAGLE family's handler and these turned mixed chunk off themselves (DFLASH: 0.5.14
# speculative_hook.py:238-243; DSPARK: 0.5.16 :400-404, 0.5.18 :421-424).
MIXED_CHUNK_OFF_BEFORE_PER_ALGORITHM = frozenset({"DFLASH", "DSPARK"})
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

# An unset --max-running-requests under EAGLE: none before 0.4.3.post4, 32 until 0.4.4.post2, 48 after.
SPEC_MAX_RUNNING_REQUESTS_SET = Change("0.4.3.post4", "0.4.3.post4 server_args.py:278-280 sets 32 for EAGLE (0.4.3.post2 sets none)")
SPEC_MAX_RUNNING_REQUESTS_48 = Change("0.4.4.post4", "0.4.4.post4 server_args.py:329-334 sets 48 (0.4.4.post2 :309-310 32); 0.5.23 speculative_hook.py:445")

# ---- adaptive speculation (--speculative-adaptive) -------------------------------------------------
# Adaptive picks its chain before the automatic parameters from 0.5.14; in 0.5.11-0.5.13 the automatic
# parameters ran first, so a tree-default target (Llama, Grok-1) switched adaptive off with topk 4.
ADAPTIVE_PARAMS_BEFORE_AUTO = Change("0.5.14", "0.5.14 arg_groups/speculative_hook.py:121-124 _init_adaptive_speculative_params before the auto-choice (:318-329); 0.5.13 :111-131 and 0.5.11 server_args.py:3518-3527, 3619-3630 chose first")
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
DRAFT_REVISION_FLAG = Change("0.5.2", "0.5.2 server_args.py:262, 1548 --speculative-draft-model-revision; managers/tp_worker.py:85-89 (absent from 0.5.2rc2)")
# ---- attention backends ----------------------------------------------------------------------------
# topk > 1 with page_size > 1: the backends allowed (catalogue P21, P67).
PAGE_TREE_FLASHINFER_ONLY = Change("0.5.2rc0", "0.5.2rc0 server_args.py:752-759 raises unless flashinfer (none in 0.5.1.post3)")
PAGE_TREE_FA3 = Change("0.5.6", "0.5.6 server_args.py:1752-1759 allows flashinfer and fa3")
PAGE_TREE_TRITON = Change("0.5.13", "0.5.13 arg_groups/speculative_hook.py:373-383 allows flashinfer, fa3 and triton")
NGRAM_PAGE_TREE_FLASHINFER_ONLY = Change("0.5.3", "0.5.3 server_args.py:1148-1153 NGRAM breadth > 1 with page_size > 1 only on flashinfer")
DRAFT_GRAPH_PADDED_REPLAY_FIX = Change("0.5.3", "PR 10892; 0.5.3 speculative/eagle_draft_cuda_graph_runner.py:302-305 (absent in 0.5.2)")
# A DFLASH draft asking for trtllm_mha: refused (generic fallback) until 0.5.17; kept from 0.5.17 for an
# all-sliding-window or explicitly causal draft, else the generic fallback, which is fa4 on SM100 from 0.5.23.
DFLASH_DRAFT_TRTLLM_MHA = Change("0.5.17", "0.5.17 arg_groups/speculative_hook.py:443-450 adds trtllm_mha to the draft backends, :464-495 keeps it for an all-sliding or causal draft (0.5.16 :441, :455-462 always fell back)")
DFLASH_DRAFT_TRTLLM_MHA_FA4_ON_SM100 = Change("0.5.23", "0.5.23 arg_groups/speculative_hook.py:966-980 falls back to fa4 on SM100 (0.5.22 :870-902 the generic fallback only)")
FA4_PAGE_ONE_FOR_DIFFUSION_GEMMA = Change("0.5.22", "0.5.22 arg_groups/overrides.py:1237-1262 _fa4_page_constraint returns page_size 1 for DiffusionGemmaForBlockDiffusion (0.5.21 :1218-1235 forces 128 for every non-MLA target)")
DEFAULT_BACKEND_PICKED_BEFORE_SPEC = Change("0.5.5", "0.5.5 server_args.py:1135-1178 (0.5.1 model_executor/model_runner.py:414-449 picked it after)")
TRTLLM_DEFAULT_ON_SM100 = Change("0.5.7", "0.5.7 server_args.py:1517 trtllm_mha the default attention backend on SM100")
# 0.5.6.post1-0.5.6.post2 picked trtllm_mha on any Blackwell (SM100 and SM120, is_blackwell) whenever the typed topk
# was unset or 1, speculation or not (0.5.6.post1 server_args.py:1344-1352; 0.5.6 had no such branch).
TRTLLM_DEFAULT_ON_BLACKWELL = Change("0.5.6.post1", "0.5.6.post1 server_args.py:1344-1352 is_blackwell() and is_no_spec_infer_or_topk_one")
# From 0.5.17 the SM100 default gives fa4 instead of trtllm_mha to a target whose K and V rows differ in width.
FA4_DEFAULT_FOR_ASYMMETRIC_KV = Change("0.5.17", "0.5.17 server_args.py:5689-5698, configs/model_config.py:738-746 has_asymmetric_kv")
# DFLASH declares its topk after the default backend is picked, so before 0.5.23 it reads None there and SM100
# falls through to flashinfer (0.5.22 arg_groups/model_override_base.py:303-315); 0.5.23 counts it as topk 1.
DFLASH_TOPK_ONE_FOR_DEFAULT_BACKEND = Change("0.5.23", "0.5.23 arg_groups/model_override_base.py:268-274 _forces_eagle_topk_one, :312-325")
# trtllm_mha page sizes: (16, 32, 64) for the target phases before 0.5.17 (0.5.16 arg_groups/overrides.py:1732-1741);
# 0.5.17 adds 128 and counts a trtllm_mha draft backend too (0.5.17 overrides.py:2081-2094).
TRTLLM_MHA_PAGE_128_AND_DRAFT = Change("0.5.17", "0.5.17 arg_groups/overrides.py:2081-2094 (0.5.16 :1732-1741)")
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
SPEC_V2_BETA_FLAG = Change("0.5.3.post2", "0.5.3.post2 server_args.py:327,1179-1189,2230 --enable-beta-spec runs EAGLE on the V2 worker (0.5.3.post1 has neither; 0.5.4 server_args.py:1296-1302,2411)")
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
DSV4_ONLINE_C128_MTP_EAGLE = Change("0.5.14", "0.5.14 model_executor/pool_configurator.py:509-527 lets is_eagle() through with SGLANG_EXPERIMENTAL_ONLINE_C128_MTP=1 (0.5.12-0.5.13 :359-363/:366-370 assert no speculation)")
DSPARK_DSV4_DRAFT_ATTN_TP_NPU_EXEMPT = Change("0.5.23", "0.5.23 speculative/dspark_components/dspark_worker_v2.py:212-222 skips the DeepSeek-V4 draft attn_tp check on NPU (0.5.22 :179-188 does not)")
DSV41_DSPARK_PD_NIXL_AND_PREFILL_CP = Change("0.5.22", "0.5.22 arg_groups/deepseek_v4_hook.py:286-313 accepts NIXL, attention DP and interleaved prefill CP for DeepSeek-V4.1 DSpark PD (0.5.21 :234-252 mooncake, DP=1, CP=1)")
DSPARK_PD_PREFILL_NO_DECODE_GRAPHS = Change("0.5.17", "0.5.17 speculative/dspark_components/dspark_worker_v2.py:95-98 _decode_graph_allowed is false on a PD prefill server (0.5.16 :162-167 read --disable-cuda-graph only)")
UNIFIED_MEMORY_DSPARK = Change("0.5.18", "0.5.18 server_args.py:8312-8317 (DSPARK only; 0.5.15-0.5.17 refused every algorithm)")
DEEPEP_V2_BUDGET_BY_ATTN_DP_SIZE = Change("0.5.22", "0.5.22 arg_groups/moe_hook.py:580-596 divides the request pool by view.attn_dp_size (before: --dp-size under --enable-dp-attention)")
MEGA_MOE_BUDGET_POOL_CAP = Change("0.5.23", "0.5.23 arg_groups/mega_moe_hook.py:94-106 caps the decode graph bucket by the request pool per attention-DP rank (0.5.21-0.5.22 :92-98 take the max bs)")
SPEC_TP_SYNC_DSPARK_DRAFT_SITE = Change("0.5.22", "0.5.22 speculative/spec_tp_sync.py:66-82 (site 17 dspark-draft; 2-6 kept as retired aliases)")
UNIFIED_MEMORY_EAGLE_DFLASH = Change("0.5.22", "0.5.22 arg_groups/kv_cache_hook.py:585-597")
# ---- hybrid (mamba / linear attention) targets -----------------------------------------------------
MAMBA_NO_BUFFER_ROCM_FALLBACK = Change("0.5.11", "PR 22908; 0.5.11 server_args.py:2441-2456 (0.5.10 raises on every platform)")
NGRAM_VERIFY_TRACKS_MAMBA = Change("0.5.14", "0.5.14 speculative/ngram_worker.py:334")
MAMBA_AUTO_EXTRA_BUFFER = Change("0.5.14", "0.5.14 server_args.py:4338-4351 'auto' mamba strategy resolves to extra_buffer (triton linear attention)")
LIGHTNING_TREE_DRAFT_REFUSED = Change("0.5.13", "0.5.13 layers/attention/linear/lightning_backend.py:44-50 raises NotImplementedError for topk > 1 (0.5.12.post1 :306-330 verified the tree as a chain)")
# ---- features --------------------------------------------------------------------------------------
HICACHE_DRAFT_KV_BACKED = Change("0.5.11", "sglang#21125; 0.5.11 managers/scheduler.py:441,990-1030, managers/cache_controller.py:843-852")
HYBRID_SWA_HICACHE_UNIFIED = Change(
    "0.5.13", "0.5.13 mem_cache/registry.py:101-104 HiCache on a hybrid SWA/SSM model builds UnifiedRadixCache; 0.5.12 managers/scheduler.py:898-930 (0.5.12.post1 the same) only with SGLANG_ENABLE_UNIFIED_RADIX_TREE=1, else HiRadixCache, which refuses any pool but MHA, MLA and NSA (hiradix_cache.py:97-100)",
)
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
# The DFlash selector draft classes (DFlash2DraftModel and its aliases), each from the release that registers it;
# every one builds its candidate selector from dflash_config.selector_rank and refuses a zero rank.
SELECTOR_DRAFT_CLASSES: dict[str, Change] = {
    "DFlash2DraftModel": Change(
        "0.5.19",
        "0.5.19 models/dflash.py:1066-1075, EntryClass :1146-1151 (0.5.18 :632 lacks it)",
    ),
    "DFlash2BeamDraftModel": Change(
        "0.5.23",
        "0.5.23 models/dflash.py:1313-1314, EntryClass :1317 (0.5.22 :1250-1255 lacks it)",
    ),
    "MiniMaxDFlash2DraftModel": Change(
        "0.5.23",
        "0.5.23 models/dflash.py:1305-1306, EntryClass :1317 (0.5.22 :1250-1255 lacks it)",
    ),
}


def selector_draft_class(architecture: str | None, version: Version) -> bool:
    """Whether ``architecture`` is a DFlash selector draft class that release ``version`` registers."""
    registered = SELECTOR_DRAFT_CLASSES.get(architecture or "")
    return registered is not None and registered.present_in(version)


# From 0.5.15 the STANDALONE worker (V2, the only one since 0.5.14) compares the two vocab_size values
# once both models are loaded; 0.5.14 and earlier never compare them (DM003 says what that costs).
STANDALONE_VOCAB_CHECKED = Change(
    "0.5.15",
    "0.5.15 speculative/standalone_worker_v2.py:199-202, 215-231 _validate_vocab_compatibility (0.5.14 :153-200 has none)",
)
DRAFT_CONTEXT_GUARD = Change("0.5.1", "PR 9388 stops stretching a short draft's context")
# 0.5.17 dropped the draft workers' target context (spec_worker.match_target_context_length, 0.5.16
# eagle_worker_v2.py:1044-1048): an untyped --context-length let the draft derive its own; 0.5.18 passes it again.
DRAFT_OWN_CONTEXT = Change("0.5.17", "0.5.17 speculative/eagle_worker_v2.py (no context_length), configs/model_config.py:553-557 falls back to server_args.context_length")
DRAFT_TARGET_CONTEXT_AGAIN = Change("0.5.18", "0.5.18 speculative/eagle_worker_v2.py:179, standalone_worker_v2.py:86, frozen_kv_mtp_worker_v2.py:149, multi_layer_eagle_worker_v2.py:167 pass the target's context_len")
EAGLE3_AUX_COUNT_FROM_CONFIG = Change("0.5.12", "0.5.12 models/llama_eagle3.py:153-161 num_aux_hidden_states (0.5.11 :139 always hidden_size_in * 3)")
# The EAGLE3 head of MLA targets (Kimi-K2.5): one decoder layer only, in every release that has it (DM041, DM341).
EAGLE3_MLA_HEAD = Change("0.5.12", "0.5.12 models/kimi_k25_eagle3.py:266 Eagle3DeepseekV2ForCausalLM; :206-207 raises on num_hidden_layers != 1 (0.5.23 :243-244)")
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
# - MiniMax-M3 VL (``minimax_m3_vl.py``, MiniMaxM3SparseForConditionalGeneration): registered in 0.5.16 without
#   either hook (0.5.16-0.5.17), both from 0.5.18 (:203-231, marking the capture layers itself).
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
    "Glm4ForCausalLM": Change("0.5.4.post3", "0.5.4.post3 models/glm4.py:617 (absent from its first wheel, 0.4.8, to 0.5.4.post1)"),
    "Glm4vForConditionalGeneration": Change("0.5.2", "0.5.2 models/glm4v.py:463 subclasses Qwen2_5_VLForConditionalGeneration (get_embed_and_head qwen2_5_vl.py:654; neither in 0.5.0rc1-0.5.2rc2); its own from 0.5.4.post3 glm4v.py:769"),
    "Glm4vMoeForConditionalGeneration": Change("0.5.2", "0.5.2 models/glm4v_moe.py subclasses Glm4vForConditionalGeneration, inherited"),
    "LlavaLlamaForCausalLM": Change("0.5.11", "0.5.11 models/llava.py:456-460 LlavaBaseForCausalLM.get_embed_and_head (absent in 0.5.10.post1)"),
    "LlavaQwenForCausalLM": Change("0.5.11", "0.5.11 models/llava.py:456-460, inherited from LlavaBaseForCausalLM"),
    "LlavaMistralForCausalLM": Change("0.5.11", "0.5.11 models/llava.py:456-460, inherited from LlavaBaseForCausalLM"),
    "LlavaForConditionalGeneration": Change("0.5.11", "0.5.11 models/llava.py:456-460, inherited from LlavaBaseForCausalLM"),
    "NemotronH_Nano_VL_V2": Change("0.5.20", "0.5.20 models/nano_nemotron_vl.py:188-189 (absent from its first wheel, 0.5.6, to 0.5.19)"),
    "MiniMaxM3SparseForConditionalGeneration": Change("0.5.18", "0.5.18 models/minimax_m3_vl.py:203-205, :207-231 (neither in 0.5.16 :56-372 nor 0.5.17 :57-390)"),
}
# Target classes with no ``get_embed_and_head()`` in any release read, up to NEWEST_KNOWN_SGLANG: the
# EAGLE worker's call on the target (0.5.23 speculative/pp_draft_embedding.py:95) fails in every release.
# - Qwen2-MoE (``qwen2_moe.py``, ``Qwen2MoeForCausalLM(nn.Module)``): none from 0.4.0 to 0.5.23, although
#   it has set_eagle3_layers_to_capture from 0.5.2rc0 (:713).
NO_EAGLE_HOOKS: dict[str, str] = {
    "Qwen2MoeForCausalLM": "models/qwen2_moe.py has no get_embed_and_head in 0.4.0-0.5.23 (class :1218 in 0.5.23)",
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
# - MiniMaxM3SparseForCausalLM (``minimax_m3.py``, from 0.5.16) has both hooks from its first wheel, but its
#   capture marks a layer only from 0.5.18 (INHERITED_NO_OP_CAPTURE).
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
    "MiniMaxM3SparseForCausalLM": Change("0.5.18", "0.5.18 models/minimax_m3.py:1631-1635 marks the capture layers (0.5.16 :1491-1504, 0.5.17 :1511-1524 do not)"),
}
# From this release the class has a set_eagle3_layers_to_capture that marks no layer (up to its
# EAGLE3_CAPTURE release): Qwen3.5's wrappers inherit Qwen3-VL's; MiniMax-M3's own (0.5.16 minimax_m3.py:1491-1504)
# sets only ``model.layers_to_capture`` while MiniMaxM3Model.forward collects aux states from layers
# marked ``_is_layer_to_capture`` (0.5.16 :1398, 0.5.17 :1401), so forward's
# ``hidden_states, aux_hidden_states = hidden_states`` (0.5.17 :1545) unpacks a plain tensor.
INHERITED_NO_OP_CAPTURE: dict[str, Change] = {
    "Qwen3_5ForConditionalGeneration": Change("0.5.11", "0.5.11 models/qwen3_vl.py:1398 set_eagle3_layers_to_capture, inherited"),
    "Qwen3_5MoeForConditionalGeneration": Change("0.5.11", "0.5.11 models/qwen3_vl.py:1398 set_eagle3_layers_to_capture, inherited"),
    "MiniMaxM3SparseForCausalLM": Change("0.5.16", "0.5.16 models/minimax_m3.py:1491-1504, its first wheel (EntryClass :1690)"),
}
# Target classes that, from the release given up to NEWEST_KNOWN_SGLANG, have no working
# ``set_eagle3_layers_to_capture()``, which the EAGLE3 target runner calls (AttributeError; from 0.5.23 a
# ValueError, model_runner_components/attention_backend_setup.py:55-60): EAGLE3 cannot run on them.
# Read with ``grep -c "def set_eagle3_layers_to_capture"`` in every wheel from the class's first:
# - Glm4ForCausalLM (``glm4.py``, from 0.4.8): none in any release, and Glm4Model keeps no aux states.
# - Glm4vForConditionalGeneration (``glm4v.py``, from 0.5.0rc1): 0.5.2-0.5.4.post1 inherit Qwen2.5-VL's
#   (qwen2_5_vl.py:657), whose forward then unpacks aux states (:594-596) that its Glm4Model language
#   model never returns (glm4.py has no layers_to_capture); from 0.5.4.post3 an ``nn.Module`` without it.
# - Glm4vMoeForConditionalGeneration (subclass of Glm4v): without it from 0.5.4.post3 (0.5.2-0.5.4.post1
#   inherit Qwen2.5-VL's over a Glm4MoeModel, not judged).
# - LLaVA (``llava.py``, LlavaBaseForCausalLM and its four registered subclasses): none in any release.
# - NemotronH_Nano_VL_V2 (``nano_nemotron_vl.py``, from 0.5.6): none in any release.
NO_EAGLE3_CAPTURE: dict[str, Change] = {
    "Glm4ForCausalLM": Change("0.4.8", "models/glm4.py: no set_eagle3_layers_to_capture from 0.4.8 to 0.5.23"),
    "Glm4vForConditionalGeneration": Change("0.5.0rc1", "models/glm4v.py: none of its own 0.5.0rc1-0.5.23; 0.5.2-0.5.4.post1 inherit qwen2_5_vl.py:657, unusable over Glm4Model"),
    "Glm4vMoeForConditionalGeneration": Change("0.5.4.post3", "0.5.4.post3 models/glm4v.py:546 Glm4vForConditionalGeneration(nn.Module), no set_eagle3_layers_to_capture to 0.5.23"),
    "LlavaLlamaForCausalLM": Change("0.4.0", "models/llava.py: no set_eagle3_layers_to_capture from 0.4.0 to 0.5.23"),
    "LlavaQwenForCausalLM": Change("0.4.0", "models/llava.py: no set_eagle3_layers_to_capture from 0.4.0 to 0.5.23"),
    "LlavaMistralForCausalLM": Change("0.4.0", "models/llava.py: no set_eagle3_layers_to_capture from 0.4.0 to 0.5.23"),
    "LlavaForConditionalGeneration": Change("0.4.6.post4", "models/llava.py:604 (first read in 0.4.6.post4): no set_eagle3_layers_to_capture to 0.5.23"),
    "NemotronH_Nano_VL_V2": Change("0.5.6", "models/nano_nemotron_vl.py: no set_eagle3_layers_to_capture from 0.5.6 to 0.5.23"),
}
# The Bailing (Ling) target classes that ``ModelConfig._config_draft_model`` rewrites to
# BailingMoeForCausalLMNextN when one is loaded as a draft, from the release given; the NextN draft's
# weight loading then requires ``num_nextn_predict_layers == 1`` (bailing_moe.py, bailing_moe_linear.py,
# bailing_moe_v3.py ``resolve_nextn_layer_id``).
BAILING_NEXTN_DRAFT: dict[str, Change] = {
    "BailingMoeForCausalLM": Change("0.5.3rc0", "0.5.3rc0 configs/model_config.py:160-164 (no Bailing NextN in 0.5.2)"),
    "BailingMoeV2ForCausalLM": Change("0.5.3rc0", "0.5.3rc0 configs/model_config.py:160-164 (no Bailing NextN in 0.5.2)"),
    "BailingMoeV2_5ForCausalLM": Change("0.5.9", "0.5.9 configs/model_config.py:308-313 (models/bailing_moe_linear.py is new in 0.5.9)"),
    "BailingMoeV3ForCausalLM": Change("0.5.19", "0.5.19 configs/model_config.py:730-736 (absent from 0.5.18's list)"),
}
# The attention backends SGLang accepts for a Gemma 4 target (Gemma4ForConditionalGeneration,
# Gemma4ForCausalLM, Gemma4UnifiedForConditionalGeneration), prefill and decode alike, newest first;
# an assert at argument time refuses any other. No such check before 0.5.13.
GEMMA4_ATTENTION_BACKENDS: tuple[tuple[Change, tuple[str, ...]], ...] = (
    (Change("0.5.22", "0.5.22 arg_groups/model_hook.py:640-654 adds fa4 (0.5.23 :646-660)"),
     ("trtllm_mha", "triton", "fa4", "ascend", "intel_xpu", "intel_amx", "aiter")),
    (Change("0.5.20", "0.5.20 arg_groups/model_hook.py:546-559 adds aiter (0.5.19 :482-497 without it)"),
     ("trtllm_mha", "triton", "ascend", "intel_xpu", "intel_amx", "aiter")),
    (Change("0.5.18", "0.5.18 server_args.py:5672-5685 adds intel_amx"),
     ("trtllm_mha", "triton", "ascend", "intel_xpu", "intel_amx")),
    (Change("0.5.14", "0.5.14 server_args.py:4078-4085 adds ascend"),
     ("trtllm_mha", "triton", "ascend", "intel_xpu")),
    (Change("0.5.13", "0.5.13 server_args.py:2394-2402 (0.5.11-0.5.12 have no Gemma 4 backend check)"),
     ("trtllm_mha", "triton", "intel_xpu")),
)
# Draft head classes SGLang registers only from a given release (EntryClass in that wheel, none before).
DRAFT_HEAD_CLASS: dict[str, Change] = {
    "Eagle3DeepseekV2ForCausalLM": Change("0.5.12", "0.5.12 models/kimi_k25_eagle3.py:472 (no such file in 0.5.11)"),
    "MistralForCausalLMEagle": Change("0.5.11", "0.5.11 models/mistral_eagle.py:208 (none in 0.5.10)"),
    "MuseGlimmerAssistantModel": Change("0.5.18", "0.5.18 models/dflash.py:628; 0.5.17 EntryClass :589 lacks it"),
}
# A Quark checkpoint's packed_modules_mapping gains gate_up_proj, so excluded gate_proj/up_proj keep a fused MLP in
# BF16 (QT462); before, only modules built unfused can match an exclude entry.
QUARK_PACKS_GATE_UP = Change("0.5.11", "0.5.11 model_loader/loader.py:201-207 (0.5.10.post1 :192-220 has no quark branch)")
# ---- slime / RL ------------------------------------------------------------------------------------
WEIGHTS_CPU_BACKUP = Change("0.5.3", "0.5.3 model_executor/model_runner.py:785-787 enable_weights_cpu_backup")
DRAFT_WEIGHTS_CPU_BACKUP = Change("0.5.5.post3", "0.5.5.post3 model_executor/model_runner.py:760-761 enable_draft_weights_cpu_backup")
# ---- trtllm attention backends refusing speculation at argument time (0.4.10.post2-0.5.0rc2) ------
# Read in server_args.py (__post_init__); 0.5.1 drops both raises (0.5.1 server_args.py:476-498).
TRTLLM_MHA_SPEC_REFUSED = Change("0.5.0rc0", "0.5.0rc0 server_args.py:452-471 trtllm_mha on any of the three backend flags raises with speculation (no trtllm_mha in 0.4.10.post2)")
TRTLLM_MLA_DECODE_FLAG_CHECKED = Change("0.5.0rc1", "0.5.0rc1 server_args.py:435-453 also checks --decode-attention-backend trtllm_mla (0.5.0rc0 :436 only --attention-backend)")
# ---- the EAGLE draft worker's own attention backends (AB330, AB331) ------------------------------
# The EAGLE worker builds its multi-step draft (and later draft-extend) backend from a list of backend
# names and raises "EAGLE is not supported in attention backend X" for any other; the releases each
# backend joined that list, and when it became a choice at all.
EAGLE_DRAFT_BACKEND_CHECKED = Change("0.4.3", "0.4.3 speculative/eagle_worker.py:68-91 flashinfer or triton, else raise (0.4.2.post4 :72 always FlashInfer)")
FLASHINFER_MLA_BACKEND_NAME = Change("0.4.3.post4", "0.4.3.post4 model_executor/model_runner.py:214-218 --enable-flashinfer-mla sets flashinfer_mla on an MLA target (0.4.3.post2 :114-118 flashinfer)")
FA3_BACKEND_CHOICE = Change("0.4.4.post2", "0.4.4.post2 server_args.py:778 --attention-backend fa3 (0.4.4.post1: flashinfer, triton, torch_native)")
ENABLE_FLASHMLA_READ = Change("0.4.4.post2", "0.4.4.post2 model_executor/model_runner.py:229-231 --enable-flashmla sets flashmla on an MLA target")
MLA_TYPED_BACKEND_KEPT = Change("0.4.4.post4", "0.4.4.post4 model_executor/model_runner.py:224-240 sets a backend only when none is given (0.4.4.post2 :218-234 replaced an MLA target's with flashinfer_mla, flashmla or triton)")
FA3_EAGLE_DRAFT = Change("0.4.4.post4", "0.4.4.post4 speculative/eagle_worker.py:189 fa3 branch (0.4.4.post2 :147-188 flashinfer, triton, flashinfer_mla)")
FLASHMLA_BACKEND_CHOICE = Change("0.4.5.post2", "0.4.5.post2 server_args.py:831 --attention-backend flashmla")
MLA_SWITCHES_REFUSED = Change("0.4.5.post2", "0.4.5.post2 server_args.py:850-857, 1339-1346 --enable-flashinfer-mla and --enable-flashmla raise as DeprecatedAction (0.4.5.post1 model_executor/model_runner.py:232-239 still read them)")
AITER_BACKEND_CHOICE = Change("0.4.6.post5", "0.4.6.post5 server_args.py:959 --attention-backend aiter; model_executor/model_runner.py:337-338 the HIP default for a non-MLA target")
FLASHMLA_EAGLE_DRAFT = Change("0.4.6.post5", "0.4.6.post5 speculative/eagle_worker.py:203-214 flashmla branch (0.4.6.post4 :152-205 none)")
AITER_EAGLE_DRAFT = Change("0.5.0rc1", "0.5.0rc1 speculative/eagle_worker.py:229-244 aiter branch (0.5.0rc0 :176-257 none)")
EAGLE_DRAFT_EXTEND_MAP = Change("0.5.2rc2", "0.5.2rc2 speculative/eagle_worker.py:227-241 a draft-extend map without flashmla (0.5.2rc1 :268-277 flashmla, no draft-extend backend)")
FLASHMLA_DRAFT_EXTEND = Change("0.5.3rc2", "0.5.3rc2 speculative/eagle_worker.py:247 flashmla in the draft-extend map (0.5.3rc0 :236-246 without)")
FA4_BACKEND_CHOICE = Change("0.5.3rc2", "0.5.3rc2 server_args.py:98 fa4 an --attention-backend choice (none in 0.5.3rc0)")
FA4_PREFILL_ONLY = Change("0.5.4", "0.5.4 server_args.py:1143-1146 'FA4 backend is only supported for prefill' for --attention-backend/--decode-attention-backend fa4 (none in 0.5.3.post3)")
FA4_DECODE_ALLOWED = Change("0.5.8", "0.5.8 server_args.py:1779-1783 only the page size for a prefill fa4 (0.5.7 :1647-1650 still raises)")
FA4_EAGLE_DRAFT = Change("0.5.10", "0.5.10 speculative/draft_utils.py:58, 83 fa4 in the decode and draft-extend maps (0.5.10rc0 :43-91 without)")
# The MLA multi-step draft backends run chains only: FlashInferMLAMultiStepDraftBackend raises for topk > 1 from
# 0.4.4 (flashinfer_mla_backend.py:663-666; 0.5.23 :1196-1198), FlashMLAMultiStepDraftBackend from 0.4.6.post5
# (flashmla_backend.py:469-472; 0.5.23 :608-611). 0.4.4-0.4.4.post2 reach the first through the flashinfer_mla
# backend name (--enable-flashinfer-mla on an MLA target, model_runner.py:224-228 in 0.4.4.post2).
FLASHINFER_MLA_DRAFT_CHAIN_ONLY = Change("0.4.4", "0.4.4 layers/attention/flashinfer_mla_backend.py:663-666; speculative/eagle_worker.py:126 (the flashinfer_mla branch)")
FLASHINFER_ON_MLA_DRAFT = Change("0.4.4.post4", "0.4.4.post4 speculative/eagle_worker.py:152-172 flashinfer on an MLA target builds FlashInferMLAMultiStepDraftBackend (0.4.4.post2 :147-159 FlashInferMultiStepDraftBackend)")
# 0.4.4.post4-0.4.8.post1 set topk to 1 when the page size is above 1, with a log line only.
PAGE_SIZE_RESETS_TOPK = Change("0.4.4.post4", "0.4.4.post4 server_args.py:353-355 (0.4.8.post1 :488-491; none in 0.4.4.post2)")
PAGE_SIZE_KEEPS_TOPK = Change("0.4.9", "0.4.9 server_args.py:496-510 no longer resets topk for page_size > 1")
# Steps/topk/draft tokens left unset: 0.4.4.post4-0.4.5.post3 read a missing ServerArgs field; 0.4.6 reads
# <model_path>/config.json as a file, so a hub id fails; 0.4.6.post2 asks get_config (hub ids work).
AUTO_SPEC_PARAMS_LOCAL_CONFIG = Change("0.4.6", "0.4.6 server_args.py:1357-1365 os.path.join(model_path, 'config.json') (0.4.5.post3 :1367 self.decrypted_config_file)")

# ---- simulated acceptance (a benchmarking switch that fakes the verify) -----------------------------
SIMULATE_ACC_LEN_RENAMED = Change(
    "0.5.3rc2", "0.5.3rc2 environ.py:127 SGLANG_SIMULATE_ACC_LEN EnvFloat(-1), speculative/eagle_info.py:334 `> 0.0` "
    "(0.5.3rc0 speculative/eagle_utils.py:45,503 reads SIMULATE_ACC_LEN, any non-empty value)",
)

# ---- memory (what --mem-fraction-static holds, and its default) ------------------------------------
# Before 0.5.14 the target sized its KV pool inside its own initialize, before the draft worker loaded: the static
# budget held the target's weights and KV only, and the EAGLE/STANDALONE draft's weights and KV pool (the target's
# token count) came out of the memory left outside it. DFLASH's cell already held its draft layers (0.5.13
# pool_configurator.py:107-125).
DRAFT_IN_STATIC_BUDGET = Change(
    "0.5.14", "0.5.14 managers/scheduler.py:858-868 loads the draft before init_memory_pools; model_executor/"
    "pool_configurator.py:129-145 adds the EAGLE/STANDALONE draft layers to the cell; model_runner_kv_cache_mixin.py:"
    "102-118 'draft weights are now counted' (0.5.13 model_runner.py:784 and model_runner_kv_cache_mixin.py:941-978 "
    "size the pool in the target's initialize; the draft reuses its memory_pool_config)",
)
# The default --mem-fraction-static set a draft reserve aside (server_args.py _handle_gpu_memory_settings, added
# after the 10 GiB floor): 2 GiB for any algorithm but NGRAM and STANDALONE (6 GiB) up to 0.5.9, 4 GiB from 0.5.10rc0,
# none from 0.5.14.
SPEC_MEM_RESERVE_4_GIB = Change("0.5.10rc0", "0.5.10rc0 server_args.py:1295-1301 4 * 1024, STANDALONE 6 * 1024 (0.5.13 :1627-1633 the same; 0.5.9 :1051-1057 2 * 1024)")
SPEC_MEM_RESERVE_DROPPED = Change("0.5.14", "0.5.14 server_args.py:3276-3316 _handle_gpu_memory_settings reserves nothing for the draft")

# ---- model hooks' backend defaults (reported by RS001 through the resolution) -----------------------
# LongCat-Flash FP8 (fp8/modelopt_fp8, scale_fmt not ue8m0) on SM100: --fp8-gemm-backend auto -> flashinfer_trtllm.
LONGCAT_FP8_GEMM_TRTLLM_ON_SM100 = Change(
    "0.5.16", "0.5.16 arg_groups/overrides.py:1400-1410 _deepseek_moe_quant_resolution (0.5.23 :832-842; absent from 0.5.15.post1)"
)
# Kimi hybrid targets (KimiLinear, Kimi K3) with speculation: --linear-attn-verify-backend nv_cutedsl, and DSPARK on
# SM100 a trtllm_mha draft backend (0.5.17 arg_groups/kimi_k3_hook.py:12-41 from server_args.py:5094-5104; 0.5.23
# kimi_k3_hook.py:18-55 from model_hook.py:239-249; 0.5.16 has no such hook).
KIMI_HYBRID_SPEC_BACKEND_DEFAULTS = Change("0.5.17", "0.5.17 arg_groups/kimi_k3_hook.py:12-41, server_args.py:5094-5104")
# The same targets get --enable-symm-mem turned back off while a CUDA-graph phase is on (0.5.17-0.5.18 only).
KIMI_HYBRID_SYMM_MEM_OFF = Change("0.5.17", "0.5.17 arg_groups/kimi_k3_hook.py:44-84 disable_kimi_k3_symm_mem, server_args.py:4231-4237")
KIMI_HYBRID_SYMM_MEM_OFF_DROPPED = Change(
    "0.5.19", "0.5.19 arg_groups/cuda_graph_hook.py:461-468 handle_cuda_graph_config no longer calls it (kimi_k3_hook.py has no such function)"
)
# GLM-5-Next with speculation on SM100: --linear-attn-verify-backend nv_cutedsl.
GLM5_NEXT_SPEC_VERIFY_DEFAULT = Change("0.5.22", "0.5.22 arg_groups/glm5_next_hook.py:18-37 from model_hook.py:251-256 (0.5.21 has no hook)")
