"""QT501 cutlass-moe-env-without-fp8-quantization."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.changes import Change

CUTLASS_MOE = "SGLANG_CUTLASS_MOE"
QUANTIZATION = "--quantization"

# The deprecated variable's argument-time assert accepts mxfp8 beside fp8 from 0.5.9.
MXFP8_ACCEPTED = Change("0.5.9", "0.5.9 server_args.py:2160-2168")
# The variable is read with get_bool_env_var ("true"/"1", utils/common.py:239-246) to 0.5.10, then
# with envs' EnvBool, which also takes "yes"/"y"; any other value reads as off in both.
ENV_BOOL_READER = Change("0.5.11", "0.5.11 server_args.py:3021 envs.SGLANG_CUTLASS_MOE.get(); environ.py:119-126")


def cutlass_moe_set(ctx: CheckContext) -> bool:
    value = ctx.spec.env_value(CUTLASS_MOE)
    true_words = ("true", "1", "yes", "y") if ENV_BOOL_READER.present_in(ctx.version) else ("true", "1")
    return value is not None and value.lower() in true_words


def accepted(ctx: CheckContext) -> tuple[str, ...]:
    return ("fp8", "mxfp8") if MXFP8_ACCEPTED.present_in(ctx.version) else ("fp8",)


def check(ctx: CheckContext) -> Iterator[Finding]:
    quantization = ctx.spec.get("quantization")
    # Unset --quantization is often filled from the checkpoint before the assert (model overrides),
    # which specguard does not replay: only a written method that is not accepted is certain to fail.
    if not cutlass_moe_set(ctx) or quantization is None:
        return
    allowed = accepted(ctx)
    if quantization in allowed:
        return
    yield RULE.finding(
        f"{CUTLASS_MOE} is set with {ctx.flag(QUANTIZATION)} {quantization} in SGLang {ctx.version}: the deprecated "
        f"variable asserts the quantization is {'/'.join(allowed)} at argument time, so the server stops with "
        f'"AssertionError: cutlass MoE is only supported with {"/".join(allowed)} quantization" before it loads. '
        f"Unset {CUTLASS_MOE} (with an FP8 checkpoint, --moe-runner-backend cutlass selects the same kernels)",
        flags=(QUANTIZATION,),
        fix=fix_of(
            f"unset {CUTLASS_MOE}",
            Applicability.UNSAFE,
            Edit(target="env", name=CUTLASS_MOE, value=None),
        ),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="QT501",
    category=Category.START,
    name="cutlass-moe-env-without-fp8-quantization",
    summary="SGLANG_CUTLASS_MOE with a --quantization other than fp8 (mxfp8 from 0.5.9) is refused at start (0.5.4.post3-0.5.17)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`SGLANG_CUTLASS_MOE` set true (`true`/`1`; also `yes`/`y` from 0.5.11) with `--quantization` written "
        "as any method but `fp8` (also `mxfp8` from 0.5.9), SGLang 0.5.4.post3 to 0.5.17. Quiet when "
        "`--quantization` is unset: model overrides may fill it from the checkpoint before the check.",
        why="0.5.4.post1 read the variable only inside the FP8 MoE method (layers/quantization/fp8.py:1120-1123). "
        "0.5.4.post3 turned it into a deprecated alias of `--moe-runner-backend cutlass` that first asserts "
        '`self.quantization == "fp8"` (server_args.py:1384-1391, `_handle_moe_kernel_config`, called from '
        "`__post_init__` :606) with 'cutlass MoE is only supported with fp8 quantization', unchanged to 0.5.8.post1 "
        "(:1972-1979). 0.5.9 accepts fp8 or mxfp8 ('cutlass MoE is only supported with fp8/mxfp8 quantization', "
        "server_args.py:2160-2168); 0.5.17 runs the same assert as a post-process pass "
        "(arg_groups/overrides.py:2426-2437, server_args.py:6574). The model overrides that run before it set the "
        "method only when it is unset (0.5.8 server_args.py:1214-1225, 0.5.17 overrides.py:1297-1301), or to a "
        "ModelOpt method that fails the assert too. 0.5.18 lists the variable as deprecated only "
        "(environ.py:1608-1611) and no longer asserts.",
        fix=f"Unset `{CUTLASS_MOE}`; for the cutlass MoE kernels use `--moe-runner-backend cutlass` with an FP8 "
        "model (the variable's own deprecation warning says so).",
        fix_safety="Unsafe: the MoE runner backend stays on its automatic choice instead of cutlass.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, QUANTIZATION, "w8a8_fp8"),
        env={CUTLASS_MOE: "1"},
        sglang_version="0.5.4.post3",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, QUANTIZATION, "fp8"),
        env={CUTLASS_MOE: "1"},
        sglang_version="0.5.4.post3",
    ),
    sources=(
        "sglang 0.5.4.post1: python/sglang/srt/layers/quantization/fp8.py:1120-1123 (the only reader; no assert)",
        "sglang 0.5.4.post3: python/sglang/srt/server_args.py:606,1384-1391",
        "sglang 0.5.8.post1: python/sglang/srt/server_args.py:1972-1979",
        "sglang 0.5.4.post3: python/sglang/srt/utils/common.py:239-246 (get_bool_env_var: true/1)",
        "sglang 0.5.9: python/sglang/srt/server_args.py:2160-2168",
        "sglang 0.5.11: python/sglang/srt/server_args.py:3021; environ.py:119-126 (EnvBool: true/1/yes/y)",
        "sglang 0.5.17: python/sglang/srt/arg_groups/overrides.py:2426-2437",
        "sglang 0.5.17: python/sglang/srt/server_args.py:6574",
        "sglang 0.5.18: python/sglang/srt/environ.py:1608-1611 (deprecated, no assert)",
    ),
    sglang_versions=">=0.5.4.post3,<=0.5.17",
    log_signatures=(r"cutlass MoE is only supported with fp8(/mxfp8)? quantization",),
)
