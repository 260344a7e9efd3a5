"""HY568 linear-flashinfer-verify-sm100-ssm-dtype."""

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

VERIFY = "--linear-attn-verify-backend"
SSM_DTYPE = "--mamba-ssm-dtype"
# 0.5.22 arg_groups/attention_hook.py: with SGLANG_ENABLE_PP_SPEC a KDA target's flashinfer verify falls back to
# triton before the check; the rule leaves any such launch quiet rather than judge the target's attention kind.
PP_SPEC = "SGLANG_ENABLE_PP_SPEC"
# The check runs on CUDA when torch.cuda.get_device_capability()[0] >= 10 (SM100, SM103, SM120).
FIRST_GUARDED_MAJOR = 10


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if (
        ctx.spec.last_value(VERIFY) != "flashinfer"
        or gpu is None
        or gpu.platform != "cuda"
    ):
        return
    if (
        gpu.compute_capability is None
        or gpu.compute_capability[0] < FIRST_GUARDED_MAJOR
    ):
        return
    # Nothing fills an unset dtype before the check (it is read from the model config only later), so None is
    # refused too (0.5.17 server_args.py:2464-2471,6083-6096).
    dtype = ctx.spec.last_value(SSM_DTYPE)
    if dtype == "bfloat16" or ctx.spec.env_flag(PP_SPEC):
        return
    setting = f"{ctx.flag(SSM_DTYPE)} {dtype}" if dtype is not None else f"{ctx.flag(SSM_DTYPE)} unset"
    yield RULE.finding(
        f"{ctx.flag(VERIFY)} flashinfer with {setting} on {gpu.name} (SM{gpu.sm}) in SGLang "
        f"{ctx.version}: the FlashInfer linear-attention verify kernel needs a bfloat16 SSM state on SM100+, so "
        'argument handling raises "ValueError: --linear-attn-verify-backend flashinfer on SM100+ requires '
        f'--mamba-ssm-dtype bfloat16" before the server starts. Set {ctx.flag(SSM_DTYPE)} bfloat16, or drop '
        f"{ctx.flag(VERIFY)}",
        flags=(VERIFY, SSM_DTYPE),
        fix=fix_of(
            f"drop {VERIFY}", Applicability.UNSAFE, Edit(name=VERIFY, value=None)
        ),
    )


QWEN3_NEXT_MTP = (
    "--model-path",
    "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    VERIFY,
    "flashinfer",
    SSM_DTYPE,
)

RULE = Rule(
    check=check,
    code="HY568",
    category=Category.START,
    name="linear-flashinfer-verify-sm100-ssm-dtype",
    summary="--linear-attn-verify-backend flashinfer with a --mamba-ssm-dtype other than bfloat16 on SM100+ is "
    "refused at argument time (0.5.17+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--linear-attn-verify-backend flashinfer` with `--mamba-ssm-dtype` unset or set to anything but bfloat16 "
        "on a CUDA GPU of compute capability 10 or above (B200, GB200, B300, RTX 50), SGLang 0.5.17 or later, "
        "without SGLANG_ENABLE_PP_SPEC. An unknown GPU and other GPUs stay quiet.",
        why="0.5.17 added the verify-backend flag and, beside the older decode check, a second one: the verify backend "
        "(typed, or following a flashinfer decode backend) being flashinfer on SM100+ needs a bfloat16 SSM state, "
        "else `_handle_linear_attn_backend` raises ValueError '--linear-attn-verify-backend flashinfer on SM100+ "
        "requires --mamba-ssm-dtype bfloat16' (server_args.py:6084-6096). An unset dtype is None there (default "
        ":2464-2471; it is read from the model config only later, and the ReplaySSM float32 default at :6228-6234 "
        "comes after), so it is refused too. 0.5.16 has no such flag. From 0.5.19 "
        "the check is in arg_groups/attention_hook.py (0.5.23 :346-376; from 0.5.22 a KDA target under "
        "SGLANG_ENABLE_PP_SPEC falls back to triton verify first).",
        fix="Set `--mamba-ssm-dtype bfloat16`, or drop `--linear-attn-verify-backend flashinfer`.",
        fix_safety="Unsafe: the verify kernel (or the SSM state precision) changes.",
    ),
    bad=Example(
        argv=(*QWEN3_NEXT_MTP, "float32"),
        target={"architectures": ("Qwen3NextForCausalLM",)},
        gpu="B200",
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=(*QWEN3_NEXT_MTP, "bfloat16"),
        target={"architectures": ("Qwen3NextForCausalLM",)},
        gpu="B200",
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.16: python/sglang/srt/server_args.py (no linear_attn_verify_backend)",
        "sglang 0.5.17: python/sglang/srt/server_args.py:2464-2471,3543,6071-6096,6228-6234",
        "sglang 0.5.23: python/sglang/srt/arg_groups/attention_hook.py:334-376; layers/attention/linear/utils.py:16-17",
    ),
    sglang_versions=">=0.5.17",
    log_signatures=(
        r"--linear-attn-verify-backend flashinfer on SM100\+ requires --mamba-ssm-dtype bfloat16",
    ),
)
