"""What `--enable-unified-memory` (one KV pool the target and a fused draft share, new in 0.5.15) takes
by release: MM174 refuses the rest, AB490, MM491 and MM492 judge the launches it takes."""

from __future__ import annotations

from packaging.version import Version

from specguard.sglang_facts.algorithms import (
    EAGLE_WORKER_ALGORITHMS,
    UNIFIED_MEMORY_ALGORITHMS,
)
from specguard.sglang_facts.changes import (
    UNIFIED_MEMORY_DSPARK,
    UNIFIED_MEMORY_EAGLE_DFLASH,
    Change,
    as_of,
)

UNIFIED = "--enable-unified-memory"

# The algorithms the unified pool takes, newest first (the flag is new in 0.5.15, which took none).
ALGORITHMS: tuple[tuple[Change, tuple[str, ...]], ...] = (
    (UNIFIED_MEMORY_EAGLE_DFLASH, UNIFIED_MEMORY_ALGORITHMS),
    (UNIFIED_MEMORY_DSPARK, ("DSPARK",)),
)
# DFLASH and DSPARK force topk 1 in their handlers, which run first (0.5.22 arg_groups/pipeline.py:294
# before :326), so only the EAGLE family can still bring a draft tree to the unified pool.
TREE_CAPABLE = frozenset(UNIFIED_MEMORY_ALGORITHMS) & EAGLE_WORKER_ALGORITHMS


def allowed_algorithms(version: Version) -> tuple[str, ...]:
    return as_of(ALGORITHMS, version, before=())
