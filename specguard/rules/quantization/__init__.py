"""QT: quantized targets and drafts (what a target's quantization does to its draft)."""

from specguard.rules.quantization import (
    QT040_target_quantization_forced_on_draft as QT040,
)
from specguard.rules.quantization import (
    QT041_glm_nextn_drops_checkpoint_quantization as QT041,
)
from specguard.rules.quantization import (
    QT080_draft_unquant_overridden_by_checkpoint as QT080,
)
from specguard.rules.quantization import (
    QT081_quantized_dflash_draft_fc_not_loaded as QT081,
)
from specguard.rules.quantization import QT305_minimax_m3_nvfp4_speculation as QT305

RULES = (
    QT040.RULE,
    QT041.RULE,
    QT080.RULE,
    QT081.RULE,
    QT305.RULE,
)
