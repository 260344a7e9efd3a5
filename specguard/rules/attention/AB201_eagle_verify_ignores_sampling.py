"""AB201 eagle-verify-ignores-sampling."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention._greedy_verify import (
    GREEDY_PLATFORMS,
    platform,
    rejection_sampling_on,
    v2_verify_crashes_on_hip,
)
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import (
    HIP_REJECTION_SAMPLED_VERIFY,
)

# On a build without the sampling kernel SGLang logs (0.5.13 speculative/eagle_info.py:331):
# "Tree speculative sampling kernel unavailable (likely AMD/HIP build). Falling back to greedy verification."


def check(ctx: CheckContext) -> Iterator[Finding]:
    where = platform(ctx)
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or where is None:
        return
    row = GREEDY_PLATFORMS[where]
    if not row.greedy_in(ctx.version):
        return
    if where == "rocm" and v2_verify_crashes_on_hip(ctx):
        return
    if (
        where == "rocm"
        and HIP_REJECTION_SAMPLED_VERIFY.present_in(ctx.version)
        and rejection_sampling_on(ctx) is not False
    ):
        return
    remedy = {
        "npu": "SGLang 0.5.20 samples on NPU; upgrade",
        "rocm": (
            f"add {ctx.flag('--speculative-use-rejection-sampling')} (0.5.21 and later sample through the "
            "Triton chain sampler with it; EAGLE chains get it by default)"
            if HIP_REJECTION_SAMPLED_VERIFY.present_in(ctx.version)
            else "SGLang 0.5.21 samples on ROCm with --speculative-use-rejection-sampling; upgrade"
        ),
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


NPU_EAGLE3 = (
    "--model-path",
    "Qwen/Qwen3-8B",
    "--device",
    "npu",
    "--attention-backend",
    "ascend",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "Tengyunw/qwen3_8b_eagle3",
)

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
    log_signatures=(
        r"Tree speculative sampling kernel unavailable \(likely AMD/HIP build\)",
    ),
)
