"""FX: speculative decoding meeting other server features (metrics, HiCache, structured output, ...)."""

from specguard.rules.features import (
    FX080_expert_distribution_metrics_draft_capture as FX080,
)
from specguard.rules.features import FX081_hicache_draft_kv_not_backed as FX081
from specguard.rules.features import FX082_ngram_grammar_without_vocab_mask as FX082
from specguard.rules.features import FX083_hicache_dsa_draft_state_not_backed as FX083
from specguard.rules.features import (
    FX085_eagle3_pd_prefill_sends_aux_hidden_states as FX085,
)
from specguard.rules.features import FX086_spec_grammar_tensor_index_xgrammar as FX086
from specguard.rules.features import FX087_eagle_verify_without_grammar as FX087
from specguard.rules.features import (
    FX088_spec_v2_eagle3_logprob_without_aux_states as FX088,
)
from specguard.rules.features import (
    FX089_hicache_mooncake_standalone_draft_pool as FX089,
)
from specguard.rules.features import (
    FX090_custom_logit_processor_skipped_in_v2_verify as FX090,
)
from specguard.rules.features import FX091_spec_return_hidden_states_truncated as FX091
from specguard.rules.features import (
    FX092_multi_layer_eagle_verify_without_grammar as FX092,
)
from specguard.rules.features import FX093_pd_decode_spec_v2_grammar_abort as FX093
from specguard.rules.features import FX110_dwdp_with_speculation as FX110
from specguard.rules.features import FX111_weight_cache_with_speculation as FX111
from specguard.rules.features import (
    FX140_startup_weight_overlap_with_speculation as FX140,
)
from specguard.rules.features import FX185_kv_cache_sharding_with_speculation as FX185
from specguard.rules.features import (
    FX186_kv_cache_sharding_speculation_outside_glm_dsa_mtp as FX186,
)
from specguard.rules.features import FX187_layernorm_sp_with_speculation as FX187
from specguard.rules.features import (
    FX188_layernorm_sp_speculation_outside_muse_spark_dflash as FX188,
)
from specguard.rules.features import (
    FX189_hisparse_speculation_tree_or_adaptive as FX189,
)
from specguard.rules.features import (
    FX193_return_aux_hidden_states_speculative_flags as FX193,
)
from specguard.rules.features import FX200_lmcache_with_speculation as FX200
from specguard.rules.features import FX211_spec_tp_sync_unknown_token as FX211
from specguard.rules.features import (
    FX262_two_batch_overlap_graph_capture_with_speculation as FX262,
)
from specguard.rules.features import FX263_cpu_torch_compile_with_speculation as FX263
from specguard.rules.features import FX292_spec_v2_verify_without_grammar as FX292
from specguard.rules.features import FX355_hicache_inkling_mtp_draft_refused as FX355
from specguard.rules.features import FX361_external_linker_unpacked_draft_kv as FX361
from specguard.rules.features import (
    FX442_dflash_overlap_refuses_hidden_states as FX442,
)
from specguard.rules.features import (
    FX452_dspark_observability_env_refused as FX452,
)
from specguard.rules.features import (
    FX486_ngram_ignores_original_logprob_env as FX486,
)
from specguard.rules.features import FX493_kv_sharding_mtp_draft_kv_dtype as FX493
from specguard.rules.features import (
    FX500_custom_logit_processor_ignored_by_early_eagle_verify as FX500,
)
from specguard.rules.features import (
    FX510_two_batch_overlap_spec_v2_eager_verify_split as FX510,
)
from specguard.rules.features import (
    FX523_routed_experts_capture_dense_draft as FX523,
)
from specguard.rules.features import (
    FX531_hicache_dsv4_mtp_draft_state_not_backed as FX531,
)
from specguard.rules.features import (
    FX541_hisparse_pd_decode_draft_pool_non_mooncake as FX541,
)
from specguard.rules.features import (
    FX562_ple_offload_embedding_unsupported_target as FX562,
)
from specguard.rules.features import (
    FX563_two_batch_overlap_hyv4_shared_indexer as FX563,
)
from specguard.rules.features import (
    FX566_npu_dsv4_pd_draft_state_not_transferred as FX566,
)
from specguard.rules.features import (
    FX583_draft_cutedsl_deepep_flashinfer_autotune as FX583,
)
from specguard.rules.features import (
    FX610_hicache_mxfp8_host_pool_packed_mtp_draft as FX610,
)
from specguard.rules.features import FX611_hicache_tensorcast_packed_mtp_draft as FX611
from specguard.rules.features import (
    FX612_external_linker_mla_mamba_packed_mtp_draft as FX612,
)
from specguard.rules.features import FX613_hicache_swa_draft_pool_not_backed as FX613

RULES = (FX080.RULE, FX081.RULE, FX082.RULE, FX083.RULE, FX085.RULE, FX086.RULE, FX087.RULE,
         FX088.RULE, FX089.RULE, FX090.RULE, FX091.RULE, FX092.RULE,
         FX093.RULE, FX110.RULE, FX111.RULE, FX140.RULE,
         FX185.RULE, FX186.RULE, FX187.RULE, FX188.RULE, FX189.RULE, FX193.RULE,
         FX200.RULE,
         FX211.RULE,
         FX262.RULE,
         FX263.RULE,
         FX292.RULE,
         FX361.RULE,
         FX355.RULE,
         FX442.RULE,
         FX452.RULE,
         FX486.RULE,
         FX493.RULE,
         FX500.RULE,
         FX510.RULE,
         FX523.RULE,
         FX531.RULE,
         FX541.RULE,
         FX610.RULE,
         FX611.RULE,
         FX612.RULE,
         FX613.RULE,
         FX562.RULE,
         FX563.RULE,
         FX566.RULE,
         FX583.RULE)
