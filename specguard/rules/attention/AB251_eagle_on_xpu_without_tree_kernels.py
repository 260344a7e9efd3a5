"""AB251 eagle-on-xpu-without-tree-kernels."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention import AB200_eagle_on_intel_xpu_refused as AB200
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS


def refused_by_ab200(ctx: CheckContext) -> bool:
    """An intel_xpu draft backend is refused at start before the draft ever builds a tree (AB200)."""
    return AB200.RULE.applies_to(ctx) and any(True for _ in AB200.RULE.check(ctx))


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or ctx.spec.get("device") != "xpu"
        or refused_by_ab200(ctx)
    ):
        return
    yield RULE.finding(
        f"{ctx.algorithm} on {ctx.flag('--device')} xpu in SGLang {ctx.version}: the draft tree is built by "
        "sgl_kernel's build_tree_kernel_efficient, which SGLang imports only on CUDA and ROCm (and MUSA), so the "
        "first draft step raises NameError: name 'sgl_build_tree_kernel_efficient' is not defined. From 0.5.5.post3 "
        "a launch that captures the draft's decode CUDA graphs (more than one draft step) fails earlier, at start, "
        "with KeyError: 'xpu' (no XPU graph runner). SGLang 0.5.15 adds the XPU Triton kernels and graph runners: "
        "upgrade, or serve without speculative decoding",
        flags=("--device", "--speculative-algorithm"),
    )


XPU_EAGLE3_TRITON = (
    *LLAMA31_8B_EAGLE3,
    "--device",
    "xpu",
    "--attention-backend",
    "triton",
)

RULE = Rule(
    check=check,
    code="AB251",
    category=Category.CRASH,
    name="eagle-on-xpu-without-tree-kernels",
    summary="EAGLE/EAGLE3/STANDALONE on --device xpu crashes before SGLang 0.5.15: no XPU tree-building kernel",
    severity=Severity.ERROR,
    sglang_versions=">=0.4.2.post3,<0.5.15",
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE with `--device xpu` and a draft backend the draft worker "
        "accepts (an intel_xpu draft backend is refused first, AB200), SGLang 0.4.2.post3 through 0.5.14.",
        why="Every EAGLE draft step builds its verify tree with `build_tree_kernel_efficient`, which calls "
        "`sgl_build_tree_kernel_efficient` on every device but NPU, and SGLang imports that sgl_kernel op only "
        "on CUDA and HIP (0.4.2.post3 speculative/build_eagle_tree.py:9-13 `if is_cuda_available()`; 0.4.8 "
        "`is_cuda() or is_hip()`; 0.5.14 eagle_utils.py:25-27 adds MUSA, the call at :181-197 from "
        "eagle_worker_v2.py:543): on XPU the first draft step raises NameError. From 0.5.5.post3 the draft's "
        "decode CUDA graph runner is picked from a device table without 'xpu' (0.5.5.post3 eagle_worker.py:221-224; "
        "0.5.14 eagle_worker_v2.py:382-401), so with decode graphs on (0.5.14 server_args.py:2901-2908 turns "
        "off only the prefill graphs on XPU) and more than one draft step the start fails with KeyError 'xpu'. "
        "Up to 0.5.10.post1 a Llama EAGLE draft sharing the target's head also called torch.cuda.synchronize() "
        "at start (0.5.10.post1 models/llama.py:757-763; 0.5.11 :767-769 uses torch.xpu). 0.5.15 adds the XPU "
        "Triton tree build and greedy verify (eagle_utils.py:231, 393) and 'xpu' graph runners "
        "(eagle_worker_v2.py:406, 436). Before 0.4.2.post3 the tree was built by a CUDA JIT kernel (cutex, "
        "0.4.2.post2 build_eagle_tree.py:1): not judged here.",
        fix="Upgrade to SGLang 0.5.15 or later, or serve without speculative decoding on XPU.",
        fix_safety="No automatic fix: an upgrade or dropping speculation is the user's choice.",
    ),
    bad=Example(argv=XPU_EAGLE3_TRITON, sglang_version="0.5.14"),
    good=Example(argv=XPU_EAGLE3_TRITON, sglang_version="0.5.15"),
    sources=(
        "sglang 0.4.2.post2: python/sglang/srt/speculative/build_eagle_tree.py:1 (cutex JIT kernel)",
        "sglang 0.4.2.post3: python/sglang/srt/speculative/build_eagle_tree.py:9-13,89,149",
        "sglang 0.5.5.post3: python/sglang/srt/speculative/eagle_worker.py:221-224",
        "sglang 0.5.10.post1: python/sglang/srt/models/llama.py:757-763; 0.5.11 :762-772",
        "sglang 0.5.14: python/sglang/srt/speculative/eagle_utils.py:25-27,181-197; eagle_worker_v2.py:382-401,543",
        "sglang 0.5.15: python/sglang/srt/speculative/eagle_utils.py:231,393; eagle_worker_v2.py:406,436",
    ),
    log_signatures=(
        r"name 'sgl_build_tree_kernel_efficient' is not defined",
        r"KeyError: 'xpu'",
    ),
)
