"""FX566 npu-dsv4-pd-draft-state-not-transferred."""

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
from specguard.rules.spec_params._shared import device

DSV4 = "DeepseekV4ForCausalLM"
DISAGGREGATION = "--disaggregation-mode"
PD_MODES = ("prefill", "decode")


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    mode = ctx.spec.last_value(DISAGGREGATION)
    if ctx.algorithm != "EAGLE" or mode not in PD_MODES or device(ctx) != "npu":
        return
    if target is None or target.architecture != DSV4:
        return
    yield RULE.finding(
        f"DeepSeek-V4 MTP (EAGLE) with {ctx.flag(DISAGGREGATION)} {mode} on {ctx.flag('--device')} npu in SGLang "
        f"{ctx.version}: PD transfer on NPU ships only the target's KV and state, never the NextN draft's "
        "sliding-window KV, so on the decode server the draft attends over prompt KV it never received and its "
        "proposals are mostly rejected (verify keeps the output right, the speed-up is lost). SGLang 0.5.18 "
        "transfers the draft's state on NPU too: upgrade, or serve this pair without speculative decoding",
        flags=(DISAGGREGATION, "--speculative-algorithm", "--device"),
    )


NPU_DSV4_MTP_PD = (
    "--model-path",
    "deepseek-ai/DeepSeek-V4-Flash",
    "--device",
    "npu",
    "--tp",
    "16",
    "--speculative-algorithm",
    "NEXTN",
    DISAGGREGATION,
)
DSV4_FACTS = {"architectures": (DSV4,)}

RULE = Rule(
    check=check,
    code="FX566",
    category=Category.PERF,
    name="npu-dsv4-pd-draft-state-not-transferred",
    summary="PD disaggregation of DeepSeek-V4 with its MTP draft on an Ascend NPU does not transfer the draft's "
    "state, wasting the drafts (0.5.16 to 0.5.17)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--device npu`, a DeepseekV4ForCausalLM target, EAGLE/NEXTN (its MTP draft) and `--disaggregation-mode` "
        "prefill or decode, SGLang 0.5.16 to 0.5.17.",
        why="0.5.16 added the DeepSeek-V4 NextN draft's sliding-window KV to the PD state components, since the draft "
        "shares the target allocator's SWA indices, but only off NPU: 'NPU has a different paged state layout and is "
        "intentionally left unchanged' (`setup_state_kv_args`, disaggregation/utils.py:951-960, `not is_npu()`). "
        "0.5.17 gives the NPU pool its own component list, the target's sub-pools only "
        "(`DSV4NPUTokenToKVPool.get_pd_state_components`, utils.py:1015-1024), and keeps the draft block off NPU "
        "(:1127-1136). The decode server's draft then reads prompt KV that was never sent. 0.5.18 sends NPU pools "
        "through the generic state path plus a C128 component and transfers the draft's SWA state on NPU as well "
        "(utils.py:1168-1262; `DSV4NPUTokenToKVPool` is a `DeepSeekV4TokenToKVPool`, "
        "hardware_backend/npu/dsv4/dsv4_memory_pool.py:225). Before 0.5.16 no release sends the draft state on any "
        "device, which this NPU rule does not judge.",
        fix="Use SGLang 0.5.18 or later, or serve the PD pair without speculative decoding. No automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=(*NPU_DSV4_MTP_PD, "decode"), target=DSV4_FACTS, sglang_version="0.5.17"
    ),
    good=Example(
        argv=(*NPU_DSV4_MTP_PD, "decode"), target=DSV4_FACTS, sglang_version="0.5.18"
    ),
    sources=(
        "sglang 0.5.15: python/sglang/srt/disaggregation/utils.py (no DeepSeek-V4 draft state component)",
        "sglang 0.5.16: python/sglang/srt/disaggregation/utils.py:831,951-960",
        "sglang 0.5.17: python/sglang/srt/disaggregation/utils.py:985,1015-1024,1127-1136",
        (
            "sglang 0.5.18: python/sglang/srt/disaggregation/utils.py:1036,1168-1262; "
            "hardware_backend/npu/dsv4/dsv4_memory_pool.py:225"
        ),
    ),
    sglang_versions=">=0.5.16,<0.5.18",
)
