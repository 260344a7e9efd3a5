"""PL631 dspark-dsv4-compact-verify-context-parallel."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK
from specguard.rules.parallel.PL172_dspark_dp_attention_constraints import (
    DP_SIZE_CHECKED,
    dspark_dp_attention,
)
from specguard.rules.spec_params._ragged_verify import RAGGED, unset_ragged
from specguard.rules.spec_params._shared import int_flag
from specguard.sglang_facts.architectures import DSV4_ARCHITECTURES

PREFILL_CP = "--enable-prefill-cp"
CP_SIZE = ("--attn-cp-size", "--attention-context-parallel-size")
# SGLang says (0.5.16 layers/attention/deepseek_v4_backend.py:587-591):
# "DSV4 ragged verify does not support context parallel (CP); set SGLANG_RAGGED_VERIFY_MODE off for CP runs."


def _prefill_cp_size(ctx: CheckContext) -> int | None:
    """attn_cp_size as validate_deepseek_v4_cp sets it for --enable-prefill-cp (tp // dp, dp must be 1), when
    the launch passes that validation and DSPARK's attention-DP checks let it through; else None."""
    if (
        not ctx.spec.has(PREFILL_CP)
        or ctx.spec.last_value("--cp-strategy") != "interleave"
    ):
        return None  # DeepSeek-V4 refuses any other strategy (0.5.18 deepseek_v4_hook.py:160-164)
    if (ctx.spec.get("dp_size") or 1) != 1:
        return None  # asserted at argument time
    if not DP_SIZE_CHECKED.present_in(ctx.version):
        return None  # 0.5.16-0.5.17: the hook's --enable-dp-attention makes _handle_dspark refuse CP first
    return ctx.spec.get("tp_size") or 1


def _cp_size(ctx: CheckContext) -> tuple[int, str] | None:
    """The attention context-parallel width above 1 this launch runs with, and the flag that sets it."""
    if ctx.spec.has(PREFILL_CP):
        size = _prefill_cp_size(ctx)
        return (size, PREFILL_CP) if size is not None and size > 1 else None
    flag = next((f for f in CP_SIZE if ctx.spec.has(f)), None)
    size = int_flag(ctx, flag) if flag is not None else None
    if flag is None or size is None or size <= 1 or dspark_dp_attention(ctx):
        return None  # with attention DP, _handle_dspark refuses CP at argument time (PL172)
    return size, flag


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DSPARK" or ctx.spec.env_value(RAGGED) != "compact":
        return
    if ctx.target is None or ctx.target.architecture not in DSV4_ARCHITECTURES:
        return
    if ctx.env.gpu is not None and ctx.env.gpu.platform != "cuda":
        return  # ROCm runs DeepseekV4HipRadixBackend (AB304 for 0.5.16-0.5.17), NPU its own backend
    found = _cp_size(ctx)
    if found is None:
        return
    size, flag = found
    yield RULE.finding(
        f"DSPARK on a DeepSeek-V4 target with {RAGGED}=compact and attention context parallel "
        f"({ctx.flag(flag)}, attn_cp_size {size}) in SGLang {ctx.version}: every compact verify batch hands the "
        "DeepSeek-V4 backend a ragged layout, and it raises 'DSV4 ragged verify does not support context "
        "parallel (CP)' while capturing the target-verify CUDA graphs (or at the first verify when they are off), "
        f"so the server never serves. Unset {RAGGED} (static verify), or drop context parallel",
        flags=(flag, "--speculative-algorithm"),
        fix=unset_ragged(),
    )


_DSV4_TARGET = {"architectures": ("DeepseekV4ForCausalLM",)}
_TP8_CP8 = (*DEEPSEEK_V4_FLASH_DSPARK, "--tp-size", "8", "--attn-cp-size", "8")

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="PL631",
    category=Category.START,
    name="dspark-dsv4-compact-verify-context-parallel",
    summary="DSPARK on a DeepSeek-V4 target with SGLANG_RAGGED_VERIFY_MODE=compact and attention context "
    "parallel fails at the first ragged verify (0.5.16+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` on a target whose config.json architectures[0] is a DeepSeek-V4 "
        "class, on CUDA (or an unknown GPU), with `SGLANG_RAGGED_VERIFY_MODE=compact` and attention context "
        "parallel above 1: `--attn-cp-size` (alias `--attention-context-parallel-size`) above 1 without "
        "attention DP, or (0.5.18+) `--enable-prefill-cp --cp-strategy interleave` with `--tp-size` above 1 "
        "and `--dp-size` 1, SGLang 0.5.16 or later.",
        why="`DeepseekV4AttnBackend._resolve_verify_layout` raises NotImplementedError 'DSV4 ragged verify does not "
        "support context parallel (CP)' whenever a compact ragged layout meets `attn_cp_size > 1` (0.5.16 "
        "layers/attention/deepseek_v4_backend.py:576-600; unchanged in 0.5.23 :1432-1456). Both the target-verify "
        "metadata for CUDA-graph capture (0.5.16 :1262) and the eager path (:1413) call it, and in compact mode "
        "the planner builds a ragged layout for every verify (speculative/dspark_components/dspark_planner.py:"
        "421-457) and the graph runner captures ragged layouts (model_executor/runner/decode_cuda_graph_runner.py:"
        "283-287). With attention DP, `_handle_dspark` refuses CP at argument time first (PL172). "
        "`--enable-prefill-cp` on DeepSeek-V4 sets `enable_dp_attention` and `attn_cp_size = tp // dp` "
        "(0.5.16 arg_groups/deepseek_v4_hook.py:66-82): 0.5.16-0.5.17 then refuse it in `_handle_dspark` "
        "(speculative_hook.py:280-292), while 0.5.18 skips those checks for `dp_size` 1 ('a degenerate flag "
        "under DSV4 CP', speculative_hook.py:285-286) so the launch reaches the raise. The backend's other "
        "refusal, online c128 MTP, is EAGLE-only. Cap-accept builds a ragged layout only when its budget "
        "schedules one, so only compact is claimed; ROCm and NPU run other DeepSeek-V4 backends.",
        fix="Unset `SGLANG_RAGGED_VERIFY_MODE` (static verify), or run without context parallel.",
        fix_safety="Unsafe: the verify schedule changes.",
    ),
    bad=Example(
        argv=_TP8_CP8,
        target=_DSV4_TARGET,
        env={RAGGED: "compact"},
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=_TP8_CP8,
        target=_DSV4_TARGET,
        env={RAGGED: "static"},
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/spec_info.py:28-41 (no DSPARK algorithm)",
        "sglang 0.5.16: python/sglang/srt/layers/attention/deepseek_v4_backend.py:576-600,1262,1413",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_planner.py:421-457",
        "sglang 0.5.16: python/sglang/srt/arg_groups/deepseek_v4_hook.py:66-82",
        "sglang 0.5.16: python/sglang/srt/arg_groups/speculative_hook.py:280-292",
        "sglang 0.5.18: python/sglang/srt/arg_groups/speculative_hook.py:285-286",
        "sglang 0.5.23: python/sglang/srt/layers/attention/deepseek_v4_backend.py:1432-1456,2771,3115",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(r"DSV4 ragged verify does not support context parallel \(CP\)",),
)
