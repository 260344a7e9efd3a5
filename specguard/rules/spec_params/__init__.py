"""SP: speculative parameters (steps, topk, draft tokens, SpecV2, algorithm names)."""

from specguard.rules.spec_params import SP001_spec_params_partially_set as SP001
from specguard.rules.spec_params import SP002_draft_tokens_rewritten_for_chain as SP002
from specguard.rules.spec_params import SP003_draft_tokens_exceed_tree as SP003
from specguard.rules.spec_params import SP004_spec_v2_env_with_tree as SP004
from specguard.rules.spec_params import SP005_spec_params_out_of_range as SP005
from specguard.rules.spec_params import SP006_spec_flags_without_algorithm as SP006
from specguard.rules.spec_params import SP007_ngram_topk_overridden as SP007
from specguard.rules.spec_params import SP008_adaptive_spec_unsupported as SP008
from specguard.rules.spec_params import SP009_rejection_sampling_unsupported as SP009
from specguard.rules.spec_params import SP010_block_verification_unsupported as SP010
from specguard.rules.spec_params import SP011_draft_window_invalid as SP011
from specguard.rules.spec_params import SP012_ngram_external_corpus_budget as SP012
from specguard.rules.spec_params import SP020_multi_layer_eagle_not_a_chain as SP020
from specguard.rules.spec_params import (
    SP060_ngram_capacity_not_above_trie_depth as SP060,
)
from specguard.rules.spec_params import (
    SP080_rocm_dsa_spec_v2_draft_extend_metadata as SP080,
)
from specguard.rules.spec_params import SP170_uno_launch_refused as SP170
from specguard.rules.spec_params import SP171_dspark_launch_refused as SP171
from specguard.rules.spec_params import SP175_ragged_verify_env_refused as SP175
from specguard.rules.spec_params import (
    SP194_rejection_sampling_multi_layer_eagle as SP194,
)
from specguard.rules.spec_params import SP195_lora_speculative_moe_runner as SP195
from specguard.rules.spec_params import (
    SP196_dp_spec_prefill_coordination_algorithm as SP196,
)
from specguard.rules.spec_params import (
    SP264_auto_spec_params_choice_fails as SP264,
)
from specguard.rules.spec_params import SP281_skip_dp_mlp_sync_without_eagle as SP281
from specguard.rules.spec_params import SP291_standalone_overlap_on_v1_worker as SP291
from specguard.rules.spec_params import (
    SP296_simulated_acceptance_switch_on as SP296,
)
from specguard.rules.spec_params import (
    SP322_inkling_multi_step_draft_without_multi_layer_eagle as SP322,
)
from specguard.rules.spec_params import (
    SP401_multi_layer_eagle_v1_worker_unpack_crash as SP401,
)
from specguard.rules.spec_params import (
    SP403_eagle_single_step_tree_build_crash as SP403,
)
from specguard.rules.spec_params import (
    SP430_speculative_moe_runner_flashinfer_trtllm_refused as SP430,
)
from specguard.rules.spec_params import (
    SP444_dflash_simulated_acceptance_token_mode_invalid as SP444,
)
from specguard.rules.spec_params import (
    SP482_rejection_sampling_reduced_draft_vocab as SP482,
)
from specguard.rules.spec_params import (
    SP485_ngram_prob_match_type_ignored as SP485,
)
from specguard.rules.spec_params import (
    SP487_simulated_acceptance_token_mode_refused as SP487,
)
from specguard.rules.spec_params import (
    SP488_inkling_banded_mtp_without_multi_layer_eagle as SP488,
)
from specguard.rules.spec_params import (
    SP532_adaptive_state_overflows_shared_logits_buffer as SP532,
)
from specguard.rules.spec_params import SP550_paged_tree_topk_reset_to_chain as SP550
from specguard.rules.spec_params import (
    SP551_multi_layer_eagle_v2_hidden_pool_short_row as SP551,
)
from specguard.rules.spec_params import (
    SP558_paged_tree_reset_keeps_tree_draft_tokens as SP558,
)
from specguard.rules.spec_params import (
    SP630_dspark_compact_verify_over_1024_requests as SP630,
)

RULES = (
    SP001.RULE, SP002.RULE, SP003.RULE, SP004.RULE, SP005.RULE, SP006.RULE,
    SP007.RULE, SP008.RULE, SP009.RULE, SP010.RULE, SP011.RULE, SP012.RULE, SP020.RULE,
    SP060.RULE, SP080.RULE,
    SP170.RULE, SP171.RULE, SP175.RULE,
    SP194.RULE, SP195.RULE, SP196.RULE,
    SP264.RULE,
    SP281.RULE,
    SP291.RULE, SP296.RULE,
    SP322.RULE,
    SP401.RULE,
    SP403.RULE,
    SP430.RULE,
    SP444.RULE,
    SP482.RULE,
    SP485.RULE,
    SP487.RULE,
    SP488.RULE,
    SP532.RULE,
    SP550.RULE,
    SP551.RULE,
    SP558.RULE,
    SP630.RULE,
)
