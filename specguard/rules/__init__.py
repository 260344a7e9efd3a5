"""The registry: every rule, listed explicitly, family by family.

Codes are two letters and three digits and are never reused:
DM draft/target pairing, SP speculative parameters, AB attention backend and hardware,
PL parallelism and algorithm constraints, VB version-specific known bugs, SL slime,
JX sgl-jax, MM memory and CUDA graphs, HY hybrid targets (mamba state, sliding windows),
QT quantized targets and drafts, SV how the server is exposed, FX speculative decoding meeting other
server features, RS what SGLang's own resolution will set.
Each family's ``__init__`` lists its rules; this module lists the families.
"""

from __future__ import annotations

from specguard.rules import (
    attention,
    draft_model,
    features,
    hybrid,
    memory,
    parallel,
    quantization,
    resolution,
    serving,
    sgl_jax,
    slime,
    spec_params,
    version_bugs,
)
from specguard.rules.base import Rule

ALL_RULES: tuple[Rule, ...] = (
    *draft_model.RULES,
    *spec_params.RULES,
    *attention.RULES,
    *hybrid.RULES,
    *parallel.RULES,
    *version_bugs.RULES,
    *slime.RULES,
    *sgl_jax.RULES,
    *memory.RULES,
    *quantization.RULES,
    *serving.RULES,
    *resolution.RULES,
    *features.RULES,
)

RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}

if len(RULES_BY_CODE) != len(ALL_RULES):  # pragma: no cover - guards the registry itself
    raise RuntimeError("two rules share a code")
