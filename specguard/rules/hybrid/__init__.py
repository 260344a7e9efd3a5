"""HY: hybrid targets (mamba / linear-attention state, sliding-window attention) under speculative decoding."""

from specguard.rules.hybrid import HY020_mamba_no_buffer_radix_speculative as HY020

RULES = (HY020.RULE,)
