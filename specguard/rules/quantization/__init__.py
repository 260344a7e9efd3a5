"""QT: quantized targets and drafts (what a target's quantization does to its draft)."""

from specguard.rules.quantization import (
    QT040_target_quantization_forced_on_draft as QT040,
)

RULES = (QT040.RULE,)
