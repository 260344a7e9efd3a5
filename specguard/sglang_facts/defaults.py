"""SGLang's defaults for the values it fills in itself, one table, each with the release file it was
read from. The resolution applies them, memory and the rules read them from here, so a default is
written once. Which algorithms form which family is ``algorithms``'s table, not this one.
"""

from __future__ import annotations

from packaging.version import Version

from specguard.records import Record
from specguard.sglang_facts.changes import (
    AUTO_PARAMS_BAILING_CHAIN,
    AUTO_PARAMS_CHAIN_BY_DEFAULT,
    AUTO_PARAMS_DEEPSEEK_CHAIN,
    AUTO_PARAMS_DEEPSEEK_V32_CHAIN,
    AUTO_PARAMS_GLM_MISTRAL_CHAIN,
    AUTO_PARAMS_GPT_OSS_CHAIN,
    AUTO_PARAMS_MIMO_FLASH_CHAIN,
    AUTO_SPEC_PARAMS,
    SPEC_MAX_RUNNING_REQUESTS_48,
    SPEC_MAX_RUNNING_REQUESTS_SET,
    SPEC_MEM_RESERVE_4_GIB,
    SPEC_MEM_RESERVE_DROPPED,
    Change,
)


class SpecParams(Record):
    num_steps: int
    eagle_topk: int
    num_draft_tokens: int


# ---- the auto speculative parameters (P14) -------------------------------------------------
# SGLang's auto-chosen (steps, topk, draft tokens) by the target's architectures[0] when none of
# the three is given (``auto_choose_speculative_params``; its releases are the AUTO_* changes).
# STANDALONE (from 0.5.2) always gets the chain.
AUTO_PARAMS_CHAIN = SpecParams(num_steps=3, eagle_topk=1, num_draft_tokens=4)
AUTO_PARAMS_TREE = SpecParams(num_steps=5, eagle_topk=4, num_draft_tokens=8)
# Given the tree in every release that chooses.
AUTO_PARAMS_TREE_ARCHITECTURES = frozenset({"LlamaForCausalLM", "Grok1ForCausalLM", "Grok1VForCausalLM"})
# Given the chain while the other architectures still got the tree (until 0.5.7), each from the
# release whose list first named it.
AUTO_PARAMS_CHAIN_LISTS: tuple[tuple[Change, frozenset[str]], ...] = (
    (AUTO_PARAMS_MIMO_FLASH_CHAIN, frozenset({"MiMoV2FlashForCausalLM"})),
    (AUTO_PARAMS_GLM_MISTRAL_CHAIN, frozenset({"Glm4MoeForCausalLM", "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration"})),
    (AUTO_PARAMS_DEEPSEEK_V32_CHAIN, frozenset({"DeepseekV32ForCausalLM"})),
    (AUTO_PARAMS_BAILING_CHAIN, frozenset({"BailingMoeForCausalLM", "BailingMoeV2ForCausalLM"})),
    (AUTO_PARAMS_GPT_OSS_CHAIN, frozenset({"GptOssForCausalLM"})),
    (AUTO_PARAMS_DEEPSEEK_CHAIN, frozenset({"DeepseekV3ForCausalLM", "DeepseekV2ForCausalLM"})),
)


def auto_params_at(version: Version, algorithm: str, architecture: str | None) -> SpecParams | None:
    """What ``version`` chooses when steps, topk and draft tokens are all unset; None before it
    chose any (the fields' own defaults apply) or when the architecture is unknown."""
    if not AUTO_SPEC_PARAMS.present_in(version):
        return None
    if algorithm == "STANDALONE":
        return AUTO_PARAMS_CHAIN
    if architecture is None:
        return None
    if architecture in AUTO_PARAMS_TREE_ARCHITECTURES:
        return AUTO_PARAMS_TREE
    if AUTO_PARAMS_CHAIN_BY_DEFAULT.present_in(version):
        return AUTO_PARAMS_CHAIN
    listed = any(architecture in names for change, names in AUTO_PARAMS_CHAIN_LISTS if change.present_in(version))
    return AUTO_PARAMS_CHAIN if listed else AUTO_PARAMS_TREE


# P55: adaptive speculative decoding runs a chain from the middle candidate (3 of [0, 1, 3, 5, 7]).
ADAPTIVE_DEFAULT_STEPS = 3
# Speculative decoding resets an unset --max-running-requests to 48 ("Max running requests is
# reset to 48 for speculative decoding", 0.5.23 speculative_hook.py:445); 32 in 0.4.3.post4-0.4.4.post2,
# nothing before (the release ladder, newest first).
DEFAULT_MAX_RUNNING_REQUESTS_FOR_SPEC = 48
MAX_RUNNING_REQUESTS_FOR_SPEC_BY_RELEASE: tuple[tuple[Change, int], ...] = (
    (SPEC_MAX_RUNNING_REQUESTS_48, DEFAULT_MAX_RUNNING_REQUESTS_FOR_SPEC),
    (SPEC_MAX_RUNNING_REQUESTS_SET, 32),
)

# ---- NGRAM -----------------------------------------------------------------------------------
# --speculative-ngram-min/max-bfs-breadth's defaults (0.5.23 arg_groups/fields/spec.py:252-259); NGRAM
# uses the max as its topk. The draft tokens it sets when none are given ("speculative_num_draft_tokens
# is set to 12 by default for ngram", 0.5.23 speculative_hook.py:1321).
NGRAM_DEFAULT_MIN_BFS_BREADTH = 1
NGRAM_DEFAULT_MAX_BFS_BREADTH = 10
NGRAM_DEFAULT_DRAFT_TOKENS = 12

# ---- DFLASH ----------------------------------------------------------------------------------
# The block size (= draft tokens) when neither --speculative-dflash-block-size nor the draft's
# config gives one (0.5.23 speculative_hook.py:416).
DFLASH_DEFAULT_BLOCK_SIZE = 16

# ---- DSPARK ----------------------------------------------------------------------------------
# gamma (draft tokens = gamma + 1) when neither --speculative-dspark-block-size nor the draft's config
# gives one and --speculative-num-draft-tokens is unset (0.5.16 speculative/dspark_components/dspark_config.py:16,
# 0.5.23 :21; applied at 0.5.16 arg_groups/speculative_hook.py:363-369, 0.5.23 :817-822).
DSPARK_DEFAULT_GAMMA = 7

# ---- CUDA graphs and GPU memory (P28) ---------------------------------------------------------
# The decode CUDA-graph max batch size by visible GPU memory (0.5.23
# ``arg_groups/memory_hook.py:88-180``, ``_handle_gpu_memory_settings``): (below MiB, max bs for
# tp < 4, max bs for tp >= 4); above the last tier, and for an unknown GPU, the fallbacks below.
GRAPH_MAX_BS_TIERS: tuple[tuple[int, int, int], ...] = (
    (20 * 1024, 8, 8),
    (35 * 1024, 48, 160),
    (60 * 1024, 32, 160),
    (160 * 1024, 256, 512),
)
GRAPH_MAX_BS_ABOVE_TIERS = 512
GRAPH_MAX_BS_UNKNOWN_GPU = 160
# SGLang's own reserve per decode graph batch size (``reserve_for_graph_mb``: max_bs x 2 MiB).
GRAPH_MIB_PER_BS = 2
# The chunked-prefill size by visible GPU memory, same function: (below MiB, chunk); an unknown GPU
# gets 4096.
CHUNKED_PREFILL_TIERS: tuple[tuple[int, int], ...] = (
    (20 * 1024, 2048),
    (60 * 1024, 4096),
    (160 * 1024, 8192),
)
CHUNKED_PREFILL_ABOVE_TIERS = 16384
CHUNKED_PREFILL_UNKNOWN_GPU = 4096
# --mem-fraction-static when unset, same function: (gpu_mem - reserved) / gpu_mem, reserved = 512 MiB
# + 1.5 MiB x max(chunked prefill, 2048) + tp/8 GiB + 2 MiB x decode max_bs, at least 10 GiB on GPUs
# above 60 GiB.
MEM_RESERVED_BASE_MIB = 512
MEM_RESERVED_MIB_PER_CHUNK_TOKEN = 1.5
MEM_RESERVED_MIN_CHUNK_TOKENS = 2048
MEM_RESERVED_MIN_MIB_ABOVE_60_GIB = 10 * 1024
# The draft's share of that reserve, per release (MiB: STANDALONE, any other algorithm but NGRAM), newest first;
# before 0.5.10 (0.5.3 server_args.py:663-669, 0.5.9 :1050-1057) 6 GiB and 2 GiB.
SPEC_MEM_RESERVE_MIB: tuple[tuple[Change, tuple[int, int]], ...] = (
    (SPEC_MEM_RESERVE_DROPPED, (0, 0)),
    (SPEC_MEM_RESERVE_4_GIB, (6 * 1024, 4 * 1024)),
)
SPEC_MEM_RESERVE_MIB_BEFORE = (6 * 1024, 2 * 1024)

# ---- sgl-jax ---------------------------------------------------------------------------------
# sgl-project/sglang-jax HEAD cddbf6f1, python/sgl_jax/srt/server_args.py (design dialects.md
# section 2): plain field defaults, no choice by architecture, attention backend "fa".
SGL_JAX_DEFAULT_PARAMS = SpecParams(num_steps=4, eagle_topk=5, num_draft_tokens=4)
SGL_JAX_DEFAULT_ATTENTION_BACKEND = "fa"
