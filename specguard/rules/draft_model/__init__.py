"""DM: the draft and the target as a pair (dtype, context, vocabulary, architecture, MTP);
DM100-DM129 read the checkpoints' safetensors headers (specguard/weights.py)."""

from specguard.rules.draft_model import DM001_draft_dtype_differs_from_target as DM001
from specguard.rules.draft_model import DM002_draft_context_shorter_than_target as DM002
from specguard.rules.draft_model import DM003_draft_vocab_differs_from_target as DM003
from specguard.rules.draft_model import (
    DM004_draft_hidden_size_differs_from_target as DM004,
)
from specguard.rules.draft_model import (
    DM005_separate_draft_algorithm_without_draft_path as DM005,
)
from specguard.rules.draft_model import DM006_mtp_without_mtp_layers as DM006
from specguard.rules.draft_model import DM007_eagle3_ignores_token_map as DM007
from specguard.rules.draft_model import (
    DM008_draft_architecture_does_not_match_algorithm as DM008,
)
from specguard.rules.draft_model import DM009_remote_code_revision_not_pinned as DM009
from specguard.rules.draft_model import DM010_draft_path_for_mtp_target as DM010
from specguard.rules.draft_model import DM011_eagle3_with_gemma4_assistant as DM011
from specguard.rules.draft_model import DM012_context_length_above_target as DM012
from specguard.rules.draft_model import DM013_eagle3_aux_layers_out_of_range as DM013
from specguard.rules.draft_model import DM020_draft_declares_zero_mtp_layers as DM020
from specguard.rules.draft_model import DM040_target_lacks_eagle_hooks as DM040
from specguard.rules.draft_model import (
    DM041_eagle3_multi_layer_draft_unsupported as DM041,
)
from specguard.rules.draft_model import DM042_draft_architecture_not_in_release as DM042
from specguard.rules.draft_model import DM043_standalone_hidden_size_mismatch as DM043
from specguard.rules.draft_model import DM044_token_map_with_vocab_sharded_head as DM044
from specguard.rules.draft_model import (
    DM080_qwen2_eagle3_aux_unpacked_twice as DM080,
)
from specguard.rules.draft_model import DM100_eagle2_head_passed_as_eagle3 as DM100
from specguard.rules.draft_model import DM101_eagle3_fc_aux_count_mismatch as DM101
from specguard.rules.draft_model import DM102_eagle3_token_map_missing as DM102
from specguard.rules.draft_model import DM103_eagle3_lm_head_missing as DM103
from specguard.rules.draft_model import DM104_mtp_weights_missing as DM104
from specguard.rules.draft_model import (
    DM130_draft_vocab_same_size_other_family as DM130,
)
from specguard.rules.draft_model import (
    DM131_qwen2_eagle_draft_lacks_aux_capture_flag as DM131,
)
from specguard.rules.draft_model import (
    DM140_dflash_target_layer_ids_without_target_count as DM140,
)
from specguard.rules.draft_model import DM176_dflash_draft_gemma_norm_ignored as DM176
from specguard.rules.draft_model import DM177_dflash_draft_causality_ignored as DM177
from specguard.rules.draft_model import DM178_dspark_without_draft_path as DM178
from specguard.rules.draft_model import (
    DM179_dflash_draft_activation_unsupported as DM179,
)
from specguard.rules.draft_model import DM197_deepseek_v4_speculation_form as DM197
from specguard.rules.draft_model import DM297_draft_fetched_at_target_revision as DM297
from specguard.rules.draft_model import DM302_deepseek_v41_speculation_refused as DM302
from specguard.rules.draft_model import (
    DM306_dspark_draft_sample_from_anchor_ignored as DM306,
)
from specguard.rules.draft_model import (
    DM321_iquest_q1_speculation_constraints as DM321,
)
from specguard.rules.draft_model import (
    DM323_bailing_mtp_layer_count_not_one as DM323,
)
from specguard.rules.draft_model import (
    DM325_glm_ocr_mtp_draft_ignores_image_inputs as DM325,
)
from specguard.rules.draft_model import (
    DM340_eagle3_head_without_aux_states_fed_aux as DM340,
)
from specguard.rules.draft_model import DM341_eagle3_head_norms_ignored as DM341
from specguard.rules.draft_model import (
    DM342_dflash_draft_attention_extras_ignored as DM342,
)
from specguard.rules.draft_model import (
    DM343_dflash_draft_heads_not_split_by_tp as DM343,
)
from specguard.rules.draft_model import (
    DM344_dflash_draft_sliding_layers_ignored as DM344,
)
from specguard.rules.draft_model import DM345_lilicorr_draft_refused as DM345
from specguard.rules.draft_model import DM346_eagle3_aux_layer_ids_ignored as DM346
from specguard.rules.draft_model import (
    DM347_eagle3_narrow_head_draft_extend_graph as DM347,
)
from specguard.rules.draft_model import DM352_glm47_flash_mtp_built_as_gqa as DM352
from specguard.rules.draft_model import (
    DM353_mrope_eagle3_draft_graph_positions_zero as DM353,
)
from specguard.rules.draft_model import (
    DM354_qwen3_moe_standalone_draft_loaded_as_mtp as DM354,
)
from specguard.rules.draft_model import DM356_mimo_draft_built_as_full_model as DM356
from specguard.rules.draft_model import (
    DM372_bailing_nextn_missing_post_load as DM372,
)
from specguard.rules.draft_model import (
    DM400_deepseek_v3_nextn_needs_exported_draft as DM400,
)
from specguard.rules.draft_model import DM410_standalone_draft_vocab_refused as DM410
from specguard.rules.draft_model import (
    DM411_dflash_selector_draft_without_rank as DM411,
)
from specguard.rules.draft_model import DM412_dspark_minimax_draft_refused as DM412
from specguard.rules.draft_model import (
    DM413_dspark_draft_without_markov_rank as DM413,
)
from specguard.rules.draft_model import DM414_dflash_domino_draft_refused as DM414
from specguard.rules.draft_model import (
    DM421_eagle3_null_draft_vocab_untied_head as DM421,
)
from specguard.rules.draft_model import (
    DM422_eagle3_aux_count_draft_extend_graph as DM422,
)
from specguard.rules.draft_model import (
    DM423_eagle3_aux_layer_ids_not_in_target_graphs as DM423,
)
from specguard.rules.draft_model import (
    DM424_eagle3_head_without_d2t_refused as DM424,
)
from specguard.rules.draft_model import (
    DM425_token_map_spec_v2_draft_extend_graph as DM425,
)
from specguard.rules.draft_model import (
    DM440_dflash_draft_sliding_window_dropped as DM440,
)
from specguard.rules.draft_model import (
    DM441_dflash_mask_token_unresolvable as DM441,
)
from specguard.rules.draft_model import (
    DM445_dflash_target_lacks_capture_hook as DM445,
)
from specguard.rules.draft_model import (
    DM450_dspark_mask_token_outside_target_vocab as DM450,
)
from specguard.rules.draft_model import (
    DM451_dspark_draft_markov_head_type_refused as DM451,
)
from specguard.rules.draft_model import (
    DM464_mimo_v2_mtp_multimodal_pad_ids_out_of_vocab as DM464,
)
from specguard.rules.draft_model import (
    DM542_dflash_draft_rope_dim_ignored as DM542,
)
from specguard.rules.draft_model import DM554_llama4_eagle3_head_mlp_width as DM554
from specguard.rules.draft_model import DM565_hyv3_mtp_head_norm_not_loaded as DM565
from specguard.rules.draft_model import DM567_runai_draft_path_not_fetched as DM567
from specguard.rules.draft_model import (
    DM569_qwen35_mtp_fused_shared_expert_not_loaded as DM569,
)
from specguard.rules.draft_model import DM601_dflash_draft_options_refused as DM601
from specguard.rules.draft_model import DM620_kimi_eagle3_mla_fp8_kv_b_proj as DM620
from specguard.rules.draft_model import (
    DM645_iquest_q1_mtp_draft_foreign_tensor_names as DM645,
)

RULES = (
    DM001.RULE,
    DM002.RULE,
    DM003.RULE,
    DM004.RULE,
    DM005.RULE,
    DM006.RULE,
    DM007.RULE,
    DM008.RULE,
    DM009.RULE,
    DM010.RULE,
    DM011.RULE,
    DM012.RULE,
    DM013.RULE,
    DM100.RULE,
    DM101.RULE,
    DM102.RULE,
    DM103.RULE,
    DM104.RULE,
    DM130.RULE,
    DM131.RULE,
    DM140.RULE,
    DM020.RULE,
    DM040.RULE,
    DM041.RULE,
    DM042.RULE,
    DM043.RULE,
    DM044.RULE,
    DM080.RULE,
    DM197.RULE,
    DM302.RULE,
    DM306.RULE,
    DM176.RULE,
    DM177.RULE,
    DM178.RULE,
    DM179.RULE,
    DM340.RULE,
    DM341.RULE,
    DM342.RULE,
    DM343.RULE,
    DM344.RULE,
    DM345.RULE,
    DM346.RULE,
    DM347.RULE,
    DM321.RULE,
    DM323.RULE,
    DM325.RULE,
    DM297.RULE,
    DM372.RULE,
    DM352.RULE,
    DM353.RULE,
    DM354.RULE,
    DM356.RULE,
    DM400.RULE,
    DM410.RULE,
    DM411.RULE,
    DM412.RULE,
    DM413.RULE,
    DM414.RULE,
    DM421.RULE,
    DM422.RULE,
    DM423.RULE,
    DM424.RULE,
    DM425.RULE,
    DM440.RULE,
    DM441.RULE,
    DM445.RULE,
    DM450.RULE,
    DM451.RULE,
    DM464.RULE,
    DM542.RULE,
    DM554.RULE,
    DM565.RULE,
    DM567.RULE,
    DM569.RULE,
    DM620.RULE,
    DM601.RULE,
    DM645.RULE,
)
