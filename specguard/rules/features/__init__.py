"""FX: speculative decoding meeting other server features (metrics, HiCache, ...)."""

from specguard.rules.features import FX080_expert_distribution_metrics_draft_capture as FX080
from specguard.rules.features import FX081_hicache_draft_kv_not_backed as FX081

RULES = (FX080.RULE, FX081.RULE)
