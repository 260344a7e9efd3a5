"""FX: speculative decoding meeting other server features (metrics, HiCache, structured output, ...)."""

from specguard.rules.features import (
    FX080_expert_distribution_metrics_draft_capture as FX080,
)
from specguard.rules.features import FX081_hicache_draft_kv_not_backed as FX081
from specguard.rules.features import FX082_ngram_grammar_without_vocab_mask as FX082

RULES = (FX080.RULE, FX081.RULE, FX082.RULE)
