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

RULES = (PL001.RULE, PL002.RULE, PL003.RULE, PL004.RULE, PL005.RULE, PL006.RULE, PL007.RULE, PL008.RULE, PL009.RULE, PL060.RULE, PL061.RULE, PL062.RULE, PL063.RULE, PL064.RULE, PL090.RULE, PL091.RULE, PL140.RULE,
         PL172.RULE,
         PL190.RULE, PL191.RULE, PL198.RULE, PL199.RULE,
         PL212.RULE, PL214.RULE)
