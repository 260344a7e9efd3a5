"""FX089 hicache-mooncake-standalone-draft-pool."""

from __future__ import annotations

import json
from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B_EAGLE3

HICACHE = "--enable-hierarchical-cache"
BACKEND = "--hicache-storage-backend"
EXTRA_CONFIG = "--hicache-storage-backend-extra-config"
# Read by MooncakeStoreConfig.load_from_env, the path taken when no extra config is given.
STANDALONE_ENV = "MOONCAKE_STANDALONE_STORAGE"


def _standalone_storage(ctx: CheckContext) -> bool:
    """Whether Mooncake runs as a dummy client of a standalone real client (unknown reads as no)."""
    item = ctx.spec.item(EXTRA_CONFIG)
    if item is None or not item.values:
        return ctx.spec.env_flag(STANDALONE_ENV)
    try:
        config = json.loads(item.values[-1])
    except ValueError:
        return False  # a file path or unparsable text: the value is unknown
    return isinstance(config, dict) and config.get("standalone_storage") is True


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm in (None, "NGRAM") or not ctx.spec.has(HICACHE):
        return
    backend = ctx.spec.item(BACKEND)
    if backend is None or not backend.values or backend.values[-1] != "mooncake" or not _standalone_storage(ctx):
        return
    yield RULE.finding(
        f"{ctx.algorithm} with HiCache on a standalone Mooncake store in SGLang {ctx.version}: start-up registers the "
        "draft's host KV pool with Mooncake, but that pool is allocated outside the shared memory the standalone "
        "client mapped, so register_buffer returns -1 and every scheduler dies with a RuntimeError (sglang#28873). "
        f"Fixed in 0.5.15; otherwise drop standalone_storage from {ctx.flag(EXTRA_CONFIG)} or use 0.5.12",
        flags=(EXTRA_CONFIG, BACKEND),
    )


RULE = Rule(
    check=check,
    code="FX089",
    category=Category.START,
    name="hicache-mooncake-standalone-draft-pool",
    summary="HiCache on a standalone Mooncake store with a draft model fails to start in 0.5.13-0.5.14",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="A speculative algorithm with a draft KV pool (all but NGRAM), `--enable-hierarchical-cache`, "
        "`--hicache-storage-backend mooncake` and `standalone_storage: true` in "
        "`--hicache-storage-backend-extra-config` (or `MOONCAKE_STANDALONE_STORAGE` without an extra config), "
        "SGLang 0.5.13 and 0.5.14.",
        why="0.5.13 registers the draft KV pool with HiCache at start-up (mem_cache/kv_cache_builder.py:72-125, "
        "called from managers/scheduler.py:490) and, for Mooncake, with the store "
        "(managers/cache_controller.py:883-893 `register_mem_host_pool_v2`). The draft host pool is built without "
        "the target's `allocator_type`, so in standalone mode (a dummy client of a separate mooncake_client "
        "process, mooncake_store.py:398-410) its buffer lies outside the segment that process mapped: "
        "`register_buffer` returns -1 and `MooncakeBaseStore.register_buffer` raises (mooncake_store.py:289-299), "
        "taking every scheduler down (sglang#28873, Qwen3.5-397B-A17B-FP8 with EAGLE on 8xH100; 0.5.12 starts). "
        "sglang#29823 passes `allocator_type=server_args.hicache_storage_backend` to the draft host pool, first "
        "in 0.5.15 (kv_cache_builder.py:103-110).",
        fix="Upgrade to 0.5.15 or later, or run Mooncake without `standalone_storage`, or stay on 0.5.12.",
        fix_safety="No automatic fix: leaving standalone mode needs a Mooncake master address the launch does not have.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, HICACHE, BACKEND, "mooncake", EXTRA_CONFIG,
              '{"standalone_storage": true, "client_server_address": "127.0.0.1:50052"}'),
        sglang_version="0.5.13",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, HICACHE, BACKEND, "mooncake", EXTRA_CONFIG,
              '{"standalone_storage": true, "client_server_address": "127.0.0.1:50052"}'),
        sglang_version="0.5.15",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/28873",
        "https://github.com/kvcache-ai/Mooncake/issues/2501",
        "https://github.com/sgl-project/sglang/pull/29823",
        "sglang 0.5.13: python/sglang/srt/mem_cache/kv_cache_builder.py:72-125",
        "sglang 0.5.13: python/sglang/srt/managers/cache_controller.py:873-893",
        "sglang 0.5.13: python/sglang/srt/mem_cache/storage/mooncake_store/mooncake_store.py:289-299,398-410",
        "sglang 0.5.15: python/sglang/srt/mem_cache/kv_cache_builder.py:103-110",
    ),
    sglang_versions=">=0.5.13,<0.5.15",
    log_signatures=(
        # The draft host pool's registration with the store (0.5.13 cache_controller.py:873-890),
        # whose failure mooncake_store.py raises as "Failed to register buffer to Mooncake Store"
        # (:298); the frame tells the draft's pool from the target's, as the traceback prints it:
        #   File ".../cache_controller.py", line 890, in _maybe_register_draft_with_storage
        r"\b_maybe_register_draft_with_storage\b",
    ),
)
