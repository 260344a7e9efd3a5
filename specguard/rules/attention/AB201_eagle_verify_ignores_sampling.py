"""AB201 eagle-verify-ignores-sampling."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from specguard.models import Category, Finding, Severity
from specguard.records import Record
from specguard.resolution.overlap import overlap_forced_off
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import (
    GREEDY_VERIFY_CPU,
    GREEDY_VERIFY_ONE_PATH,
    GREEDY_VERIFY_XPU,
    HIP_GREEDY_VERIFY_V1,
    HIP_GREEDY_VERIFY_V2,
    HIP_REJECTION_SAMPLED_VERIFY,
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


def check(ctx: CheckContext) -> Iterator[Finding]:
    where = platform(ctx)
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or where is None:
        return
    row = GREEDY_PLATFORMS[where]
    if not row.greedy_in(ctx.version):
        return
    if where == "rocm" and v2_verify_crashes_on_hip(ctx):
        return
    if where == "rocm" and HIP_REJECTION_SAMPLED_VERIFY.present_in(ctx.version) and rejection_sampling_on(ctx) is not False:
        return
    remedy = {
        "npu": "SGLang 0.5.20 samples on NPU; upgrade",
        "rocm": (f"add {ctx.flag('--speculative-use-rejection-sampling')} (0.5.21 and later sample through the "
                 "Triton chain sampler with it; EAGLE chains get it by default)"
                 if HIP_REJECTION_SAMPLED_VERIFY.present_in(ctx.version) else
                 "SGLang 0.5.21 samples on ROCm with --speculative-use-rejection-sampling; upgrade"),
        "xpu": "no release samples there yet: serve greedy traffic only, or serve without speculation",
        "cpu": "no release samples there yet: serve greedy traffic only, or serve without speculation",
    }[where]
    yield RULE.finding(
        f"{ctx.algorithm} on {row.name} in SGLang {ctx.version}: the verify step commits the target's argmax "
        "for every request, so requests with temperature > 0 (SGLang's default sampling params sample) get "
        "greedy tokens, and temperature, top_p and top_k are silently ignored. Greedy requests are unaffected. "
        f"{remedy[0].upper()}{remedy[1:]}",
        flags=("--speculative-algorithm",),
    )


NPU_EAGLE3 = ("--model-path", "Qwen/Qwen3-8B", "--device", "npu", "--attention-backend", "ascend",
              "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "Tengyunw/qwen3_8b_eagle3")

RULE = Rule(
    check=check,
    code="AB201",
    category=Category.WRONG_OUTPUT,
    name="eagle-verify-ignores-sampling",
    summary="EAGLE-family verify on NPU, ROCm, XPU or CPU commits the argmax: sampled requests get greedy tokens",
    severity=Severity.WARNING,
    sglang_versions=">=0.5.1",
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE on a platform whose verify is greedy-only: `--device npu` "
        "0.5.14-0.5.19, a ROCm GPU from 0.5.1 (from 0.5.21 only without rejection sampling; 0.5.4-0.5.9 only on "
        "the V1 worker), `--device xpu` "
        "from 0.5.15, `--device cpu` from 0.5.16.",
        why="EAGLE-family verify takes the greedy path when `sampling_info.is_all_greedy` or the platform is "
        "listed: `_is_npu or _is_hip` (0.5.14 `speculative/eagle_utils.py:437`), plus `_is_xpu` (0.5.15 :620) "
        "and `_is_cpu` (0.5.16 :650); 0.5.20 drops `_is_npu` (:784). On those platforms the accepted tokens are "
        "the target's argmax whatever the request's sampling parameters, with no warning. 0.5.21 lets HIP sample "
        "when rejection sampling is on (`_verify_uses_greedy`, eagle_utils.py:695-710) and turns it on by itself "
        "for EAGLE chains with no token map, thresholds at 1, no deterministic inference and no "
        "`SGLANG_SIMULATE_ACC_LEN` above 0 "
        "(`arg_groups/speculative_hook.py:40-62, 1073-1093`, whose comment says verify 'would otherwise fall "
        "back to greedy (argmax) and silently ignore temperature and top_p'); 0.5.23 is the same (:485-500). "
        "Before 0.5.14 the two spec paths verified apart. The V1 verify goes greedy where "
        "`tree_speculative_sampling_target_only` was not imported, which is CUDA only: from 0.5.1 "
        "(`TREE_SPEC_KERNEL_AVAILABLE`, 0.5.1 eagle_utils.py:52, 429-437, with the warning 'Falling back to greedy "
        "verification'; 0.5.13 spec_utils.py:72-74, eagle_info.py:329-347), so ROCm is greedy there; 0.5.0rc2 "
        "called the kernel anyway (eagle_utils.py:31-40, 414-461: a NameError, not judged here). The V2 verify "
        "(`--enable-beta-spec` in 0.5.4, `SGLANG_ENABLE_SPEC_V2` from 0.5.5, the default from 0.5.11) lists "
        "`_is_hip` from 0.5.10rc0 (eagle_info_v2.py:313); 0.5.4-0.5.9 called the CUDA-only kernel on HIP "
        "(0.5.9 eagle_info_v2.py:43-49, 300-345), so those V2 launches are not judged here. NPU, XPU and CPU "
        "are judged from 0.5.14.",
        fix="On ROCm from 0.5.21 add `--speculative-use-rejection-sampling`; on NPU upgrade to 0.5.20; on CPU "
        "and XPU no release samples: send greedy requests only, or serve without speculation.",
        fix_safety="No automatic fix: rejection sampling changes the verify kernel, and an upgrade or dropping "
        "speculation is the user's choice.",
    ),
    bad=Example(argv=NPU_EAGLE3, sglang_version="0.5.19"),
    good=Example(argv=NPU_EAGLE3, sglang_version="0.5.20"),
    sources=(
        "sglang 0.5.0rc2: python/sglang/srt/speculative/eagle_utils.py:31-40,414-461 (kernel imported on CUDA only, called)",
        "sglang 0.5.1: python/sglang/srt/speculative/eagle_utils.py:52,429-437 (TREE_SPEC_KERNEL_AVAILABLE: argmax on HIP)",
        "sglang 0.5.9: python/sglang/srt/speculative/eagle_info_v2.py:43-49,300-345; 0.5.10rc0 :313 adds _is_hip",
        "sglang 0.5.13: python/sglang/srt/speculative/eagle_info.py:329-347, spec_utils.py:72-74, eagle_info_v2.py:504 (two verify paths)",
        "sglang 0.5.14: python/sglang/srt/speculative/eagle_utils.py:437",
        "sglang 0.5.15: python/sglang/srt/speculative/eagle_utils.py:620; 0.5.16 :650; 0.5.19 :744",
        "sglang 0.5.20: python/sglang/srt/speculative/eagle_utils.py:784",
        "sglang 0.5.21: python/sglang/srt/speculative/eagle_utils.py:695-710; arg_groups/speculative_hook.py:40-62,1073-1093",
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_utils.py:485-500,641",
    ),
    # The V1 verify's warning on ROCm, 0.5.1 to 0.5.13 (the later verify warns nothing).
    log_signatures=(r"Tree speculative sampling kernel unavailable \(likely AMD/HIP build\)",),
)
