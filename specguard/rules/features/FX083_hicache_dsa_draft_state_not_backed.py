"""FX083 hicache-dsa-draft-state-not-backed."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs
from specguard.sglang_facts.architectures import DSA_ARCHITECTURES

HICACHE = "--enable-hierarchical-cache"
# 0.5.11 backs the draft's own KV pool up with the target's (sglang#21125; before it FX081 speaks), but on
# DSA targets the built-in MTP draft also keeps a DSA indexer cache in its own device pool, which HiCache
# still left behind. sglang#30393 packs those draft buffers as tail layers of the target's host pool, first
# shipped in 0.5.18 (mem_cache/hybrid_cache/hybrid_pool_assembler.py:898-918, `mtp_draft_device_pools`;
# absent from 0.5.15, 0.5.16 and 0.5.17).


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.spec.has(HICACHE) or ctx.algorithm != "EAGLE" or ctx.target is None:
        return
    if ctx.target.architecture not in DSA_ARCHITECTURES:
        return
    yield RULE.finding(
        f"{ctx.flag(HICACHE)} with EAGLE/MTP on a DSA target ({ctx.target.architecture}) in SGLang {ctx.version}: "
        "HiCache backs up and loads back the target's KV and indexer cache but not the MTP draft's indexer "
        "cache, so after a prefix comes back from host memory or L3 the draft drafts from stale state and the "
        "accept length collapses (sglang#32176, #31600; fixed in 0.5.18 by sglang#30393). Upgrade, or serve "
        "without HiCache while speculating",
        flags=(HICACHE,),
    )


RULE = Rule(
    check=check,
    code="FX083",
    category=Category.PERF,
    name="hicache-dsa-draft-state-not-backed",
    summary="HiCache with the built-in MTP draft of a DSA model (DeepSeek-V3.2, GLM-5.x) before 0.5.18",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="`--enable-hierarchical-cache` with EAGLE/NEXTN on a DeepseekV32ForCausalLM or GlmMoeDsaForCausalLM "
        "target, in 0.5.11 to 0.5.17 (earlier releases: FX081).",
        why="The MTP draft of a DSA model keeps KV and a DSA indexer cache in device pools of its own. 0.5.11 "
        "(sglang#21125) paired the draft's KV pool with HiCache, but the draft's indexer state stayed out of "
        "the host pool: 'If HiCache restores only the target pools, the prefix can report a cache hit while the "
        "draft-side state is missing ... This can reduce speculative acceptance after an L2/L3 replay' "
        "(sglang#30393). Reported on 0.5.15.post1 with GLM-5.2 (accept length 4.49 to 1.59 after host "
        "load-back, sglang#32176) and with Mooncake L3 (accept rate 0.98 to 0.10 on a store hit, sglang#31600). "
        "0.5.18 packs the draft buffers into the target host pool (hybrid_pool_assembler.py:898-918).",
        fix="Upgrade to 0.5.18 or later, or serve without HiCache while speculating.",
        fix_safety="No automatic fix: dropping HiCache changes cache capacity and TTFT.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "zai-org/GLM-5.2-FP8",
            "--tp",
            "8",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
            HICACHE,
        ),
        target={
            "architectures": ("GlmMoeDsaForCausalLM",),
            "num_nextn_predict_layers": 1,
        },
        sglang_version="0.5.15.post1",
    ),
    good=Example(
        argv=(
            "--model-path",
            "zai-org/GLM-5.2-FP8",
            "--tp",
            "8",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
            HICACHE,
        ),
        target={
            "architectures": ("GlmMoeDsaForCausalLM",),
            "num_nextn_predict_layers": 1,
        },
        sglang_version="0.5.18",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/pull/30393",
        "https://github.com/sgl-project/sglang/issues/32176",
        "https://github.com/sgl-project/sglang/issues/31600",
        "https://github.com/sgl-project/sglang/issues/28771",
        "sglang 0.5.18: python/sglang/srt/mem_cache/hybrid_cache/hybrid_pool_assembler.py:898-918",
        "sglang 0.5.17: python/sglang/srt/configs/model_config.py:106-121",
    ),
    sglang_versions=">=0.5.11,<0.5.18",
)
