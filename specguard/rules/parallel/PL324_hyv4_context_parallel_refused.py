"""PL324 hyv4-context-parallel-refused."""

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
from specguard.rules.spec_params._shared import int_flag

# The override is registered for the target class and its NextN draft class alike.
HYV4_ARCHITECTURES = frozenset({"HYV4ForCausalLM", "HYV4ForCausalLMNextN"})
PREFILL_CP = "--enable-prefill-cp"
DCP = "--dcp-size"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or ctx.target is None
        or ctx.target.architecture not in HYV4_ARCHITECTURES
    ):
        return
    if ctx.spec.has(PREFILL_CP):
        yield RULE.finding(
            f"{ctx.flag(PREFILL_CP)} with a Hunyuan V4 target in SGLang {ctx.env.sglang_version}: SGLang refuses it "
            'while it resolves the arguments, "--enable-prefill-cp is not supported for HYV4 because its attention '
            f'path does not implement DSA context-parallel metadata and sharding." Drop {ctx.flag(PREFILL_CP)}',
            flags=(PREFILL_CP,),
            fix=fix_of(
                f"drop {PREFILL_CP}",
                Applicability.UNSAFE,
                Edit(name=PREFILL_CP, value=None),
            ),
        )
    dcp = int_flag(ctx, DCP)
    if dcp is not None and dcp > 1:
        yield RULE.finding(
            f"{ctx.flag(DCP)} {dcp} with a Hunyuan V4 target in SGLang {ctx.env.sglang_version}: SGLang refuses it "
            'while it resolves the arguments, "--dcp-size > 1 is not supported for HYV4 because decode context '
            "parallelism gathers query heads across DCP ranks but does not provide single-owner semantics for "
            f'learnable attention sinks." Drop {ctx.flag(DCP)}',
            flags=(DCP,),
            fix=fix_of(f"drop {DCP}", Applicability.UNSAFE, Edit(name=DCP, value=None)),
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own argument checks
    check=check,
    code="PL324",
    category=Category.START,
    name="hyv4-context-parallel-refused",
    summary="A Hunyuan V4 target refuses --enable-prefill-cp and --dcp-size above 1 (0.5.20+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="A speculative launch on an `HYV4ForCausalLM` target with `--enable-prefill-cp` or `--dcp-size` above 1, "
        "SGLang 0.5.20 or later.",
        why="0.5.20 adds Hunyuan V4 (VB012 before it) and, in the DeepSeek-family model override that runs while the "
        "arguments resolve, two refusals for `HYV4ForCausalLM` and its `HYV4ForCausalLMNextN` draft "
        '(arg_groups/model_overrides/deepseek_v2.py:47-62): `ValueError("--enable-prefill-cp is not supported for '
        'HYV4 because its attention path does not implement DSA context-parallel metadata and sharding. ...")` and '
        '`ValueError("--dcp-size > 1 is not supported for HYV4 because decode context parallelism gathers query '
        'heads across DCP ranks but does not provide single-owner semantics for learnable attention sinks. ...")`. '
        "Both hold in 0.5.23 (deepseek_v2.py:61-76). They apply with or without speculation; specguard speaks of "
        "speculative launches.",
        fix="Drop the context-parallel flag.",
        fix_safety="Unsafe: it changes the parallel layout (memory per GPU, long-context throughput).",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "./HYV4",
            "--tp-size",
            "8",
            "--speculative-algorithm",
            "NEXTN",
            PREFILL_CP,
        ),
        target={"architectures": ("HYV4ForCausalLM",)},
        sglang_version="0.5.20",
    ),
    good=Example(
        argv=(
            "--model-path",
            "./HYV4",
            "--tp-size",
            "8",
            "--speculative-algorithm",
            "NEXTN",
        ),
        target={"architectures": ("HYV4ForCausalLM",)},
        sglang_version="0.5.20",
    ),
    sources=(
        "sglang 0.5.19: python/sglang/srt/models/ (no hunyuan_v4.py; arg_groups/model_overrides/deepseek_v2.py has no HYV4 branch)",
        "sglang 0.5.20: python/sglang/srt/arg_groups/model_overrides/deepseek_v2.py:47-62",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_overrides/deepseek_v2.py:61-76",
    ),
    sglang_versions=">=0.5.20",
    log_signatures=(
        r"--enable-prefill-cp is not supported for HYV4",
        r"--dcp-size > 1 is not supported for HYV4",
    ),
)
