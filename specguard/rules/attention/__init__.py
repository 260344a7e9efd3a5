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
from specguard.rules.attention import AB280_eagle_on_ascend_refused as AB280
from specguard.rules.attention import AB283_dflash_on_npu_without_ascend_draft as AB283
from specguard.rules.attention import AB289_eagle_draft_graphs_on_musa as AB289
from specguard.rules.attention import (
    AB295_triton_spec_v2_draft_extend_graph_prefix as AB295,
)
from specguard.rules.attention import AB298_early_eagle_verify_always_greedy as AB298
from specguard.rules.attention import (
    AB299_eagle_sampled_verify_threshold_key_missing as AB299,
)
from specguard.rules.attention import AB304_rocm_dsv4_dspark_compact_verify as AB304
from specguard.rules.attention import AB326_gemma4_attention_backend_refused as AB326
from specguard.rules.attention import AB330_eagle_draft_backend_missing as AB330
from specguard.rules.attention import AB331_mla_draft_backend_chain_only as AB331
from specguard.rules.attention import (
    AB332_deepseek_mtp_flashinfer_paged_refused as AB332,
)
from specguard.rules.attention import (
    AB333_eagle_triton_verify_graph_unsupported as AB333,
)
from specguard.rules.attention import AB351_hyv3_nextn_cuda_sync_on_xpu as AB351
from specguard.rules.attention import AB362_dsv4_multi_step_draft_cache_loc as AB362
from specguard.rules.attention import (
    AB363_rocm_dsv4_multi_step_draft_graph_cache_loc as AB363,
)
from specguard.rules.attention import AB383_dflash_selector_greedy_on_npu as AB383
from specguard.rules.attention import (
    AB390_trtllm_mla_draft_extend_unpadded_query as AB390,
)
from specguard.rules.attention import (
    AB391_fa3_paged_tree_draft_short_page_table as AB391,
)
from specguard.rules.attention import AB392_fa3_swa_tree_verify_paged_assert as AB392
from specguard.rules.attention import (
    AB393_fa3_swa_tree_verify_cascade_window as AB393,
)
from specguard.rules.attention import AB394_flashinfer_mla_paged_verify_assert as AB394
from specguard.rules.attention import (
    AB395_trtllm_mha_xqa_verify_without_mask as AB395,
)
from specguard.rules.attention import (
    AB402_dspark_triton_draft_verify_layout as AB402,
)
from specguard.rules.attention import (
    AB404_npu_deepseek_v4_mtp_generic_ascend_draft as AB404,
)
from specguard.rules.attention import (
    AB420_eagle3_draft_window_triton_multi_step as AB420,
)
from specguard.rules.attention import (
    AB431_trtllm_mla_draft_extend_misaligned_query as AB431,
)
from specguard.rules.attention import (
    AB433_dsv4_trtllm_attention_refused_setup as AB433,
)
from specguard.rules.attention import AB436_fa4_mla_verify_asserts_fa3 as AB436
from specguard.rules.attention import (
    AB437_trtllm_mla_prefill_verify_with_dcp as AB437,
)
from specguard.rules.attention import (
    AB438_tokenspeed_mla_draft_backend_without_mla as AB438,
)
from specguard.rules.attention import AB453_dspark_fa4_draft_quantized_kv as AB453
from specguard.rules.attention import AB461_exaone_sliding_window_backend as AB461
from specguard.rules.attention import (
    AB463_fa3_swa_pool_tree_verify_full_pool_slots as AB463,
)
from specguard.rules.attention import (
    AB470_aiter_swa_verify_legacy_kernel as AB470,
)
from specguard.rules.attention import (
    AB471_gemma4_aiter_legacy_verify_kv_shared as AB471,
)
from specguard.rules.attention import (
    AB472_rocm_dsv4_dspark_unified_kv_draft_write as AB472,
)
from specguard.rules.attention import (
    AB483_frozen_kv_mtp_tree_draft_backend as AB483,
)
from specguard.rules.attention import (
    AB490_unified_memory_spec_backend_unaudited as AB490,
)
from specguard.rules.attention import (
    AB510_trtllm_mha_draft_reads_target_swa_slots as AB510,
)
from specguard.rules.attention import (
    AB520_dspark_compact_verify_graph_backend as AB520,
)
from specguard.rules.attention import (
    AB521_plan_stream_wrapper_verify_fixup as AB521,
)
from specguard.rules.attention import AB522_dflash_fa4_draft_quantized_kv as AB522
from specguard.rules.attention import (
    AB530_minimax_m3_plan_stream_verify_fixup as AB530,
)
from specguard.rules.attention import (
    AB540_sm100_nvfp4_kv_speculation_refused as AB540,
)
from specguard.rules.attention import (
    AB570_flashinfer_draft_graph_kv_indices_overflow as AB570,
)
from specguard.rules.attention import (
    AB571_trtllm_mha_native_nvfp4_extend_refused as AB571,
)
from specguard.rules.attention import (
    AB572_flashmla_spec_v2_draft_extend_decode_path as AB572,
)
from specguard.rules.attention import AB573_eager_draft_extend_flashmla_dsv4 as AB573
from specguard.rules.attention import (
    AB574_multi_layer_eagle_eager_draft_steps_unplanned as AB574,
)
from specguard.rules.attention import (
    AB575_fa3_multi_step_draft_swa_write_locations as AB575,
)
from specguard.rules.attention import (
    AB576_nvfp4_flashinfer_verify_unprepared_dequant_workspace as AB576,
)
from specguard.rules.attention import (
    AB580_rocm_dsv41_torch_prefill_indexer as AB580,
)
from specguard.rules.attention import (
    AB581_minimax_m3_msa_speculation_decode_graph as AB581,
)
from specguard.rules.attention import (
    AB582_cpu_fp8_kv_cache_needs_amx_mha as AB582,
)
from specguard.rules.attention import (
    AB583_qwen_qsa_verify_chain_within_compress_ratio as AB583,
)
from specguard.rules.attention import AB584_dsa_kpool_tail_backend as AB584
from specguard.rules.attention import (
    AB586_blackwell_default_trtllm_mha_auto_tree as AB586,
)
from specguard.rules.attention import (
    AB587_trtllm_mha_asymmetric_kv_widths as AB587,
)
from specguard.rules.attention import (
    AB600_nemotron35_draft_sink_needs_trtllm_mha as AB600,
)
from specguard.rules.attention import (
    AB632_dspark_compact_verify_trtllm_mla_dense_view as AB632,
)
from specguard.rules.attention import (
    AB634_dspark_compact_verify_flashinfer_mla_eager as AB634,
)
from specguard.rules.attention import (
    AB635_rocm_dsv4_dspark_draft_verify_rows as AB635,
)
from specguard.rules.attention import (
    AB636_rocm_dsv4_dspark_unified_fp8_draft_pool as AB636,
)
from specguard.rules.attention import (
    AB637_rocm_dspark_triton_draft_takes_dcp as AB637,
)
from specguard.rules.attention import (
    AB638_dspark_trtllm_mha_draft_replaced as AB638,
)

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
    AB280.RULE,
    AB283.RULE,
    AB289.RULE,
    AB295.RULE,
    AB298.RULE,
    AB299.RULE,
    AB304.RULE,
    AB330.RULE,
    AB331.RULE,
    AB332.RULE,
    AB333.RULE,
    AB326.RULE,
    AB362.RULE,
    AB363.RULE,
    AB351.RULE,
    AB383.RULE,
    AB390.RULE,
    AB391.RULE,
    AB392.RULE,
    AB393.RULE,
    AB394.RULE,
    AB395.RULE,
    AB402.RULE,
    AB404.RULE,
    AB420.RULE,
    AB431.RULE,
    AB433.RULE,
    AB436.RULE,
    AB437.RULE,
    AB438.RULE,
    AB453.RULE,
    AB461.RULE,
    AB463.RULE,
    AB470.RULE,
    AB471.RULE,
    AB472.RULE,
    AB483.RULE,
    AB490.RULE,
    AB510.RULE,
    AB520.RULE,
    AB521.RULE,
    AB522.RULE,
    AB530.RULE,
    AB540.RULE,
    AB570.RULE,
    AB571.RULE,
    AB572.RULE,
    AB573.RULE,
    AB574.RULE,
    AB575.RULE,
    AB576.RULE,
    AB580.RULE,
    AB600.RULE,
    AB581.RULE,
    AB582.RULE,
    AB632.RULE,
    AB634.RULE,
    AB635.RULE,
    AB636.RULE,
    AB637.RULE,
    AB638.RULE,
    AB583.RULE,
    AB584.RULE,
    AB586.RULE,
    AB587.RULE,
)
