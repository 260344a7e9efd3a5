"""HY316 dsa-kpool-verify-on-rocm."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)

# DSA targets whose attention is DeepseekV2AttentionMLA, which builds IndexerKPool when the config's
# index_kpool is above 1 (0.5.20 models/deepseek_v2.py:1753, 1819-1821): DeepSeek-V3/V3.2, GLM-5
# (GlmMoeDsaForCausalLM subclasses DeepseekV2ForCausalLM, glm4_moe.py:1445), GLM-5-Next and LongCat-Flash
# (both import DeepseekV2AttentionMLA), each in is_deepseek_dsa's list (configs/model_config.py:144-163).
KPOOL_ARCHITECTURES = frozenset(
    {
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "GlmMoeDsaForCausalLM",
        "Glm5NextForConditionalGeneration",
        "LongcatFlashForCausalLM",
    }
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    gpu = ctx.env.gpu
    if ctx.algorithm is None or target is None or gpu is None or gpu.platform != "rocm":
        return
    if target.architecture not in KPOOL_ARCHITECTURES or target.index_topk is None:
        return
    if target.index_kpool is None or target.index_kpool <= 1:
        return
    yield RULE.finding(
        f"{target.architecture} with index_kpool {target.index_kpool} and {ctx.algorithm} on {gpu.name} (ROCm) in "
        "SGLang 0.5.20: the pooled DSA indexer verifies drafts on CUDA only, so the first target-verify pass fails "
        '"AssertionError: DSA kpool target_verify is CUDA-only" (at the verify CUDA-graph capture during start, or '
        f"the first request without it). Use SGLang 0.5.21 or later, or serve without {ctx.flag('--speculative-algorithm')}",
        flags=("--model-path", "--speculative-algorithm"),
    )


GLM5_KPOOL_MTP = (
    "--model-path",
    "/ckpt/glm-dsa-kpool",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
)
KPOOL_FACTS = {
    "architectures": ("GlmMoeDsaForCausalLM",),
    "index_topk": 2048,
    "index_kpool": 4,
    "num_nextn_predict_layers": 1,
}

RULE = Rule(
    check=check,
    code="HY316",
    category=Category.START,
    name="dsa-kpool-verify-on-rocm",
    summary="A DSA target with index_kpool > 1 verifying drafts on ROCm hits a CUDA-only assert (0.5.20)",
    severity=Severity.ERROR,
    sglang_versions="==0.5.20",
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="A DeepSeek sparse-attention target (DeepSeek-V3.2, GLM-5, GLM-5-Next, LongCat-Flash classes, with "
        "`index_topk`) whose config.json sets `index_kpool` above 1, with any `--speculative-algorithm`, on an AMD "
        "(ROCm) GPU, SGLang 0.5.20.",
        why="0.5.20 introduces the pooled indexer: `get_dsa_index_kpool` reads config.json's `index_kpool` "
        "(configs/model_config.py:353-354) and the DSA attention builds `IndexerKPool` when it is above 1 "
        "(models/deepseek_v2.py:1819-1821). On ROCm the op's `forward_hip` is `forward_cuda` "
        "(layers/utils/multi_platform.py:46-47), whose target-verify and draft-extend-v2 branch "
        '(`_forward_cuda_impl`, dsa_indexer_kpool.py:1393, 1440-1443) asserts `is_cuda()` with "DSA kpool target_verify is CUDA-only" '
        '(:1291). 0.5.21 accepts ROCm ("DSA kpool target_verify needs CUDA or ROCm", dsa_indexer_kpool.py:1557). '
        "0.5.19 has no `index_kpool` anywhere.",
        fix="Upgrade to SGLang 0.5.21 or later, or serve without speculative decoding.",
        fix_safety="No fix: changing the release or dropping speculation is the user's choice.",
    ),
    bad=Example(
        argv=GLM5_KPOOL_MTP, target=KPOOL_FACTS, gpu="MI300X", sglang_version="0.5.20"
    ),
    good=Example(
        argv=GLM5_KPOOL_MTP, target=KPOOL_FACTS, gpu="MI300X", sglang_version="0.5.21"
    ),
    sources=(
        "sglang 0.5.19: python/sglang/srt (no index_kpool)",
        (
            "sglang 0.5.20: python/sglang/srt/configs/model_config.py:144-163,353-354; models/deepseek_v2.py:1753,"
            "1819-1821; layers/utils/multi_platform.py:46-47; layers/attention/dsa/dsa_indexer_kpool.py:1291,1393,1440-1443"
        ),
        "sglang 0.5.21: python/sglang/srt/layers/attention/dsa/dsa_indexer_kpool.py:1557",
    ),
    log_signatures=(r"DSA kpool target_verify is CUDA-only",),
)
