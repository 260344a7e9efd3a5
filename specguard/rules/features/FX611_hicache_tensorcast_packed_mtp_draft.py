"""FX611 hicache-tensorcast-packed-mtp-draft."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.features.FX610_hicache_mxfp8_host_pool_packed_mtp_draft import (
    host_layout,
    packs_mtp_draft,
)
from specguard.sglang_facts.architectures import DSV4_ARCHITECTURES

HICACHE = "--enable-hierarchical-cache"
STORAGE = "--hicache-storage-backend"
EXTRA_CONFIG = "--hicache-storage-backend-extra-config"
TENSORCAST = "tensorcast"
# TensorCast FULL v1 takes these host layouts and refuses the others first (0.5.21 tensorcast_store.py:57, 487-491).
TENSORCAST_LAYOUTS = ("page_first", "page_first_direct")
# The MTP draft pools a hybrid sliding-window target packs go to its SWA host pool, not to the anchor pool the
# storage backend validates (0.5.21 mem_cache/hybrid_cache/hybrid_pool_assembler.py:303-360, 455-470); the rule
# follows only the targets whose anchor host pool carries them (plain, mamba-hybrid and DSA stacks: :227-245,
# :1118-1160, :1348-1380). These are the MTP-capable classes of SGLang's is_hybrid_swa_model
# (0.5.21 configs/model_config.py:2454-2494), DeepSeek-V4 (its own stack) aside.
HYBRID_SWA_MTP_TARGETS = frozenset(
    {
        "MiMoV2ForCausalLM",
        "MiMoV2FlashForCausalLM",
        "Step3p5ForCausalLM",
        "Step3p7ForConditionalGeneration",
        "InklingForConditionalGeneration",
        "IQuestQ1ForCausalLM",
    }
)
# What SGLang raises (0.5.21 mem_cache/storage/tensorcast_store/tensorcast_store.py:492-495):
#   NotImplementedError: TensorCast FULL v1 does not support packed MTP draft pools


def _anchor_carries_draft(ctx: CheckContext) -> bool:
    target = ctx.target
    if target is None or target.architecture is None:
        return False
    return (
        target.architecture not in HYBRID_SWA_MTP_TARGETS
        and target.architecture not in DSV4_ARCHITECTURES
        and not target.is_hybrid_swa
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        not ctx.spec.has(HICACHE)
        or ctx.spec.last_value(STORAGE) != TENSORCAST
        or not packs_mtp_draft(ctx)
    ):
        return
    if not ctx.spec.has(EXTRA_CONFIG):
        return  # refused first: 'TensorCast HiCache configuration requires a 'tensorcast' object'
    if ctx.spec.last_value("--kv-cache-dtype") == "mxfp8" or ctx.spec.has(
        "--enable-unified-memory"
    ):
        return  # another host pool class (refused by type first, or FX610) / the draft is fused, not packed
    if host_layout(ctx) not in TENSORCAST_LAYOUTS or not _anchor_carries_draft(ctx):
        return
    yield RULE.finding(
        f"{ctx.flag(STORAGE)} tensorcast with the target's MTP layers as the draft (EAGLE/NEXTN) in SGLang "
        f"{ctx.version}: HiCache packs the draft's KV into the target's host pool, and TensorCast refuses that pool "
        "when it registers it: 'NotImplementedError: TensorCast FULL v1 does not support packed MTP draft pools', "
        f"so the server does not start. Use another {ctx.flag(STORAGE)} or serve without speculation",
        flags=(STORAGE, HICACHE, "--speculative-algorithm"),
    )


_DEEPSEEK_V3_NEXTN_TENSORCAST = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp",
    "8",
    "--speculative-algorithm",
    "NEXTN",
    HICACHE,
    EXTRA_CONFIG,
    '{"tensorcast": {"daemon_address": "127.0.0.1:7000"}}',
    STORAGE,
)
_DEEPSEEK_V3 = {
    "architectures": ("DeepseekV3ForCausalLM",),
    "num_nextn_predict_layers": 1,
    "kv_lora_rank": 512,
}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="FX611",
    category=Category.START,
    name="hicache-tensorcast-packed-mtp-draft",
    summary="The TensorCast HiCache storage backend refuses the target's MTP draft layers at start-up (0.5.21+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--enable-hierarchical-cache --hicache-storage-backend tensorcast` (with its "
        "`--hicache-storage-backend-extra-config`) while the target's MTP layers draft (EAGLE/NEXTN, not EAGLE3: a "
        "draft config with `num_nextn_predict_layers`, or one SGLang rewrites to a one-layer MTP class), on a "
        "target whose HiCache anchor pool carries the draft (not a hybrid sliding-window target, not DeepSeek-V4), "
        "with a page-first host layout (the default), SGLang 0.5.21 or later.",
        why="With HiCache on, an MTP draft's KV pools are packed as tail layers of the target's host pool "
        "(0.5.21 speculative/base_spec_worker.py:37-53, 253-293; mem_cache/hybrid_cache/hybrid_pool_assembler.py:"
        "141-158, 227-245). When the storage backend attaches, the controller registers that anchor host pool "
        "(hybrid_cache_controller.py:245; managers/cache_controller.py:565-567), and TensorCast, new in 0.5.21 "
        "(storage/backend_factory.py:264-266), checks the pool type and layout and then raises 'TensorCast FULL v1 "
        "does not support packed MTP draft pools' (storage/tensorcast_store/tensorcast_store.py:445-495). 0.5.22 "
        "has the same check (:492-495); 0.5.23 tests the packed layers by layer count (:492-495). 0.5.20 has no "
        "TensorCast backend.",
        fix="Use another HiCache storage backend, or no storage backend, while drafting with MTP layers.",
        fix_safety="No automatic fix: the storage backend is a deployment choice.",
    ),
    bad=Example(
        argv=(*_DEEPSEEK_V3_NEXTN_TENSORCAST, TENSORCAST),
        target=_DEEPSEEK_V3,
        sglang_version="0.5.21",
    ),
    good=Example(
        argv=(*_DEEPSEEK_V3_NEXTN_TENSORCAST, "file"),
        target=_DEEPSEEK_V3,
        sglang_version="0.5.21",
    ),
    sources=(
        "sglang 0.5.20: python/sglang/srt/mem_cache/storage/backend_factory.py (no tensorcast backend)",
        "sglang 0.5.21: python/sglang/srt/mem_cache/storage/tensorcast_store/tensorcast_store.py:57,125-160,445-495",
        "sglang 0.5.21: python/sglang/srt/mem_cache/storage/backend_factory.py:264-266",
        "sglang 0.5.21: python/sglang/srt/speculative/base_spec_worker.py:37-53,253-293",
        "sglang 0.5.21: python/sglang/srt/mem_cache/hybrid_cache/hybrid_pool_assembler.py:141-158,227-245,303-360",
        "sglang 0.5.22: python/sglang/srt/mem_cache/storage/tensorcast_store/tensorcast_store.py:492-495",
        "sglang 0.5.23: python/sglang/srt/mem_cache/storage/tensorcast_store/tensorcast_store.py:492-495",
    ),
    sglang_versions=">=0.5.21",
    log_signatures=(r"TensorCast FULL v1 does not support packed MTP draft pools",),
)
