"""AB252 rocm-eagle-sampled-verify-crashes."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention._greedy_verify import (
    platform,
    v2_verify_crashes_on_hip,
)
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import HIP_GREEDY_VERIFY_V1


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or platform(ctx) != "rocm":
        return
    if not HIP_GREEDY_VERIFY_V1.present_in(ctx.version):
        worker, fixed = "verify", "SGLang 0.5.1 verifies greedy there instead (AB201)"
    elif v2_verify_crashes_on_hip(ctx):
        worker = "SpecV2 verify"
        fixed = "the V1 worker (drop --enable-beta-spec / SGLANG_ENABLE_SPEC_V2) verifies greedy instead (AB201), and 0.5.10rc0's V2 does too"
    else:
        return
    yield RULE.finding(
        f"{ctx.algorithm} on ROCm in SGLang {ctx.version}: the {worker} handles a request with temperature > 0 "
        "(SGLang's default sampling params sample) through sgl_kernel's top-k/top-p renorm and tree sampling ops, "
        "which SGLang imports only on CUDA, so the scheduler dies with NameError: name 'top_k_renorm_prob' is not "
        f"defined at the first sampled request; only all-greedy batches run. {fixed[0].upper()}{fixed[1:]}",
        flags=("--speculative-algorithm",),
    )


RULE = Rule(
    check=check,
    code="AB252",
    category=Category.CRASH,
    name="rocm-eagle-sampled-verify-crashes",
    summary="EAGLE-family on ROCm crashes at the first sampled request before 0.5.1 (V1) and on 0.5.4-0.5.9's SpecV2",
    severity=Severity.ERROR,
    sglang_versions=">=0.4.4.post2,<0.5.10rc0",
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE on a ROCm GPU: SGLang 0.4.4.post2 through 0.5.0rc2, and "
        "0.5.4 through 0.5.9 when the launch runs the SpecV2 worker (`--enable-beta-spec` in 0.5.4, "
        "`SGLANG_ENABLE_SPEC_V2` from 0.5.5).",
        why="From 0.4.4.post2 the EAGLE tree build and greedy verify import their sgl_kernel ops on HIP "
        "(build_eagle_tree.py:9, eagle_utils.py:19-27), but `top_k_renorm_prob`, `top_p_renorm_prob` and "
        "`tree_speculative_sampling_target_only` only on CUDA, and the verify calls them whenever the batch is "
        "not all greedy (0.4.4.post2 eagle_utils.py:320-361; 0.5.0rc2 :31-40, 414-461), so the first sampled "
        "request raises NameError in the scheduler. 0.5.1 goes greedy where the kernel is missing "
        "(`TREE_SPEC_KERNEL_AVAILABLE`, eagle_utils.py:52, 429-437), which AB201 reports. The SpecV2 verify "
        "(0.5.4 eagle_info_v2.py:39-48, 261-308; 0.5.9 :43-49, 300-345) repeated the CUDA-only import and the "
        "call until 0.5.10rc0 listed `_is_hip` in its greedy test (eagle_info_v2.py:313). Before 0.4.4.post2 "
        "the HIP build had no EAGLE kernels at all: not judged here.",
        fix="Upgrade (0.5.1 for the V1 worker, 0.5.10rc0 for SpecV2; both then verify greedy, AB201), run the "
        "V1 worker on 0.5.4-0.5.9, or send only temperature-0 requests.",
        fix_safety="No automatic fix: the worker, an upgrade or greedy-only traffic is the user's choice.",
    ),
    bad=Example(argv=LLAMA31_8B_EAGLE3, gpu="MI300X", sglang_version="0.5.0rc2"),
    good=Example(argv=LLAMA31_8B_EAGLE3, gpu="MI300X", sglang_version="0.5.1"),
    sources=(
        "sglang 0.4.4.post1: python/sglang/srt/speculative/eagle_utils.py:22 (sgl_kernel ops on CUDA only)",
        "sglang 0.4.4.post2: python/sglang/srt/speculative/build_eagle_tree.py:9; eagle_utils.py:19-27,320-361",
        "sglang 0.5.0rc2: python/sglang/srt/speculative/eagle_utils.py:31-40,414-461",
        "sglang 0.5.1: python/sglang/srt/speculative/eagle_utils.py:52,429-437",
        "sglang 0.5.4: python/sglang/srt/speculative/eagle_info_v2.py:39-48,261-308; server_args.py:1296-1302",
        "sglang 0.5.9: python/sglang/srt/speculative/eagle_info_v2.py:43-49,300-345",
        "sglang 0.5.10rc0: python/sglang/srt/speculative/eagle_info_v2.py:313",
    ),
    log_signatures=(r"name 'top_k_renorm_prob' is not defined",),
)
