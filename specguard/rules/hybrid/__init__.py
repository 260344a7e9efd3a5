"""HY: hybrid targets (mamba / linear-attention state, sliding-window attention) under speculative decoding."""

from specguard.rules.hybrid import HY020_mamba_no_buffer_radix_speculative as HY020
from specguard.rules.hybrid import HY021_sliding_window_eagle_backend as HY021
from specguard.rules.hybrid import HY022_gdn_speculative_falls_back_to_triton as HY022
from specguard.rules.hybrid import HY023_swa_triton_verify_mask_offset as HY023
from specguard.rules.hybrid import HY024_mamba_extra_buffer_verify_none_track as HY024
from specguard.rules.hybrid import HY110_gdn_flashinfer_verify_tree_draft as HY110
from specguard.rules.hybrid import HY140_dsv4_draft_tokens_exceed_c4_ring as HY140
from specguard.rules.hybrid import HY200_mamba1_target_speculation as HY200
from specguard.rules.hybrid import HY293_nsa_spec_v2_draft_extend_mode as HY293
from specguard.rules.hybrid import HY294_spec_v2_mamba_state_not_advanced as HY294
from specguard.rules.hybrid import HY300_dsv4_online_compress_with_speculation as HY300
from specguard.rules.hybrid import HY310_nsa_target_speculation as HY310
from specguard.rules.hybrid import HY311_gdn_tree_draft_verified_as_chain as HY311
from specguard.rules.hybrid import HY312_mamba_lazy_buffer_spec_refused as HY312
from specguard.rules.hybrid import HY313_lightning_hybrid_tree_draft as HY313
from specguard.rules.hybrid import HY314_mamba2_target_verify_token_count as HY314
from specguard.rules.hybrid import HY315_mamba_split_backends_verify_commit as HY315
from specguard.rules.hybrid import HY316_dsa_kpool_verify_on_rocm as HY316
from specguard.rules.hybrid import HY350_draft_kv_pool_sized_before_swa_split as HY350
from specguard.rules.hybrid import HY360_kda_flashinfer_tree_verify as HY360
from specguard.rules.hybrid import HY364_replayssm_spec_fold_on_non_kda_target as HY364
from specguard.rules.hybrid import HY370_mamba_no_buffer_overlap_schedule as HY370
from specguard.rules.hybrid import HY371_gdn_flashinfer_verify_sm100 as HY371
from specguard.rules.hybrid import (
         HY374_mamba_track_interval_below_draft_tokens as HY374,
)
from specguard.rules.hybrid import (
         HY434_dsv4_verify_extend_lens_buffer_1025 as HY434,
)
from specguard.rules.hybrid import (
         HY446_dflash_mamba_lazy_buffer_refused as HY446,
)
from specguard.rules.hybrid import (
    HY455_dspark_hybrid_target_state_not_committed as HY455,
)
from specguard.rules.hybrid import (
         HY460_lightning_hybrid_spec_v2_state_not_committed as HY460,
)
from specguard.rules.hybrid import HY480_replayssm_spec_tree_draft as HY480
from specguard.rules.hybrid import HY481_replayssm_spec_ring_too_short as HY481
from specguard.rules.hybrid import (
    HY557_speculation_turns_off_model_cache_features as HY557,
)
from specguard.rules.hybrid import HY560_replayssm_spec_flag_conflicts as HY560
from specguard.rules.hybrid import (
    HY564_kda_verify_intermediate_states_not_written as HY564,
)
from specguard.rules.hybrid import (
    HY568_linear_flashinfer_verify_sm100_ssm_dtype as HY568,
)
from specguard.rules.hybrid import (
    HY590_adaptive_state_overflows_mamba_verify_cache as HY590,
)
from specguard.rules.hybrid import (
    HY614_mamba_lazy_buffer_pd_prefill_refused as HY614,
)
from specguard.rules.hybrid import (
    HY615_mamba_track_skipped_in_spec_prefill_graph as HY615,
)
from specguard.rules.hybrid import (
    HY633_dspark_inkling_conv_commit_without_slots as HY633,
)

RULES = (HY020.RULE, HY021.RULE, HY022.RULE, HY023.RULE, HY024.RULE, HY110.RULE, HY140.RULE, HY200.RULE, HY300.RULE, HY310.RULE, HY311.RULE, HY312.RULE, HY313.RULE, HY314.RULE, HY315.RULE, HY316.RULE,
         HY293.RULE, HY294.RULE, HY360.RULE, HY364.RULE,
         HY370.RULE, HY371.RULE, HY374.RULE,
         HY460.RULE,
         HY480.RULE,
         HY481.RULE,
         HY350.RULE,
         HY434.RULE,
         HY446.RULE,
         HY455.RULE,
         HY557.RULE,
         HY560.RULE,
         HY568.RULE,
         HY564.RULE,
         HY590.RULE,
         HY614.RULE,
         HY615.RULE,
         HY633.RULE)
