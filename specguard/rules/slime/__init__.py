"""SL: slime rollouts (--sglang-* flags) on SGLang."""

from specguard.rules.slime import SL001_sglang_flag_slime_drops as SL001
from specguard.rules.slime import SL002_draft_context_caps_rollout as SL002
from specguard.rules.slime import SL003_unknown_sglang_flag as SL003
from specguard.rules.slime import SL004_dp_size_without_dp_attention as SL004
from specguard.rules.slime import SL005_misspelled_slime_flag as SL005
from specguard.rules.slime import SL080_draft_weights_lost_on_rollout_offload as SL080
from specguard.rules.slime import SL552_ngram_weight_sync_without_worker_method as SL552
from specguard.rules.slime import SL553_mtp_weight_sync_skips_draft as SL553

RULES = (SL001.RULE, SL002.RULE, SL003.RULE, SL004.RULE, SL005.RULE, SL080.RULE, SL552.RULE, SL553.RULE)
