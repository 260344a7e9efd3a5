"""DM569 qwen35-mtp-fused-shared-expert-not-loaded."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, ModelFacts, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.quantization.QT561_qwen35_quark_partial_mtp_exclude_built_bf16 import (
    QWEN35_MOE_MTP_TARGET,
)

AITER = "SGLANG_USE_AITER"
# get_bool_env_var's truthy spellings (0.5.18 utils/common.py:1247-1253).
AITER_ON = ("true", "1")
DISABLE_FUSION = "--disable-shared-experts-fusion"
A2A = "--moe-a2a-backend"


def _fuses_shared_expert(target: ModelFacts) -> bool:
    """can_fuse_shared_expert's config test (0.5.18 models/qwen2_moe.py:141-155): a shared expert as wide as the
    routed ones. A quantized checkpoint is left out: its exclude lists and quant method decide too (:157-170)."""
    shared, routed = (
        target.shared_expert_intermediate_size,
        target.moe_intermediate_size,
    )
    return (
        target.quantization is None
        and shared is not None
        and shared > 0
        and shared == routed
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    target, gpu = ctx.target, ctx.env.gpu
    if (
        ctx.algorithm != "EAGLE"
        or target is None
        or target.architecture != QWEN35_MOE_MTP_TARGET
    ):
        return
    if (
        gpu is None
        or gpu.platform != "rocm"
        or (ctx.spec.env_value(AITER) or "").lower() not in AITER_ON
    ):
        return
    # A typed a2a backend (DeepEP, MoRI, ...) or the opt-out turns the fusion off (:150-153, :253-265).
    if not ctx.drafts_from_target_checkpoint or ctx.spec.has(DISABLE_FUSION):
        return
    if ctx.spec.last_value(A2A) not in (None, "none") or not _fuses_shared_expert(
        target
    ):
        return
    yield RULE.finding(
        f"{AITER}=1 on ROCm with the MTP layer of {target.architecture} in SGLang {ctx.version}: aiter fuses the "
        "shared expert into the MoE as routed expert slot num_experts, and the target's loader maps "
        "mlp.shared_expert.* there, but the MTP draft's loader does not, so it skips those weights ('Parameter ... "
        "not found in params_dict, skip loading') and the draft's fused slot keeps uninitialised memory: its "
        "proposals are mostly rejected (verify keeps the output right). Add "
        f"{ctx.flag(DISABLE_FUSION)}, or use SGLang 0.5.19, which maps them",
        flags=("--speculative-algorithm",),
    )


QWEN35_MOE_MTP_ROCM = (
    "--model-path",
    "Qwen/Qwen3.5-397B-A17B",
    "--tp",
    "8",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)
QWEN35_MOE_FACTS = {
    "architectures": (QWEN35_MOE_MTP_TARGET,),
    "moe_intermediate_size": 1024,
    "shared_expert_intermediate_size": 1024,
}

RULE = Rule(
    check=check,
    code="DM569",
    category=Category.PERF,
    name="qwen35-mtp-fused-shared-expert-not-loaded",
    summary="With aiter on ROCm, a Qwen3.5 MoE MTP draft leaves its fused shared expert unloaded and drafts poorly "
    "(0.5.11 to 0.5.18)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE/NEXTN drafting from the own MTP layer of a Qwen3_5MoeForConditionalGeneration target on a ROCm "
        "GPU with `SGLANG_USE_AITER=1`, a BF16 checkpoint (no `quantization_config`) whose "
        "`shared_expert_intermediate_size` equals `moe_intermediate_size`, without `--disable-shared-experts-fusion` "
        "or a `--moe-a2a-backend`, SGLang 0.5.11 to 0.5.18. A quantized checkpoint is left quiet.",
        why="From 0.5.11 the Qwen2-MoE block fuses the shared expert as an extra routed expert when aiter is on and "
        "`can_fuse_shared_expert` holds (0.5.11 models/qwen2_moe.py:118-125, :229-247; 0.5.18 :141-170, :243-268; "
        "Qwen3.5's decoder layers ask for it, 0.5.11 qwen3_5.py:561,773; 0.5.18 :739,968), and then builds no "
        "separate shared-expert MLP. The target's loader maps `mlp.shared_expert.*` to `mlp.experts.{num_experts}.*` "
        "(0.5.11 qwen3_5.py:1706-1731), the MTP draft's does not: those tensors hit 'Parameter ... not found in "
        "params_dict, skip loading' (0.5.11 qwen3_5_mtp.py:362-376; 0.5.18 :415-429) and the fused slot keeps its "
        "uninitialised memory. 0.5.19 sizes the draft's experts with the fused slot and maps the shared expert "
        "into it (qwen3_5_mtp.py:263-275, :345-350). 0.5.10.post1 has no Qwen3.5 fusion.",
        fix="Add `--disable-shared-experts-fusion`, or use SGLang 0.5.19. No automatic fix (the opt-out also changes "
        "the target's MoE path).",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=QWEN35_MOE_MTP_ROCM,
        target=QWEN35_MOE_FACTS,
        env={AITER: "1"},
        gpu="MI300X",
        sglang_version="0.5.18",
    ),
    good=Example(
        argv=QWEN35_MOE_MTP_ROCM,
        target=QWEN35_MOE_FACTS,
        env={AITER: "1"},
        gpu="MI300X",
        sglang_version="0.5.19",
    ),
    sources=(
        "sglang 0.5.10.post1: python/sglang/srt/models/qwen2_moe.py (no can_fuse_shared_expert)",
        "sglang 0.5.11: python/sglang/srt/models/qwen2_moe.py:118-125,229-247; qwen3_5.py:561,773,1706-1731",
        "sglang 0.5.11: python/sglang/srt/models/qwen3_5_mtp.py:362-376",
        "sglang 0.5.18: python/sglang/srt/models/qwen2_moe.py:126,141-170,243-268; qwen3_5.py:739,968,2332-2363",
        "sglang 0.5.18: python/sglang/srt/models/qwen3_5_mtp.py:84-88,415-429; utils/common.py:1247-1253",
        "sglang 0.5.19: python/sglang/srt/models/qwen3_5_mtp.py:263-275,345-350",
    ),
    sglang_versions=">=0.5.11,<0.5.19",
)
