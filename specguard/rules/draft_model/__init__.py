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
    DM176.RULE,
    DM177.RULE,
    DM178.RULE,
    DM179.RULE,
)
