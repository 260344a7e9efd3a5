"""What every resolution step shares: the canonical algorithm name and the algorithm sets it tests."""

from __future__ import annotations

from specguard.models import ModelFacts
from specguard.sglang_facts.algorithms import MAX_RUNNING_REQUESTS_RESET_SPELLINGS

# The algorithms whose unset --max-running-requests SGLang resets for speculative decoding.
MAX_RUNNING_REQUESTS_RESET_ALGORITHMS = MAX_RUNNING_REQUESTS_RESET_SPELLINGS


def canonical_algorithm(raw: str | None) -> str | None:
    """P05/P06: upper-cased, and NEXTN is EAGLE."""
    if raw is None:
        return None
    upper = raw.upper()
    return "EAGLE" if upper == "NEXTN" else upper


def is_mla(target: ModelFacts | None) -> bool:
    return target is not None and target.kv_lora_rank is not None
