"""PL002 pipeline-parallel-speculative."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import (
    Applicability,
    Category,
    Dialect,
    Edit,
    Finding,
    Fix,
    Severity,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B
from specguard.rules.spec_params._shared import attn_dp_enabled, device
from specguard.sglang_facts.changes import PP_SPEC_EXCEPTIONS, Change

# 0.5.20 gives NPU its own branch: EAGLE on a PD prefill node passes (0.5.19 validation_hook.py:51-54
# asserts no speculation on every device).
NPU_PP_EAGLE_PREFILL = Change("0.5.20", "0.5.20 arg_groups/validation_hook.py:62-79 (NPU branch of check_server_args)")

PP_SPEC_ENV = "SGLANG_ENABLE_PP_SPEC"


def pp_off(ctx: CheckContext, pp: int) -> Fix:
    """pp 1, keeping the GPU count in SGLang's spelling (slime derives tp from its GPUs per engine)."""
    edits = [Edit(name="--pp-size", value=None)]
    if ctx.spec.dialect is not Dialect.SLIME:
        edits.append(Edit(name="--tp-size", value=(ctx.spec.get("tp_size") or 1) * pp))
    return fix_of("turn pipeline parallelism off (same GPU count as tensor parallelism)", Applicability.UNSAFE, *edits)


def npu_reason(ctx: CheckContext) -> str | None:
    """0.5.20's NPU branch of check_server_args (arg_groups/validation_hook.py:62-79): single-layer EAGLE
    (NEXTN is EAGLE by then) on a PD prefill node. The overlap scheduler it also asserts off is turned
    off for any pp > 1 (overrides.py:1669-1674)."""
    if ctx.algorithm != "EAGLE" or ctx.spec.has("--enable-multi-layer-eagle"):
        return "pipeline parallelism on NPU currently only supports EAGLE (non-multi-layer) speculative decoding"
    if ctx.spec.get("disaggregation_mode") != "prefill":
        return "NPU PP + speculative decoding (MTP) is only supported on prefill nodes (disaggregation-mode=prefill)"
    return None


def reason(ctx: CheckContext) -> str | None:
    """Why check_pipeline_parallel_compat (0.5.23 validation_hook.py:119-171) rejects it, or None."""
    if ctx.version < PP_SPEC_EXCEPTIONS.release:
        if device(ctx) == "npu" and NPU_PP_EAGLE_PREFILL.present_in(ctx.version):
            return npu_reason(ctx)
        return "before SGLang 0.5.21 pipeline parallelism is not compatible with speculative decoding at all"
    mode = ctx.spec.get("disaggregation_mode")
    if ctx.algorithm == "DSPARK":
        return None if mode == "prefill" and not ctx.spec.env_flag(PP_SPEC_ENV) else "DSPARK with PP needs --disaggregation-mode prefill"
    if ctx.algorithm != "EAGLE" or ctx.spec.has("--enable-multi-layer-eagle"):
        return "pipeline parallelism only supports (single-layer) EAGLE/NEXTN speculative decoding"
    if ctx.spec.env_flag(PP_SPEC_ENV):
        if mode not in (None, "null"):
            return f"{PP_SPEC_ENV} is not compatible with --disaggregation-mode"
        if ctx.spec.has("--speculative-adaptive"):
            return f"{PP_SPEC_ENV} is not compatible with --speculative-adaptive"
        if attn_dp_enabled(ctx):
            return f"{PP_SPEC_ENV} is not compatible with attention DP"
        return None
    if mode != "prefill":
        return f"PP + speculative decoding only runs on prefill nodes (--disaggregation-mode prefill) or with {PP_SPEC_ENV}=1"
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    pp = ctx.spec.get("pp_size") or 1
    if ctx.algorithm is None or ctx.algorithm == "DFLASH" or pp <= 1:
        return  # DFLASH has its own pp check (PL003)
    why = reason(ctx)
    if why is None:
        return
    yield RULE.finding(
        f"{ctx.flag('--pp-size')} {pp} with {ctx.algorithm}: {why}. SGLang fails an assertion in "
        "check_server_args before anything starts",
        flags=("--pp-size",),
        fix=pp_off(ctx, pp),
    )


RULE = Rule(
    check=check,
    code="PL002",
    category=Category.START,
    name="pipeline-parallel-speculative",
    summary="Pipeline parallelism with speculative decoding outside the cases SGLang allows",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="With `--pp-size` > 1 and a speculative algorithm, checks SGLang's exceptions: EAGLE (NEXTN, not "
        "multi-layer) on a PD prefill node, EAGLE with `SGLANG_ENABLE_PP_SPEC=1` (no disaggregation, "
        "adaptive or attention DP), DSPARK on a PD prefill node.",
        why="Everything else fails the assertions of `check_pipeline_parallel_compat` (catalogue P46; 0.5.23 "
        "validation_hook.py:119-171), e.g. 'PP + speculative decoding (MTP) is only supported on prefill "
        "nodes'. DFLASH has its own pp check (PL003). The exceptions and `SGLANG_ENABLE_PP_SPEC` first appear "
        "in 0.5.21. From 0.4.6.post2 to 0.5.20 `check_server_args` asserted `speculative_algorithm is None` "
        "whenever pp > 1 ('Pipeline parallelism is not compatible with overlap schedule, speculative "
        "decoding', 0.4.6.post2 server_args.py:1276-1281, 0.5.14 server_args.py:6650-6654, 0.5.20 "
        "arg_groups/validation_hook.py:80-84), so every speculative algorithm fails there, on an NPU too (0.5.19 "
        "arg_groups/validation_hook.py:51-54 has no device branch). 0.5.20 gives the NPU its own branch "
        "(validation_hook.py:62-79): single-layer EAGLE/NEXTN on a `--disaggregation-mode prefill` node passes, "
        "anything else fails 'Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative "
        "decoding' or 'NPU PP + speculative decoding (MTP) is only supported on prefill nodes'; its overlap "
        "assert holds by itself, since pp > 1 turns the overlap scheduler off (overrides.py:1669-1674). 0.4.6 and "
        "earlier have no such check.",
        fix="Set pp 1 and move its GPUs to tensor parallelism.",
        fix_safety="Unsafe: it changes the parallel layout.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--pp-size", "2", "--speculative-algorithm", "EAGLE",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B"),
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--pp-size", "2", "--speculative-algorithm", "EAGLE",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B"),
        env={PP_SPEC_ENV: "1"},
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/validation_hook.py:119-171",
        "sglang 0.5.20: python/sglang/srt/arg_groups/validation_hook.py:62-84 (NPU branch :63-79); arg_groups/overrides.py:1669-1674",
        "sglang 0.5.19: python/sglang/srt/arg_groups/validation_hook.py:51-54 (no device branch)",
        "sglang 0.5.14: python/sglang/srt/server_args.py:6650-6654",
        "sglang 0.4.6.post2: python/sglang/srt/server_args.py:1276-1281",
        "catalogue: shared/design/sglang-spec-checks.md P34, P46",
    ),
    sglang_versions=">=0.4.6.post2",
)
