"""PL: parallelism and per-algorithm constraints (DP attention, PP, NGRAM, DFLASH)."""

from specguard.rules.parallel import PL001_dp_attention_unsupported_algorithm as PL001
from specguard.rules.parallel import PL002_pipeline_parallel_speculative as PL002
from specguard.rules.parallel import PL003_dflash_constraints as PL003
from specguard.rules.parallel import PL004_ngram_constraints as PL004
from specguard.rules.parallel import PL005_lora_unsupported_algorithm as PL005
from specguard.rules.parallel import PL006_decode_radix_cache_speculative as PL006
from specguard.rules.parallel import PL007_watermark_speculative as PL007
from specguard.rules.parallel import PL008_multi_node_inconsistent as PL008
from specguard.rules.parallel import PL009_mixed_chunk_disabled as PL009
from specguard.rules.parallel import PL060_eagle_dp_attention_without_idle_sync as PL060
from specguard.rules.parallel import (
    PL061_spec_v2_dp_attention_draft_extend_sync as PL061,
)
from specguard.rules.parallel import PL062_index_share_mtp_pd_decode_dp_hang as PL062
from specguard.rules.parallel import PL063_dflash_pd_decode_without_draft_input as PL063
from specguard.rules.parallel import PL064_glm_dsa_eagle_attention_tp_under_dp as PL064
from specguard.rules.parallel import PL090_index_share_mtp_pd_decode_stale_seed as PL090
from specguard.rules.parallel import PL091_dflash_selector_batch_above_graph as PL091
from specguard.rules.parallel import PL140_cp_tp_group_sharing_speculative as PL140
from specguard.rules.parallel import PL172_dspark_dp_attention_constraints as PL172
from specguard.rules.parallel import PL190_hicache_dcp_with_speculation as PL190
from specguard.rules.parallel import PL191_dcp_speculation_on_cuda as PL191
from specguard.rules.parallel import PL198_dcp_speculation_on_xpu as PL198
from specguard.rules.parallel import PL199_dsa_dcp_tree_draft as PL199
from specguard.rules.parallel import PL212_deepep_v2_speculative_draft as PL212
from specguard.rules.parallel import (
    PL214_pd_decode_rejection_sampling_first_verify as PL214,
)
from specguard.rules.parallel import PL282_eagle_pd_decode_without_draft_input as PL282
from specguard.rules.parallel import (
    PL284_pd_dcp_decode_draft_kv_not_transferred as PL284,
)
from specguard.rules.parallel import PL285_pp_draft_embedding_load_format as PL285
from specguard.rules.parallel import (
    PL286_elastic_ep_scale_up_graph_recapture_speculative as PL286,
)
from specguard.rules.parallel import PL287_pd_role_switch_with_speculation as PL287
from specguard.rules.parallel import (
    PL288_prefill_complete_with_decoupled_speculation as PL288,
)
from specguard.rules.parallel import PL290_spec_v2_dp_attention_idle_batch as PL290
from specguard.rules.parallel import PL301_dspark_dsv4_draft_attention_tp as PL301
from specguard.rules.parallel import PL303_dspark_dense_draft_compact_dp_graph as PL303
from specguard.rules.parallel import PL307_kimi_k3_dcp_dspark_ragged_verify as PL307
from specguard.rules.parallel import (
    PL320_gemma_eagle3_dp_attention_embedding_shard as PL320,
)
from specguard.rules.parallel import PL324_hyv4_context_parallel_refused as PL324
from specguard.rules.parallel import (
    PL375_pd_dsa_draft_indexer_not_transferred as PL375,
)
from specguard.rules.parallel import (
    PL380_qwen4_exp_unified_memory_or_mori_pp_refused as PL380,
)
from specguard.rules.parallel import (
    PL381_multi_layer_eagle_eager_draft_extend_idle_dp_rank as PL381,
)
from specguard.rules.parallel import PL382_pd_ngram_embedding_table_unfilled as PL382
from specguard.rules.parallel import (
    PL432_rocm_fp4_nextn_deepep_draft_without_ep as PL432,
)
from specguard.rules.parallel import (
    PL443_dflash_dp_attention_draft_head_refused as PL443,
)
from specguard.rules.parallel import (
    PL484_decoupled_spec_role_without_endpoints as PL484,
)
from specguard.rules.parallel import (
    PL489_pd_decode_spec_v2_prebuilt_draft_input as PL489,
)
from specguard.rules.parallel import (
    PL502_eagle3_draft_on_full_tp_group_under_dp_attention as PL502,
)
from specguard.rules.parallel import (
    PL631_dspark_dsv4_compact_verify_context_parallel as PL631,
)

RULES = (PL001.RULE, PL002.RULE, PL003.RULE, PL004.RULE, PL005.RULE, PL006.RULE, PL007.RULE, PL008.RULE, PL009.RULE, PL060.RULE, PL061.RULE, PL062.RULE, PL063.RULE, PL064.RULE, PL090.RULE, PL091.RULE, PL140.RULE,
         PL172.RULE,
         PL190.RULE, PL191.RULE, PL198.RULE, PL199.RULE,
         PL212.RULE, PL214.RULE,
         PL282.RULE,
         PL284.RULE,
         PL285.RULE,
         PL286.RULE,
         PL287.RULE,
         PL288.RULE,
         PL290.RULE,
         PL301.RULE, PL303.RULE, PL307.RULE,
         PL320.RULE, PL324.RULE,
         PL380.RULE, PL381.RULE, PL382.RULE,
         PL375.RULE,
         PL432.RULE,
         PL443.RULE,
         PL484.RULE,
         PL489.RULE,
         PL502.RULE,
         PL631.RULE)
