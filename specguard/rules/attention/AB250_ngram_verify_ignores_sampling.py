"""AB250 ngram-verify-ignores-sampling."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention._greedy_verify import (
    GREEDY_PLATFORMS,
    platform,
)
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import QWEN25_7B_NGRAM
from specguard.rules.parallel.PL004_ngram_constraints import allowed_devices
from specguard.rules.spec_params._shared import device
from specguard.sglang_facts.changes import (
    NGRAM_ROCM_TREE_OP,
    NGRAM_SAMPLED_VERIFY,
    NGRAM_VERIFY_VIA_EAGLE_SAMPLE,
)

FORCE_GREEDY = "SGLANG_NGRAM_FORCE_GREEDY_VERIFY"

IGNORED = (
    "requests with temperature > 0 (SGLang's default sampling params sample) get greedy tokens, and "
    "temperature, top_p and top_k are silently ignored. Greedy requests are unaffected"
)


def greedy_platform(ctx: CheckContext) -> str | None:
    """The platform whose shared EAGLE verify (NGRAM's from 0.5.14) commits the argmax for this launch.
    ROCm runs NGRAM only once its tree op is in-tree (PL004 reports the crash before), and its greedy
    escape, rejection sampling, is an EAGLE/EAGLE3 option (0.5.23 arg_groups/speculative_hook.py:1210-1219)."""
    where = platform(ctx)
    if where is None or not GREEDY_PLATFORMS[where].greedy_in(ctx.version):
        return None
    if where == "rocm":
        runs = NGRAM_ROCM_TREE_OP.present_in(ctx.version) and not ctx.spec.get(
            "speculative_use_rejection_sampling"
        )
        return where if runs else None
    return where if where in allowed_devices(ctx.version) else None


def on_cuda(ctx: CheckContext) -> bool:
    """NGRAM on an NVIDIA GPU: the CUDA device, and a GPU that is not known to be AMD (ROCm is PL004's crash)."""
    return device(ctx) == "cuda" and ctx.env.platform != "rocm"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "NGRAM":
        return
    if NGRAM_VERIFY_VIA_EAGLE_SAMPLE.present_in(ctx.version):
        where = greedy_platform(ctx)
        if where is not None:
            yield RULE.finding(
                f"NGRAM on {GREEDY_PLATFORMS[where].name} in SGLang {ctx.version}: NGRAM verifies through EAGLE's "
                f"eagle_sample, whose greedy test lists this platform, so {IGNORED}. No release samples NGRAM "
                "there: serve greedy traffic only, or serve it on CUDA",
                flags=("--speculative-algorithm",),
            )
        if ctx.spec.env_flag(FORCE_GREEDY):
            yield RULE.finding(
                f"{FORCE_GREEDY} is read nowhere in SGLang {ctx.version} (NGRAM verifies through eagle_sample from "
                "0.5.14): sampled requests are sampled, not verified greedy. Send temperature 0 to get greedy "
                "output, and drop the variable",
                flags=("--speculative-algorithm",),
                severity=Severity.INFO,
            )
        return
    if not on_cuda(ctx):
        return
    if not NGRAM_SAMPLED_VERIFY.present_in(ctx.version):
        yield RULE.finding(
            f"NGRAM in SGLang {ctx.version}: the verify step always takes the greedy path ('Currently Ngram "
            f"speculative sampling forces to use greedy verification'), so {IGNORED}. SGLang 0.5.5.post3 samples; "
            "upgrade, or serve sampled traffic without speculation",
            flags=("--speculative-algorithm",),
        )
    elif ctx.spec.env_flag(FORCE_GREEDY):
        yield RULE.finding(
            f"{FORCE_GREEDY} is set: NGRAM in SGLang {ctx.version} verifies greedy for every request, so {IGNORED}. "
            "Drop the variable to sample",
            flags=("--speculative-algorithm",),
            severity=Severity.INFO,
        )


RULE = Rule(
    check=check,
    code="AB250",
    category=Category.WRONG_OUTPUT,
    name="ngram-verify-ignores-sampling",
    summary="NGRAM verify commits the argmax (before 0.5.5.post3, or on CPU/XPU/ROCm): sampled requests get greedy tokens",
    severity=Severity.WARNING,
    sglang_versions=">=0.5.3rc2",
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm NGRAM` where its verify is greedy for every request: on CUDA up to "
        "0.5.5.post2; from 0.5.14 on `--device cpu` (0.5.16 on), `--device xpu` (0.5.21 on) and a ROCm GPU "
        "(0.5.23 on, when NGRAM first runs there). With `SGLANG_NGRAM_FORCE_GREEDY_VERIFY` set it says (INFO) "
        "that 0.5.5.post3-0.5.13 verify greedy by that choice, and that from 0.5.14 the variable does nothing.",
        why="NGRAM arrived in 0.5.3rc2 (ngram_utils.py; 0.5.3rc0 has none) with a verify that calls "
        "`_greedy_verify` in both branches, the sampled one under the warning 'Currently Ngram speculative "
        "sampling forces to use greedy verification' (0.5.3 ngram_utils.py:398-411; 0.5.5.post2 ngram_info.py:"
        "418-426). 0.5.5.post3 samples (`_sampling_verify`) unless `SGLANG_NGRAM_FORCE_GREEDY_VERIFY` is set "
        "(ngram_info.py:412-425, environ.py:290; 0.5.13 ngram_info.py:440). From 0.5.14 NGRAM verifies through "
        "`eagle_utils.eagle_sample` (ngram_worker.py:17, 436) and nothing reads the variable (0.5.23 environ.py:"
        "1593 still declares it); eagle_sample's greedy test lists CPU (0.5.16 eagle_utils.py:650), XPU and "
        "HIP without rejection sampling (0.5.23 :485-500, 641-647), and rejection sampling is refused for "
        "NGRAM (0.5.23 arg_groups/speculative_hook.py:1210-1219). NGRAM runs on CPU from 0.5.16, XPU from "
        "0.5.21 and ROCm from 0.5.23 (PL004 reports the refusals and the ROCm crash before).",
        fix="Up to 0.5.5.post2 upgrade, or serve sampled traffic without speculation; on CPU, XPU and ROCm no "
        "release samples NGRAM: serve greedy traffic only or use CUDA.",
        fix_safety="No automatic fix: an upgrade, another device or dropping speculation is the user's choice.",
    ),
    bad=Example(argv=QWEN25_7B_NGRAM, gpu="H100", sglang_version="0.5.5.post2"),
    good=Example(argv=QWEN25_7B_NGRAM, gpu="H100", sglang_version="0.5.5.post3"),
    sources=(
        "sglang 0.5.3rc2: python/sglang/srt/speculative/ngram_utils.py:398-411 (0.5.3rc0 has no NGRAM)",
        "sglang 0.5.5.post2: python/sglang/srt/speculative/ngram_info.py:418-426",
        "sglang 0.5.5.post3: python/sglang/srt/speculative/ngram_info.py:412-425; environ.py:290",
        "sglang 0.5.13: python/sglang/srt/speculative/ngram_info.py:440",
        "sglang 0.5.14: python/sglang/srt/speculative/ngram_worker.py:17,436",
        "sglang 0.5.16: python/sglang/srt/speculative/eagle_utils.py:650",
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_utils.py:485-500,641-647; ngram_worker.py:27,479",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1210-1219; environ.py:1593",
    ),
    log_signatures=(
        r"Currently Ngram speculative sampling forces to use greedy verification",
    ),
)
