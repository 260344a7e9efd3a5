"""PL198 dcp-speculation-on-xpu."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.parallel._parallel import dcp_size

QWEN3_8B_XPU_DCP = (
    "--model-path",
    "Qwen/Qwen3-8B",
    "--device",
    "xpu",
    "--tp",
    "4",
    "--dcp-size",
    "2",
    "--attention-backend",
    "intel_xpu",
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    dcp = dcp_size(ctx)
    # SGLang tests the platform (get_platform().is_xpu); an explicit --device xpu only runs there, and
    # without it specguard cannot tell an XPU machine: quiet.
    device = ctx.spec.get("device")
    if (
        ctx.algorithm is None
        or dcp is None
        or dcp[0] <= 1
        or device is None
        or not device.startswith("xpu")
    ):
        return
    size, flag = dcp
    yield RULE.finding(
        f"{ctx.flag(flag)} {size} with {ctx.algorithm} on {ctx.flag('--device')} {device} in SGLang {ctx.version}: "
        "decode context parallelism on Intel XPU refuses speculative decoding at argument time (ValueError "
        f"'--dcp-size > 1 with speculative decoding is not supported on Intel XPU.'). Set {ctx.flag(flag)} 1 to "
        "speculate",
        flags=(flag, "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="PL198",
    category=Category.START,
    name="dcp-speculation-on-xpu",
    summary="--dcp-size above 1 with a speculative algorithm on Intel XPU is refused at argument time (0.5.22+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--dcp-size` (`--decode-context-parallel-size`) above 1 with any `--speculative-algorithm` and "
        "`--device xpu`, SGLang 0.5.22 or later. Without `--device xpu` specguard cannot tell an XPU machine and "
        "stays quiet.",
        why="0.5.22 added decode context parallelism on Intel XPU: when `dcp_size > 1` on the XPU platform, "
        "`handle_attention_backend_compatibility` runs `_check_xpu_dcp` (attention_hook.py:274-275), which after its "
        "backend (intel_xpu), MLA, head-dim and KV-head checks raises for any speculative algorithm (:48-96). "
        "Unchanged in 0.5.23 (attention_hook.py:49-98, :275-276). 0.5.21 has no XPU DCP check "
        "(parallel_hook.py handle_decode_context_parallelism).",
        fix="Serve without decode context parallelism (`--dcp-size 1`) to speculate on XPU.",
        fix_safety="No automatic fix: dropping DCP changes KV capacity per device.",
    ),
    bad=Example(
        argv=(*QWEN3_8B_XPU_DCP, "--speculative-algorithm", "NGRAM"),
        sglang_version="0.5.22",
    ),
    good=Example(argv=QWEN3_8B_XPU_DCP, sglang_version="0.5.22"),
    sources=(
        "sglang 0.5.21: python/sglang/srt/arg_groups/parallel_hook.py:192-220 (handle_decode_context_parallelism: no XPU DCP check)",
        "sglang 0.5.22: python/sglang/srt/arg_groups/attention_hook.py:48-96,274-275",
        "sglang 0.5.23: python/sglang/srt/arg_groups/attention_hook.py:49-98,275-276",
    ),
    sglang_versions=">=0.5.22",
    log_signatures=(
        r"--dcp-size > 1 with speculative decoding is not supported on Intel XPU",
    ),
)
