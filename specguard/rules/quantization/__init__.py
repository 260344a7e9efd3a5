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
from specguard.rules.quantization import (
    QT435_fp4_deepseek_nextn_bf16_moe_on_deepep as QT435,
)
from specguard.rules.quantization import (
    QT462_qwen35_quark_bf16_mtp_built_quantized as QT462,
)
from specguard.rules.quantization import (
    QT465_qwen35_mixed_precision_quantized_mtp_built_bf16 as QT465,
)
from specguard.rules.quantization import (
    QT501_cutlass_moe_env_without_fp8_quantization as QT501,
)
from specguard.rules.quantization import QT556_fp4_deepseek_nextn_built_fp4 as QT556
from specguard.rules.quantization import (
    QT561_qwen35_quark_partial_mtp_exclude_built_bf16 as QT561,
)
from specguard.rules.quantization import (
    QT646_glm5_dsa_quark_bf16_mtp_built_quantized as QT646,
)
from specguard.rules.quantization import (
    QT647_glm5_next_ignored_mtp_modules_built_quantized as QT647,
)

RULES = (
    QT040.RULE,
    QT041.RULE,
    QT080.RULE,
    QT081.RULE,
    QT305.RULE,
    QT435.RULE,
    QT462.RULE,
    QT465.RULE,
    QT501.RULE,
    QT556.RULE,
    QT561.RULE,
    QT646.RULE,
    QT647.RULE,
)
