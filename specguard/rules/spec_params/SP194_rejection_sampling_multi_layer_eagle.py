"""SP194 rejection-sampling-multi-layer-eagle."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS
from specguard.sglang_facts.changes import FORCED_MULTI_LAYER_EAGLE

REJECTION = "--speculative-use-rejection-sampling"
MULTI_LAYER = "--enable-multi-layer-eagle"
MIMO_V2_FLASH_CHAIN = (
    "--model-path",
    "XiaomiMiMo/MiMo-V2-Flash",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)


def multi_layer_source(ctx: CheckContext) -> str | None:
    """Why multi-layer EAGLE is on: the flag, or a target whose model override turns it on for EAGLE as
    written (the override runs before the speculative hook aliases NEXTN); None when it is off or unknown."""
    if ctx.spec.has(MULTI_LAYER):
        return ctx.flag(MULTI_LAYER)
    architecture = ctx.target.architecture if ctx.target is not None else None
    forced = FORCED_MULTI_LAYER_EAGLE.get(architecture or "")
    if (
        forced is not None
        and forced.present_in(ctx.version)
        and ctx.spec.get("speculative_algorithm") == "EAGLE"
    ):
        return f"the {architecture} target, whose model override turns multi-layer EAGLE on for EAGLE"
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_HEAD_ALGORITHMS or not ctx.spec.has(REJECTION):
        return
    source = multi_layer_source(ctx)
    if source is None:
        return
    yield RULE.finding(
        f"{ctx.flag(REJECTION)} with multi-layer EAGLE ({source}) in SGLang {ctx.version}: rejection sampling is not "
        "implemented for the multi-layer draft, so argument handling raises (NotImplementedError "
        "'--speculative-use-rejection-sampling is not supported with multi-layer EAGLE (--enable-multi-layer-eagle).'). "
        f"Drop {ctx.flag(REJECTION)}, or upgrade to 0.5.16, which runs it on a topk-1 chain",
        flags=(REJECTION, MULTI_LAYER) if ctx.spec.has(MULTI_LAYER) else (REJECTION,),
        fix=fix_of(
            f"drop {REJECTION}", Applicability.UNSAFE, Edit(name=REJECTION, value=None)
        ),
    )


RULE = Rule(
    check=check,
    code="SP194",
    category=Category.START,
    name="rejection-sampling-multi-layer-eagle",
    summary="--speculative-use-rejection-sampling with multi-layer EAGLE is refused at argument time (0.5.14-0.5.15.post1)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-use-rejection-sampling` with EAGLE/EAGLE3/NEXTN and multi-layer EAGLE on "
        "(`--enable-multi-layer-eagle`, or a MiMo-V2-Flash / Step-3.5 target launched with "
        "`--speculative-algorithm EAGLE`, whose model override turns it on), SGLang 0.5.14 to 0.5.15.post1.",
        why="0.5.14 added rejection sampling and refused it with multi-layer EAGLE: `_handle_eagle_family` raises "
        "NotImplementedError '--speculative-use-rejection-sampling is not supported with multi-layer EAGLE' "
        "(0.5.14 arg_groups/speculative_hook.py:372-376, reading server_args after the model overrides; "
        "0.5.15 and 0.5.15.post1 :429-433 through resolved_view, which includes them). 0.5.16 allows it on a "
        "topk-1 chain and raises only for topk != 1 (speculative_hook.py:609-618), which multi-layer EAGLE "
        "already refuses (SP020). 0.5.13 has no rejection sampling.",
        fix="Drop `--speculative-use-rejection-sampling` (or upgrade to 0.5.16+ and keep a topk-1 chain).",
        fix_safety="Unsafe: verification goes back to greedy/threshold acceptance, which changes sampled output.",
    ),
    bad=Example(
        argv=(*MIMO_V2_FLASH_CHAIN, MULTI_LAYER, REJECTION),
        sglang_version="0.5.15.post1",
    ),
    good=Example(
        argv=(*MIMO_V2_FLASH_CHAIN, MULTI_LAYER, REJECTION), sglang_version="0.5.16"
    ),
    sources=(
        "sglang 0.5.13: python/sglang/srt/server_args.py (no speculative_use_rejection_sampling)",
        "sglang 0.5.14: python/sglang/srt/arg_groups/speculative_hook.py:341-380",
        "sglang 0.5.14: python/sglang/srt/server_args.py:3968-3972,4000-4004 (MiMoV2 / Step3p5 turn it on for EAGLE)",
        "sglang 0.5.15.post1: python/sglang/srt/arg_groups/speculative_hook.py:396-437",
        "sglang 0.5.16: python/sglang/srt/arg_groups/speculative_hook.py:609-618",
    ),
    sglang_versions=">=0.5.14,<=0.5.15.post1",
    log_signatures=(
        r"--speculative-use-rejection-sampling is not supported with multi-layer EAGLE",
    ),
)
