"""SP: speculative parameters (steps, topk, draft tokens, SpecV2, algorithm names)."""

RULES = ()
