"""AB: attention backends and the hardware they need."""

from specguard.rules.attention import AB001_fa3_unsupported_gpu as AB001
from specguard.rules.attention import AB002_tree_paged_backend_unsupported as AB002
from specguard.rules.attention import AB003_trtllm_mha_tree_draft as AB003
from specguard.rules.attention import AB004_trtllm_mha_unsupported_gpu as AB004
from specguard.rules.attention import AB005_flex_attention_speculative as AB005
from specguard.rules.attention import AB006_draft_backend_not_a_choice as AB006
from specguard.rules.attention import AB007_torch_native_disables_cuda_graph as AB007
from specguard.rules.attention import AB008_fa4_page_forced_under_tree_draft as AB008
from specguard.rules.attention import AB020_mha_draft_inherits_mla_backend as AB020
from specguard.rules.attention import AB021_multi_layer_eagle_v2_forces_fa3 as AB021
from specguard.rules.attention import AB060_fa3_draft_backend_chain_only as AB060
from specguard.rules.attention import AB061_aiter_eagle_graph_non_mla as AB061
from specguard.rules.attention import AB062_rocm_eagle_tp_rank_divergence as AB062
from specguard.rules.attention import (
    AB063_fp4_nextn_draft_moe_on_trtllm_blackwell as AB063,
)
from specguard.rules.attention import AB064_minimax_m3_sparse_verify_rocm as AB064
from specguard.rules.attention import (
    AB065_rocm_eagle_custom_allreduce_verify_hang as AB065,
)
from specguard.rules.attention import (
    AB080_mha_draft_clears_mla_chunked_prefix_cache as AB080,
)
from specguard.rules.attention import AB110_eagle_on_intel_amx_refused as AB110
from specguard.rules.attention import AB111_hpc_ops_speculative as AB111
from specguard.rules.attention import AB173_dflash_device_unsupported as AB173
from specguard.rules.attention import (
    AB192_trtllm_mla_decode_with_dcp_speculation as AB192,
)
from specguard.rules.attention import AB200_eagle_on_intel_xpu_refused as AB200
from specguard.rules.attention import AB201_eagle_verify_ignores_sampling as AB201
from specguard.rules.attention import AB210_minicpm_sparse_backend_speculative as AB210
from specguard.rules.attention import AB250_ngram_verify_ignores_sampling as AB250
from specguard.rules.attention import AB251_eagle_on_xpu_without_tree_kernels as AB251
from specguard.rules.attention import AB252_rocm_eagle_sampled_verify_crashes as AB252
from specguard.rules.attention import (
    AB260_split_prefill_decode_backends_with_speculation as AB260,
)
from specguard.rules.attention import AB261_trtllm_backend_refuses_speculation as AB261

RULES = (
    AB001.RULE, AB002.RULE, AB003.RULE, AB004.RULE, AB005.RULE, AB006.RULE, AB007.RULE, AB008.RULE,
    AB020.RULE, AB021.RULE, AB060.RULE, AB061.RULE, AB062.RULE, AB063.RULE, AB064.RULE, AB065.RULE,
    AB080.RULE, AB110.RULE, AB111.RULE,
    AB173.RULE,
    AB192.RULE,
    AB200.RULE,
    AB201.RULE,
    AB210.RULE,
    AB250.RULE,
    AB251.RULE,
    AB252.RULE,
    AB260.RULE,
    AB261.RULE,
)
