"""AB173 dflash-device-unsupported."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.rules.spec_params._shared import device
from specguard.sglang_facts.changes import Change, as_of

# The devices _handle_dflash accepts, newest first (0.5.11-0.5.15.post1 had no device test).
DEVICES: tuple[tuple[Change, tuple[str, ...]], ...] = (
    (
        Change("0.5.20", "0.5.20 arg_groups/speculative_hook.py:202-207"),
        ("cuda", "npu", "xpu"),
    ),
    (
        Change("0.5.17", "0.5.17 arg_groups/speculative_hook.py:150-153"),
        ("cuda", "npu"),
    ),
    (Change("0.5.16", "0.5.16 arg_groups/speculative_hook.py:150-151"), ("cuda",)),
)
# From 0.5.21 an out-of-tree platform plugin answers for its own device (speculative_hook.py:261-262);
# SGLang's in-tree platforms are cuda (ROCm too), npu, xpu and cpu (srt/platforms/), so of the devices a
# launch can name without a plugin only cpu is still refused.
# SGLang says (0.5.21 arg_groups/speculative_hook.py:267-271), naming the platform class and the device:
# "DFLASH speculative decoding is not supported by CudaPlatform on device 'cpu'."
PLUGIN_DECIDES = Change("0.5.21", "0.5.21 arg_groups/speculative_hook.py:260-271")
IN_TREE_DEVICES = ("cuda", "npu", "xpu", "cpu")


def allowed_devices(version: Version) -> tuple[str, ...] | None:
    """The devices DFLASH runs on in this release; None where no release checked it."""
    return as_of(DEVICES, version, before=None)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DFLASH":
        return
    where = device(ctx)
    allowed = allowed_devices(ctx.version)
    if where is None or allowed is None or where in allowed:
        return
    if PLUGIN_DECIDES.present_in(ctx.version) and where not in IN_TREE_DEVICES:
        return  # only a platform plugin runs this device, and the plugin says whether DFLASH does
    yield RULE.finding(
        f"DFLASH in SGLang {ctx.version} runs only on {', '.join(allowed)}, not {where!r}: _handle_dflash raises "
        "a ValueError at argument time",
        flags=("--device",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # sgl-jax has its own DFLASH (JX rules)
    check=check,
    code="AB173",
    category=Category.START,
    name="dflash-device-unsupported",
    summary="DFLASH on a device its release does not run it on (CUDA only in 0.5.16, NPU from 0.5.17, XPU from 0.5.20)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a `--device` (or a detected CPU platform) outside CUDA "
        "(0.5.16), CUDA/NPU (0.5.17-0.5.19) or CUDA/NPU/XPU (0.5.20+). From 0.5.21 a device that only an "
        "out-of-tree platform plugin runs is left to that plugin.",
        why="0.5.16 added a device test at the top of `_handle_dflash` (arg_groups/speculative_hook.py:150-151, "
        "absent from 0.5.15.post1 :137-252), widened to NPU in 0.5.17 (:150-153) and XPU in 0.5.20 (:202-207). "
        "0.5.21 (:260-271) and 0.5.23 (:290-301) keep the same list for in-tree platforms and ask an "
        "out-of-tree plugin otherwise. A ROCm GPU is 'cuda' to torch and passes.",
        fix="Run DFLASH on a supported device, or use another algorithm there.",
        fix_safety="No automatic fix: the device is the hardware.",
    ),
    bad=Example(argv=(*QWEN3_8B_DFLASH, "--device", "npu"), sglang_version="0.5.16"),
    good=Example(argv=(*QWEN3_8B_DFLASH, "--device", "cuda"), sglang_version="0.5.16"),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/arg_groups/speculative_hook.py:137-252 (_handle_dflash, no device test)",
        "sglang 0.5.16: python/sglang/srt/arg_groups/speculative_hook.py:150-151",
        "sglang 0.5.17: python/sglang/srt/arg_groups/speculative_hook.py:150-153",
        "sglang 0.5.20: python/sglang/srt/arg_groups/speculative_hook.py:202-207",
        "sglang 0.5.21: python/sglang/srt/arg_groups/speculative_hook.py:260-271",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:290-301",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"DFLASH speculative decoding only supports CUDA",
        r"DFLASH speculative decoding is not supported by \w+ on device",
    ),
)
