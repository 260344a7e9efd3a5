"""Whether SGLang runs the overlap scheduler (SpecV2) and mixed chunked prefill for a speculative
launch (P33, P34; the SpecV2 timeline is in ``sglang_facts.changes``, ``SPEC_V2_ENV_ADDED*``)."""

from __future__ import annotations

from packaging.version import Version

from specguard.models import Environment
from specguard.sglang_facts.algorithms import (
    EAGLE_WORKER_SPELLINGS,
    MIXED_CHUNK_OFF_ALGORITHMS,
)
from specguard.sglang_facts.changes import (
    DFLASH_KEEPS_OVERLAP,
    FROZEN_KV_MTP_OVERLAP,
    MIXED_CHUNK_OFF_BEFORE_PER_ALGORITHM,
    MIXED_CHUNK_PER_ALGORITHM,
    NGRAM_KEEPS_OVERLAP,
    SPEC_V2_ALWAYS,
    SPEC_V2_DEFAULT_ON,
    SPEC_V2_ENV_ADDED,
    SPEC_V2_ENV_FORCES_OVERLAP,
    SPEC_V2_ENV_REMOVED,
    as_of,
    spec_v2_algorithms,
)
from specguard.spec import LaunchSpec


def mixed_chunk_unsupported(algorithm: str | None, env: Environment) -> bool:
    if algorithm in MIXED_CHUNK_OFF_ALGORITHMS:
        return True
    return not MIXED_CHUNK_PER_ALGORITHM.present_in(env.version) and algorithm in (
        EAGLE_WORKER_SPELLINGS | MIXED_CHUNK_OFF_BEFORE_PER_ALGORITHM
    )


def spec_v2_env_overrides_overlap_flag(spec: LaunchSpec, algorithm: str | None, version: Version) -> bool:
    """Whether SGLANG_ENABLE_SPEC_V2=1 keeps the overlap scheduler on whatever --disable-overlap-schedule
    says: while SpecV2 is opt-in, SGLang sets disable_overlap_schedule back to False for the algorithms of
    ``SPEC_V2_ENV_FORCES_OVERLAP`` (EAGLE alone before 0.5.7); 0.5.11 keeps the flag."""
    if not SPEC_V2_ENV_ADDED.present_in(version) or SPEC_V2_DEFAULT_ON.present_in(version):
        return False
    return algorithm in as_of(SPEC_V2_ENV_FORCES_OVERLAP, version, frozenset({"EAGLE"})) and spec.env_flag("SGLANG_ENABLE_SPEC_V2")


def overlap_forced_off(spec: LaunchSpec, algorithm: str | None, topk: int | None, env: Environment) -> bool:
    """Whether SGLang turns the overlap scheduler off (P33, P34, and SpecV2's history)."""
    if (spec.get("pp_size") or 1) > 1:
        return True
    if spec.get("device") == "cpu" and algorithm in (EAGLE_WORKER_SPELLINGS | {"NGRAM"}):
        return True
    version = env.version
    if algorithm == "NGRAM":
        return not NGRAM_KEEPS_OVERLAP.present_in(version)
    if algorithm == "FROZEN_KV_MTP":
        return not FROZEN_KV_MTP_OVERLAP.present_in(version)
    if algorithm == "DFLASH":
        return not DFLASH_KEEPS_OVERLAP.present_in(version)
    if algorithm not in EAGLE_WORKER_SPELLINGS:
        return False
    return _spec_v2_off(spec, algorithm, version)


def _spec_v2_off(spec: LaunchSpec, algorithm: str, version: Version) -> bool:
    """The EAGLE family: whether this release runs the V1 worker (no overlap) for the launch."""
    if SPEC_V2_ENV_REMOVED.present_in(version):
        return False
    variable = spec.env_value("SGLANG_ENABLE_SPEC_V2")
    if SPEC_V2_ALWAYS.present_in(version):
        return variable is not None and not spec.env_flag("SGLANG_ENABLE_SPEC_V2")
    if not SPEC_V2_ENV_ADDED.present_in(version) or algorithm not in spec_v2_algorithms(version):
        return True
    explicit_topk = spec.get("speculative_eagle_topk")
    if SPEC_V2_DEFAULT_ON.present_in(version):
        enabled = variable is None or spec.env_flag("SGLANG_ENABLE_SPEC_V2")
        return not enabled or (explicit_topk is not None and explicit_topk > 1)
    return not spec.env_flag("SGLANG_ENABLE_SPEC_V2")
