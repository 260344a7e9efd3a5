"""HY: hybrid targets (mamba / linear-attention state, sliding-window attention) under speculative decoding."""

from specguard.rules.hybrid import HY020_mamba_no_buffer_radix_speculative as HY020
from specguard.rules.hybrid import HY021_sliding_window_eagle_backend as HY021
from specguard.rules.hybrid import HY022_gdn_speculative_falls_back_to_triton as HY022
from specguard.rules.hybrid import HY023_swa_triton_verify_mask_offset as HY023
from specguard.rules.hybrid import HY024_mamba_extra_buffer_verify_none_track as HY024
from specguard.rules.hybrid import HY110_gdn_flashinfer_verify_tree_draft as HY110
from specguard.rules.hybrid import HY140_dsv4_draft_tokens_exceed_c4_ring as HY140
from specguard.rules.hybrid import HY200_mamba1_target_speculation as HY200

RULES = (HY020.RULE, HY021.RULE, HY022.RULE, HY023.RULE, HY024.RULE, HY110.RULE, HY140.RULE, HY200.RULE)
