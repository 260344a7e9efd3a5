"""FX610 hicache-mxfp8-host-pool-packed-mtp-draft."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import mla_of, page_size
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.draft_model._common import (
    MTP_REWRITE_FORCES_ONE_LAYER,
    draft_config,
)
from specguard.sglang_facts.changes import Change

HICACHE = "--enable-hierarchical-cache"
KV_DTYPE = "--kv-cache-dtype"
LAYOUT = "--hicache-mem-layout"
IO_BACKEND = "--hicache-io-backend"
STORAGE = "--hicache-storage-backend"
# 0.5.21 adds the MXFP8 host pool and its refusal of packed MTP draft layers; 0.5.20 backs an MXFP8 device pool up
# with the plain MHA host pool (pool_host/mha.py:1415-1423), MTP layers included.
MXFP8_HOST_POOL = Change(
    "0.5.21",
    "0.5.21 mem_cache/pool_host/mha_mxfp8.py:55-62, pool_host/mha.py:1510-1528 (0.5.20 pool_host/mha.py:1415-1423 has no MXFP8 host pool)",
)
# From 0.5.23 the MXFP8 host pool is picked only for the interleaved scale layout, which the device pool keeps at page
# size 128 (memory_pool.py:3918; pool_host/mha.py:1684-1696); other page sizes reach the plain MHA host pool, which
# refuses MXFP8 scales for another reason (:160-170).
MXFP8_HOST_POOL_ONLY_INTERLEAVED = Change(
    "0.5.23",
    "0.5.23 mem_cache/pool_host/mha.py:1684-1696 picks the MXFP8 host pool only for MXFP8_INTERLEAVED scales",
)
INTERLEAVED_PAGE_SIZE = 128
# Unified memory fuses the draft's layers into the target's page envelopes instead of packing them (0.5.23
# speculative/base_spec_worker.py:285-301), and its host pools are not read for 0.5.21-0.5.22: the rule stays out.
UNIFIED_MEMORY = "--enable-unified-memory"
# What SGLang raises (0.5.21 mem_cache/pool_host/mha_mxfp8.py:59-62):
#   NotImplementedError: MXFP8 KV host pool does not pack MTP draft KV layers.


def packs_mtp_draft(ctx: CheckContext) -> bool:
    """Whether the draft worker packs its KV into the target's HiCache host pool: SGLang's _can_pack_hicache_mtp
    (0.5.21 speculative/base_spec_worker.py:37-53), EAGLE/NEXTN (not EAGLE3) whose draft config has
    num_nextn_predict_layers after the draft rewrites (configs/model_config.py:849-1031). False when unknown."""
    if ctx.algorithm != "EAGLE":
        return False
    draft = draft_config(ctx)
    if draft is None or draft.architecture is None:
        return False
    return draft.architecture in MTP_REWRITE_FORCES_ONE_LAYER or bool(
        draft.num_nextn_predict_layers
    )


def host_layout(ctx: CheckContext) -> str:
    """The HiCache host layout after SGLang's normalisation (0.5.21 arg_groups/hicache_hook.py:153-203): page_first
    by default (arg_groups/fields/memory.py:133-145), page_first_direct with the direct I/O backend, and mooncake
    storage turns layer_first into a page-first layout."""
    layout = ctx.spec.last_value(LAYOUT) or "page_first"
    io_backend = ctx.spec.last_value(IO_BACKEND) or "kernel"
    if layout == "layer_first" and ctx.spec.last_value(STORAGE) in (
        "mooncake",
        "npu_memcache",
    ):
        layout = {"direct": "page_first_direct", "kernel": "page_first"}.get(
            io_backend, layout
        )
    if layout == "page_first" and io_backend == "direct":
        return "page_first_direct"
    return layout


def _reaches_mtp_check(ctx: CheckContext) -> bool:
    """The MXFP8 host pool is built and gets past its own earlier checks (layout, K/V widths)."""
    target = ctx.target
    if target is None or mla_of(target) is not False:
        return False  # the MXFP8 pool is the MHA pool's (kv_cache_configurator.py:1912-1917, 1961-1965)
    if (
        target.v_head_dim is not None
        and target.head_dim is not None
        and target.v_head_dim != target.head_dim
    ):
        return False  # refused first: 'MXFP8 HiCache does not support asymmetric K/V head dimensions yet.'
    if host_layout(ctx) != "page_first":
        return False  # refused first: 'MXFP8 KV host pool supports only the page_first layout'
    if ctx.spec.has(UNIFIED_MEMORY):
        return False
    if MXFP8_HOST_POOL_ONLY_INTERLEAVED.present_in(ctx.version):
        return page_size(ctx) == INTERLEAVED_PAGE_SIZE
    return True


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.spec.last_value(KV_DTYPE) != "mxfp8"
        or not ctx.spec.has(HICACHE)
        or not packs_mtp_draft(ctx)
    ):
        return
    gpu = ctx.env.gpu
    if gpu is not None and gpu.sm is not None and gpu.sm < 100:
        return  # --kv-cache-dtype mxfp8 is refused before Blackwell (arg_groups/kv_cache_hook.py:100-109)
    if not _reaches_mtp_check(ctx):
        return
    yield RULE.finding(
        f"{ctx.flag(KV_DTYPE)} mxfp8 with {ctx.flag(HICACHE)} and the target's MTP layers as the draft "
        f"(EAGLE/NEXTN) in SGLang {ctx.version}: the draft's KV is packed into the target's HiCache host pool, and "
        "the MXFP8 host pool raises 'NotImplementedError: MXFP8 KV host pool does not pack MTP draft KV layers.' "
        f"while the cache is built, so the server does not start. Drop {ctx.flag(HICACHE)} or serve the KV cache in "
        "another dtype",
        flags=(KV_DTYPE, HICACHE, "--speculative-algorithm"),
    )


_GLM45_AIR_MTP_MXFP8 = (
    "--model-path",
    "zai-org/GLM-4.5-Air",
    "--tp",
    "4",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    KV_DTYPE,
    "mxfp8",
    "--page-size",
    "128",
)
_GLM45_AIR = {"architectures": ("Glm4MoeForCausalLM",), "num_nextn_predict_layers": 1}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="FX610",
    category=Category.START,
    name="hicache-mxfp8-host-pool-packed-mtp-draft",
    summary="HiCache with an MXFP8 KV cache refuses the target's MTP draft layers at start-up (0.5.21+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--kv-cache-dtype mxfp8` with `--enable-hierarchical-cache` on an MHA target (no `kv_lora_rank`) "
        "whose MTP layers draft (EAGLE/NEXTN, not EAGLE3: a draft config with `num_nextn_predict_layers`, or one "
        "SGLang rewrites to an MTP class with one layer), with the host layout resolving to `page_first` (the "
        "default), without `--enable-unified-memory`, SGLang 0.5.21 or later; from 0.5.23 only at page size 128.",
        why="With HiCache on, the draft worker packs an MTP draft's KV pools into the target's host pool "
        "(`_build_hicache_draft_plan` sets `mtp_draft_device_pools` when `_can_pack_hicache_mtp` holds, 0.5.21 "
        "speculative/base_spec_worker.py:37-53, 253-293), and every HiCache stack hands them to `build_kv_host_pool` "
        "(mem_cache/hybrid_cache/hybrid_pool_assembler.py:141-158, 227-245). For an MXFP8 device pool that builds "
        "`MHATokenToKVPoolMXFP8Host` (pool_host/mha.py:1510-1528), new in 0.5.21, which after its layout check "
        "raises 'MXFP8 KV host pool does not pack MTP draft KV layers.' (pool_host/mha_mxfp8.py:55-62). 0.5.22 is "
        "the same (:55-62); 0.5.23 keeps the refusal (:58-65) but picks the MXFP8 host pool only for the interleaved "
        "scale layout, which the device pool uses at page size 128 (pool_host/mha.py:1684-1696; memory_pool.py:3918). "
        "0.5.20 has no MXFP8 host pool (pool_host/mha.py:1415-1423).",
        fix="Serve without HiCache while drafting with MTP layers, or keep the KV cache in another dtype.",
        fix_safety="No automatic fix: either choice changes cache capacity.",
    ),
    bad=Example(
        argv=(*_GLM45_AIR_MTP_MXFP8, HICACHE),
        target=_GLM45_AIR,
        gpu="B200",
        sglang_version="0.5.21",
    ),
    good=Example(
        argv=_GLM45_AIR_MTP_MXFP8,
        target=_GLM45_AIR,
        gpu="B200",
        sglang_version="0.5.21",
    ),
    sources=(
        "sglang 0.5.20: python/sglang/srt/mem_cache/pool_host/mha.py:1415-1423 (no MXFP8 host pool)",
        "sglang 0.5.21: python/sglang/srt/mem_cache/pool_host/mha_mxfp8.py:55-62; mem_cache/pool_host/mha.py:1510-1528",
        "sglang 0.5.21: python/sglang/srt/speculative/base_spec_worker.py:37-53,253-293",
        "sglang 0.5.21: python/sglang/srt/mem_cache/hybrid_cache/hybrid_pool_assembler.py:141-158,227-245",
        "sglang 0.5.21: python/sglang/srt/arg_groups/hicache_hook.py:153-203; arg_groups/fields/memory.py:133-145",
        "sglang 0.5.23: python/sglang/srt/mem_cache/pool_host/mha_mxfp8.py:58-65; mem_cache/pool_host/mha.py:1684-1696",
    ),
    sglang_versions=">=0.5.21",
    log_signatures=(r"MXFP8 KV host pool does not pack MTP draft KV layers",),
)
