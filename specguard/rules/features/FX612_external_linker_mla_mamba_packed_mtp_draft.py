"""FX612 external-linker-mla-mamba-packed-mtp-draft."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.features.FX361_external_linker_unpacked_draft_kv import (
    BACKEND,
    DIRECT_LINKERS,
    LINKER,
)
from specguard.rules.features.FX610_hicache_mxfp8_host_pool_packed_mtp_draft import (
    packs_mtp_draft,
)
from specguard.sglang_facts.changes import Change

# 0.5.23 lets the direct linkers (mooncake, mori) serve FULL + MAMBA hybrids whose full-attention pool is a plain
# MLATokenToKVPool, but not with packed MTP draft KV (mem_cache/hybrid_cache/linker_pool_assembler.py:555-577);
# 0.5.22 refused every FULL + MAMBA model on the direct linker, with or without a draft
# (hybrid_pool_assembler.py:1717-1731, a StackStrategy without build_direct_linker_pool_group).
LINKER_SERVES_MLA_MAMBA = Change(
    "0.5.23",
    "0.5.23 mem_cache/hybrid_cache/hybrid_pool_assembler.py:2022-2036 _MambaStrategy.build_direct_linker_pool_group; "
    "linker_pool_assembler.py:555-577 (0.5.22 hybrid_pool_assembler.py:1717-1731 refuses the strategy)",
)
# The MLA targets with linear-attention (mamba-state) layers and an MTP draft class: ModelConfig gives them the MLA
# attention arch (0.5.23 configs/model_config.py:1476-1503, 1504-1506), their configs carry recurrent state
# (mem_cache/kv_cache_builder.py:173-183; configs/hybrid_arch.py:46-53, 111-133), so their KV pool is a
# HybridLinearKVPool over an MLATokenToKVPool (kv_cache_configurator.py:2605-2667, 2714-2735), and the draft rewrite
# gives them a NextN class (configs/model_config.py:1119-1127 for Bailing, :1071-1078 for GLM-5-Next).
# A GLM-5-Next config with index_topk is DSA instead (configs/model_config.py:191-212) and is refused with or
# without a draft, so it stays out.
MLA_LINEAR_HYBRID_MTP_TARGETS = frozenset(
    {
        "BailingMoeV2_5ForCausalLM",
        "BailingMoeV3ForCausalLM",
        "Glm5NextForConditionalGeneration",
    }
)
# What SGLang raises (0.5.23 mem_cache/hybrid_cache/linker_pool_assembler.py:573-576):
MESSAGE = (
    "The direct external linker supports FULL + MAMBA models only with a plain MLA pool, without DCP or packed "
    "draft KV."
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.spec.has(LINKER) or not LINKER_SERVES_MLA_MAMBA.present_in(ctx.version):
        return
    target = ctx.target
    if (
        target is None
        or target.architecture not in MLA_LINEAR_HYBRID_MTP_TARGETS
        or target.kv_lora_rank is None
        or target.index_topk is not None
    ):
        return
    if (ctx.spec.last_value(BACKEND) or DIRECT_LINKERS[0]) not in DIRECT_LINKERS:
        return
    dcp = ctx.spec.last_value("--dcp-size")
    if dcp is not None and dcp != "1":
        return  # refused by the same check for DCP, draft or not
    if not packs_mtp_draft(ctx):
        return
    yield RULE.finding(
        f"{ctx.flag(LINKER)} with {target.architecture}'s MTP layers as the draft (EAGLE/NEXTN) in SGLang "
        f"{ctx.version}: the draft's KV is packed with the target's, and the direct linker's FULL + MAMBA pool group "
        f"refuses packed draft KV: 'ValueError: {MESSAGE}' while the radix cache is set up, so the server does not "
        f"start. Drop {ctx.flag(LINKER)} or serve without speculation",
        flags=(LINKER, "--speculative-algorithm"),
        fix=fix_of(
            f"drop {LINKER}", Applicability.UNSAFE, Edit(name=LINKER, value=None)
        ),
    )


_LING_MTP = (
    "--model-path",
    "inclusionAI/Ring-2.5-1T",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "1",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "2",
)
_LING = {
    "architectures": ("BailingMoeV2_5ForCausalLM",),
    "kv_lora_rank": 512,
    "num_nextn_predict_layers": 1,
}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="FX612",
    category=Category.START,
    name="external-linker-mla-mamba-packed-mtp-draft",
    summary="--enable-unified-cache-external-linker on an MLA + linear-attention hybrid refuses its packed MTP draft "
    "at start-up (0.5.23+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--enable-unified-cache-external-linker` with the mooncake or mori linker (the default mooncake) on an "
        "MLA target with linear-attention layers and MTP layers (config.json architectures[0] "
        "BailingMoeV2_5ForCausalLM, BailingMoeV3ForCausalLM, or Glm5NextForConditionalGeneration without index_topk; "
        "kv_lora_rank set) drafting with those layers (EAGLE/NEXTN with num_nextn_predict_layers), SGLang 0.5.23 or "
        "later.",
        why="With the linker on, the draft worker packs an MTP draft's KV with the target's (0.5.23 "
        "speculative/base_spec_worker.py:39-55, 269-330, `mtp_draft_device_pools`). The direct linker builds its pool "
        "group through the hybrid strategy (mem_cache/unified_cache/linker_factory.py:101-119, "
        "storage/mooncake_store/mooncake_direct_linker.py:62); the FULL + MAMBA strategy (hybrid_pool_assembler.py:"
        "2022-2036) accepts only a HybridLinearKVPool over a plain MLATokenToKVPool with no DCP and no packed draft "
        "and otherwise raises 'The direct external linker supports FULL + MAMBA models only with a plain MLA pool, "
        "without DCP or packed draft KV.' (linker_pool_assembler.py:555-577). An MTP draft of these targets is packed "
        "(EAGLE/NEXTN with num_nextn_predict_layers on the draft config; configs/model_config.py:1071-1078, 1119-1127 rewrite the drafts), so the check refuses "
        "it. 0.5.22 refused every FULL + MAMBA model on the direct linker, draft or not (hybrid_pool_assembler.py:"
        "1717-1731).",
        fix="Drop the linker, or serve without speculation (the linker then accepts the plain MLA pool).",
        fix_safety="Unsafe: the prefix cache no longer reaches the external KV store.",
    ),
    bad=Example(argv=(*_LING_MTP, LINKER), target=_LING, sglang_version="0.5.23"),
    good=Example(argv=_LING_MTP, target=_LING, sglang_version="0.5.23"),
    sources=(
        "sglang 0.5.22: python/sglang/srt/mem_cache/hybrid_cache/hybrid_pool_assembler.py:1717-1731",
        "sglang 0.5.23: python/sglang/srt/mem_cache/hybrid_cache/linker_pool_assembler.py:555-577",
        "sglang 0.5.23: python/sglang/srt/mem_cache/hybrid_cache/hybrid_pool_assembler.py:2022-2036",
        "sglang 0.5.23: python/sglang/srt/speculative/base_spec_worker.py:39-55,269-330",
        "sglang 0.5.23: python/sglang/srt/configs/model_config.py:191-212,1071-1078,1119-1127,1476-1506",
        "sglang 0.5.23: python/sglang/srt/mem_cache/kv_cache_configurator.py:2605-2667,2714-2735",
    ),
    sglang_versions=">=0.5.23",
    log_signatures=(
        r"The direct external linker supports FULL \+ MAMBA models only with a plain MLA pool",
    ),
)
