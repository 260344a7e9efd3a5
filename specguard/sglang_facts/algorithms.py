"""SGLang's speculative algorithms, one row each, and the named sets every rule reads.

A row holds what SGLang does with the algorithm (read in sglang 0.5.23 unless a source says
otherwise; ``PROPERTY_SOURCES`` gives where). The sets below are derived from the rows, so no
module spells its own ``("EAGLE", "EAGLE3", ...)``. ``ctx.algorithm`` is the name after SGLang's
aliasing (NEXTN is EAGLE), so the sets hold canonical names; ``*_SPELLINGS`` add the aliases for
code that reads the name as typed.

Rows for DSPARK, UNO and FROZEN_KV_MTP exist because SGLang accepts them (flags.py passes them
through); specguard's draft-model and worker rules model the six documented algorithms, so the
rule-facing sets are taken over ``documented`` rows, and the facts SGLang decides for every
algorithm (mixed chunk) over all rows.
"""

from __future__ import annotations

from specguard.records import Record


class Algorithm(Record, kw_only=False):
    name: str
    documented: bool  # one of the six the SGLang docs describe (the rest are passed through)
    alias_of: str | None = None
    draft_checkpoint: bool = False
    eagle_worker: bool = False
    eagle_head: bool = False
    mixed_chunk: bool = False
    mtp_draft: bool = False
    dp_attention_refused: bool = False
    dp_attention_conditional: bool = False
    watermark: bool = False
    block_verification: bool = False
    draft_window: bool = False
    lora: bool = False
    max_running_requests_reset: bool = False
    adaptive: bool = False
    aux_hidden_capture: bool = False
    dp_spec_prefill_coordination: bool = False
    unified_memory: bool = False
    deepseek_v4_target: bool = False
    spec_tp_sync: bool = False
    minimax_m3_nvfp4: bool = False
    replayssm_kda_fold: bool = False
    sm100_nvfp4_kv: bool = False


PROPERTY_SOURCES: dict[str, str] = {
    "alias_of": "arg_groups/speculative_hook.py:109 and speculative/spec_registry.py:183 _RESERVED_ALIASES "
    "(NEXTN is EAGLE)",
    "draft_checkpoint": "a separate draft model is loaded from --speculative-draft-model-path: "
    "speculative/eagle_worker_v2.py:177 EagleDraftWorker, standalone_worker_v2.py:37, dflash_worker_v2.py:378, "
    "arg_groups/speculative_hook.py:720-743 (DSPARK defaults it to the target or its draft dir); UNO rejects the flag "
    "(speculative_hook.py:454-458, 'reuses the target model'); NGRAM drafts from a token trie",
    "eagle_worker": "speculative/spec_info.py:361-368 create_worker: EAGLEWorkerV2 for EAGLE/EAGLE3, "
    "StandaloneWorkerV2(EAGLEWorkerV2) for STANDALONE (standalone_worker_v2.py:138): topk trees, the EAGLE "
    "draft CUDA-graph runner, its own draft KV pool",
    "eagle_head": "speculative/spec_info.py:102-108 is_eagle() and :180-183 carries_draft_hidden_states(): the "
    "draft is an EAGLE head over the target's hidden states, embeddings and LM head (get_embed_and_head); "
    "STANDALONE's vanilla draft ignores them. FROZEN_KV_MTP is in is_eagle() only until the scheduler "
    "supports it (its FIXME), so it is not counted here",
    "mixed_chunk": "speculative/spec_info.py:147-160 supports_mixed_chunk() (EAGLE, EAGLE3, DFLASH, DSPARK), read by "
    "arg_groups/speculative_hook.py:1108; UNO (:596-600), FROZEN_KV_MTP (:1002-1006) and NGRAM (:1307) turn it off",
    "mtp_draft": "with no --speculative-draft-model-path the draft worker loads the target checkpoint "
    "(configs/model_config.py:956 model_path or cfg.model_path), which is a draft only as the target's own MTP layers: "
    "EAGLE, spelled NEXTN too (arg_groups/speculative_hook.py:109)",
    "dp_attention_refused": "arg_groups/speculative_hook.py:1078-1084 (STANDALONE) and :1367-1371 (NGRAM) raise "
    "'does not support dp attention'",
    "dp_attention_conditional": "arg_groups/speculative_hook.py:303-317: DFLASH with attention DP needs CUDA or NPU, "
    "--enable-dp-lm-head, no context parallel and no DP spec/prefill coordination (refused before 0.5.23: "
    "changes.DFLASH_DP_ATTENTION_*)",
    "watermark": "arg_groups/validation_hook.py:90-94: --enable-watermark supports NGRAM, EAGLE and EAGLE3",
    "block_verification": "arg_groups/speculative_hook.py:175-180: --speculative-use-block-verification supports "
    "EAGLE / EAGLE3 / NEXTN / DFLASH / DSPARK",
    "draft_window": "arg_groups/speculative_hook.py:197-221: --speculative-draft-window-size is honoured by EAGLE "
    "(MTP/NEXTN draft decode), EAGLE3 and DFLASH, and warned about for the rest",
    "lora": "arg_groups/lora_hook.py:247-253: LoRA with NGRAM, and from 0.5.19 the algorithms of lora_spec_algorithms "
    "(EAGLE, EAGLE3, DFLASH, DSPARK; changes.LORA_WITH_*)",
    "max_running_requests_reset": "an unset --max-running-requests becomes 48 in the handlers of DFLASH "
    "(arg_groups/speculative_hook.py:438-442), DSPARK (:852-856), FROZEN_KV_MTP (:992-996), the EAGLE family and "
    "STANDALONE (:1086-1090) and NGRAM (:1294-1298); UNO's handler keeps it",
    "adaptive": "speculative/adaptive_spec_params.py:61-65 adaptive_unsupported_reason: only EAGLE/EAGLE3 "
    "(after the alias: NEXTN is EAGLE)",
    "aux_hidden_capture": "arg_groups/validation_hook.py:694: --enable-return-aux-hidden-states follows the aux-hidden-"
    "state convention of EAGLE3, DFLASH or DSPARK, the algorithm as written (FX193)",
    "dp_spec_prefill_coordination": "arg_groups/speculative_hook.py:244-251: SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION "
    "serves EAGLE and EAGLE3 (after the alias) and, from 0.5.22, DSPARK (changes.DSPARK_DP_SPEC_PREFILL_COORDINATION)",
    "unified_memory": "arg_groups/kv_cache_hook.py:585-597: --enable-unified-memory takes DSPARK, EAGLE, EAGLE3 and "
    "DFLASH from 0.5.22 (DSPARK only 0.5.18-0.5.21, none before: changes.UNIFIED_MEMORY_*)",
    "spec_tp_sync": "the workers that build SpecTpSync, which parses SGLANG_SPEC_TP_SYNC on every rank: "
    "speculative/dspark_components/dspark_worker_v2.py:179 and dflash_worker_v2.py:306 (read in 0.5.19; FX211)",
    "minimax_m3_nvfp4": "arg_groups/model_overrides/minimax_m3.py:56-58: a MiniMax-M3 target whose quantization "
    "resolves to minimax_m3_nvfp4 takes DSPARK or DFLASH only ('M3.1 NVFP4 only supports DSPARK or DFLASH "
    "speculation'; new in 0.5.23, QT305)",
    "replayssm_kda_fold": "mem_cache/kv_cache_configurator.py:1706-1717 _build_hybrid_req_pool: with "
    "--enable-linear-replayssm-spec, DSPARK and DFLASH commit through the KDA backend fold, so a non-KDA hybrid "
    "target is refused (from 0.5.17; HY364)",
    "sm100_nvfp4_kv": "arg_groups/kv_cache_hook.py:159-188 handle_kv4_compatibility: with --kv-cache-dtype nvfp4 on "
    "SM100 trtllm_mha, speculative decoding takes EAGLE, EAGLE3, NEXTN and breadth-1 NGRAM, the algorithm as written "
    "(from 0.5.21; AB540)",
    "deepseek_v4_target": "arg_groups/deepseek_v4_hook.py:148-158: a DeepseekV4ForCausalLM target asserts the algorithm "
    "as written (before NEXTN becomes EAGLE) is EAGLE or, from 0.5.16, DSPARK (changes.DSPARK_ON_DEEPSEEK_V4)",
}

ALGORITHMS: tuple[Algorithm, ...] = (
    Algorithm("EAGLE", documented=True, draft_checkpoint=True, eagle_worker=True, eagle_head=True, mixed_chunk=True,
              mtp_draft=True, watermark=True, block_verification=True, draft_window=True, lora=True,
              max_running_requests_reset=True, adaptive=True, dp_spec_prefill_coordination=True, unified_memory=True,
              deepseek_v4_target=True, sm100_nvfp4_kv=True),
    Algorithm("EAGLE3", documented=True, draft_checkpoint=True, eagle_worker=True, eagle_head=True, mixed_chunk=True,
              watermark=True, block_verification=True, draft_window=True, lora=True, max_running_requests_reset=True,
              adaptive=True, aux_hidden_capture=True, dp_spec_prefill_coordination=True, unified_memory=True,
              sm100_nvfp4_kv=True),
    Algorithm("NEXTN", documented=True, alias_of="EAGLE", draft_checkpoint=True, eagle_worker=True, eagle_head=True,
              mixed_chunk=True, mtp_draft=True, watermark=True, block_verification=True, draft_window=True, lora=True,
              max_running_requests_reset=True, adaptive=True, dp_spec_prefill_coordination=True, unified_memory=True,
              deepseek_v4_target=True, sm100_nvfp4_kv=True),
    Algorithm("STANDALONE", documented=True, draft_checkpoint=True, eagle_worker=True, dp_attention_refused=True,
              max_running_requests_reset=True),
    Algorithm("NGRAM", documented=True, dp_attention_refused=True, watermark=True, lora=True, max_running_requests_reset=True,
              sm100_nvfp4_kv=True),
    Algorithm("DFLASH", documented=True, draft_checkpoint=True, mixed_chunk=True, dp_attention_conditional=True,
              block_verification=True, draft_window=True, lora=True, max_running_requests_reset=True,
              aux_hidden_capture=True, unified_memory=True, spec_tp_sync=True, minimax_m3_nvfp4=True,
              replayssm_kda_fold=True),
    Algorithm("UNO", documented=False),
    Algorithm("DSPARK", documented=False, draft_checkpoint=True, mixed_chunk=True, block_verification=True, lora=True,
              max_running_requests_reset=True, aux_hidden_capture=True, dp_spec_prefill_coordination=True,
              unified_memory=True, deepseek_v4_target=True, spec_tp_sync=True, minimax_m3_nvfp4=True,
              replayssm_kda_fold=True),
    Algorithm("FROZEN_KV_MTP", documented=False, max_running_requests_reset=True),
)
BY_NAME: dict[str, Algorithm] = {row.name: row for row in ALGORITHMS}

# Every name the --speculative-algorithm parser takes: the documented six, then the passed-through ones.
DOCUMENTED_ALGORITHMS: tuple[str, ...] = tuple(row.name for row in ALGORITHMS if row.documented)
PASSED_THROUGH_ALGORITHMS: tuple[str, ...] = tuple(row.name for row in ALGORITHMS if not row.documented)
_CANONICAL = tuple(row for row in ALGORITHMS if row.alias_of is None)
_MODELED = tuple(row for row in _CANONICAL if row.documented)

# Load a separate draft checkpoint (its config, dtype, context length, quantization are the draft's own).
DRAFT_CHECKPOINT_ALGORITHMS = frozenset(row.name for row in _MODELED if row.draft_checkpoint)
# Run SGLang's EAGLE worker: draft trees with topk > 1, the EAGLE draft CUDA graphs, a draft KV pool.
EAGLE_WORKER_ALGORITHMS = frozenset(row.name for row in _MODELED if row.eagle_worker)
# Draft with an EAGLE head over the target's hidden states (the target needs the EAGLE hooks).
EAGLE_HEAD_ALGORITHMS = frozenset(row.name for row in _MODELED if row.eagle_head)
# Keep --enable-mixed-chunk, from sglang_facts.changes.MIXED_CHUNK_PER_ALGORITHM (before it the EAGLE-family
# and DFLASH handlers turned it off too).
MIXED_CHUNK_ALGORITHMS = frozenset(row.name for row in _CANONICAL if row.mixed_chunk)
MIXED_CHUNK_OFF_ALGORITHMS = frozenset(row.name for row in _CANONICAL if not row.mixed_chunk)


# With no draft path, draft with the target's own MTP layers (any other algorithm then loads the
# target checkpoint as a draft it is not), and the algorithms that need a separate draft for that.
MTP_DRAFT_ALGORITHMS = frozenset(row.name for row in _MODELED if row.mtp_draft)
SEPARATE_DRAFT_ALGORITHMS = DRAFT_CHECKPOINT_ALGORITHMS - MTP_DRAFT_ALGORITHMS
# Attention DP: refused outright, or allowed only under conditions (the rest run with it).
DP_ATTENTION_REFUSED_ALGORITHMS = frozenset(row.name for row in _MODELED if row.dp_attention_refused)
DP_ATTENTION_CONDITIONAL_ALGORITHMS = frozenset(row.name for row in _MODELED if row.dp_attention_conditional)
# What SGLang itself checks, over every algorithm it accepts (canonical names).
WATERMARK_ALGORITHMS = frozenset(row.name for row in _CANONICAL if row.watermark)
BLOCK_VERIFICATION_ALGORITHMS = frozenset(row.name for row in _CANONICAL if row.block_verification)
DRAFT_WINDOW_ALGORITHMS = frozenset(row.name for row in _CANONICAL if row.draft_window)
ADAPTIVE_ALGORITHMS = frozenset(row.name for row in _CANONICAL if row.adaptive)
# Checks SGLang makes on the name as written, before NEXTN becomes EAGLE, so only canonical names
# pass (in table order, for messages): the aux-hidden-state capture's conventions, and what a
# DeepSeek-V4 target accepts.
AUX_HIDDEN_CAPTURE_SPELLINGS: tuple[str, ...] = tuple(row.name for row in _CANONICAL if row.aux_hidden_capture)
DEEPSEEK_V4_TARGET_SPELLINGS: tuple[str, ...] = tuple(row.name for row in _CANONICAL if row.deepseek_v4_target)
# After the alias, in table order: what the DP spec/prefill coordination and the unified memory pool take.
DP_SPEC_PREFILL_COORDINATION_ALGORITHMS: tuple[str, ...] = tuple(row.name for row in _CANONICAL if row.dp_spec_prefill_coordination)
UNIFIED_MEMORY_ALGORITHMS: tuple[str, ...] = tuple(row.name for row in _CANONICAL if row.unified_memory)
SPEC_TP_SYNC_ALGORITHMS = frozenset(row.name for row in _CANONICAL if row.spec_tp_sync)
# In table order, for HY364's message: what commits mamba state through the KDA fold under ReplaySSM spec.
REPLAYSSM_KDA_FOLD_ALGORITHMS: tuple[str, ...] = tuple(row.name for row in _CANONICAL if row.replayssm_kda_fold)
# In table order, for QT305's message: what a MiniMax-M3.1 NVFP4 target speculates with.
MINIMAX_M3_NVFP4_ALGORITHMS: tuple[str, ...] = tuple(row.name for row in _CANONICAL if row.minimax_m3_nvfp4)
# After the alias: what speculates over SM100's native NVFP4 KV cache (AB540).
SM100_NVFP4_KV_ALGORITHMS = frozenset(row.name for row in _CANONICAL if row.sm100_nvfp4_kv)
# A tuple, in table order: PL005 names them in its message.
LORA_ALGORITHMS: tuple[str, ...] = tuple(row.name for row in _CANONICAL if row.lora)


def spellings(algorithms: frozenset[str]) -> frozenset[str]:
    """The names a user may type for these algorithms (aliases included), for code that reads the raw name."""
    return algorithms | {row.name for row in ALGORITHMS if row.alias_of in algorithms}


EAGLE_WORKER_SPELLINGS = spellings(EAGLE_WORKER_ALGORITHMS)
MTP_DRAFT_SPELLINGS = spellings(MTP_DRAFT_ALGORITHMS)
MAX_RUNNING_REQUESTS_RESET_SPELLINGS = spellings(frozenset(row.name for row in _CANONICAL if row.max_running_requests_reset))
