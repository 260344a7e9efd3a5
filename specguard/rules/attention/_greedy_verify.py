"""Where the EAGLE family's verify commits the argmax whatever the request's sampling: the
greedy-only platforms by release, and whether verify runs the rejection sampler instead. AB201
speaks of it; AB250 (NGRAM), AB252 (ROCm V2 worker) and PL214 (PD decode) read the same facts."""

from __future__ import annotations

from packaging.version import Version

from specguard.records import Record
from specguard.resolution.overlap import overlap_forced_off
from specguard.rules.base import CheckContext
from specguard.sglang_facts.changes import (
    GREEDY_VERIFY_CPU,
    GREEDY_VERIFY_ONE_PATH,
    GREEDY_VERIFY_XPU,
    HIP_GREEDY_VERIFY_V1,
    HIP_GREEDY_VERIFY_V2,
    NPU_SAMPLED_VERIFY,
    SPEC_V2_BETA_FLAG,
    Change,
)


class GreedyPlatform(Record, kw_only=False):
    """A platform whose EAGLE-family verify commits the argmax for every request, and when."""

    name: str  # as the message says it
    since: Change
    until: Change | None  # the first release that samples there; None: still greedy at 0.5.23

    def greedy_in(self, version: Version) -> bool:
        return self.since.present_in(version) and (self.until is None or not self.until.present_in(version))


# The platforms `_is_* ` lists in the verify's greedy test (0.5.14 eagle_utils.py:437 to 0.5.23 :500).
# ROCm was greedy before that too, on the V1 path from 0.5.1 (see v2_verify_crashes_on_hip).
# SGLang logs (0.5.13 speculative/eagle_info.py:331, on a build without the sampling kernel):
# "Tree speculative sampling kernel unavailable (likely AMD/HIP build). Falling back to greedy verification."
GREEDY_PLATFORMS: dict[str, GreedyPlatform] = {
    "npu": GreedyPlatform("Ascend NPU", GREEDY_VERIFY_ONE_PATH, NPU_SAMPLED_VERIFY),
    "rocm": GreedyPlatform("ROCm", HIP_GREEDY_VERIFY_V1, None),  # samples under rejection sampling from 0.5.21
    "xpu": GreedyPlatform("Intel XPU", GREEDY_VERIFY_XPU, None),
    "cpu": GreedyPlatform("CPU", GREEDY_VERIFY_CPU, None),
}


SIMULATE_ACC_LEN = "SGLANG_SIMULATE_ACC_LEN"


def platform(ctx: CheckContext) -> str | None:
    device = ctx.spec.get("device")
    if device in GREEDY_PLATFORMS:
        return str(device)
    gpu = ctx.env.gpu
    return "rocm" if gpu is not None and gpu.platform == "rocm" and device in (None, "cuda") else None


def v2_verify_crashes_on_hip(ctx: CheckContext) -> bool:
    """Whether this ROCm launch may run the V2 worker in a release whose V2 verify called the CUDA-only
    tree-sampling kernel for sampled requests (a NameError there, not a greedy verify)."""
    if not SPEC_V2_BETA_FLAG.present_in(ctx.version) or HIP_GREEDY_VERIFY_V2.present_in(ctx.version):
        return False
    return ctx.spec.has("--enable-beta-spec") or not overlap_forced_off(ctx.spec, ctx.algorithm, None, ctx.env)


def rejection_sampling_on(ctx: CheckContext) -> bool | None:
    """Whether verify runs the rejection sampler: typed, or turned on by SGLang itself on ROCm for
    an EAGLE chain without a token map, thresholds at 1, no deterministic inference and no
    SGLANG_SIMULATE_ACC_LEN above 0 (0.5.21 speculative_hook.py:40-62). None where SGLang's own choice of topk is not known."""
    if ctx.spec.get("speculative_use_rejection_sampling"):
        return True
    if ctx.algorithm != "EAGLE" or ctx.spec.get("speculative_token_map") is not None or ctx.spec.has("--enable-deterministic-inference"):
        return False
    thresholds = (ctx.spec.get("speculative_accept_threshold_single"), ctx.spec.get("speculative_accept_threshold_acc"))
    if any(value is not None and value != 1.0 for value in thresholds):
        return False
    # Accept-length simulation keeps the greedy verify (0.5.21 speculative_hook.py:48-61, read at :1083).
    simulated = ctx.spec.env_value(SIMULATE_ACC_LEN)
    if simulated is not None:
        try:
            if float(simulated) > 0:
                return False
        except ValueError:
            return None
    topk = ctx.spec.get("speculative_eagle_topk") or ctx.resolution.eagle_topk
    return None if topk is None else topk == 1
