"""SP009 rejection-sampling-unsupported."""

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
    set_flags,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.rules.spec_params._shared import device, float_flag
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS
from specguard.sglang_facts.changes import (
    DETERMINISTIC_REJECTION_ON_CUDA,
    REJECTION_IMPLIED_BY_BLOCK,
)

REJECTION = "--speculative-use-rejection-sampling"
BLOCK = "--speculative-use-block-verification"
THRESHOLDS = ("--speculative-accept-threshold-single", "--speculative-accept-threshold-acc")
DETERMINISTIC = "--enable-deterministic-inference"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None:
        return
    # Block verification (0.5.22+) turns rejection sampling on for EAGLE/EAGLE3 (speculative_hook.py:185-193).
    implied = ctx.spec.has(BLOCK) and ctx.algorithm in EAGLE_HEAD_ALGORITHMS and REJECTION_IMPLIED_BY_BLOCK.present_in(ctx.version)
    if not (ctx.spec.has(REJECTION) or implied):
        return
    why = ctx.flag(REJECTION) if ctx.spec.has(REJECTION) else f"{ctx.flag(BLOCK)} (which turns on rejection sampling)"
    if ctx.algorithm not in EAGLE_HEAD_ALGORITHMS:
        yield RULE.finding(
            f"{why} is only implemented for EAGLE, EAGLE3 and NEXTN: SGLang raises NotImplementedError for "
            f"{ctx.algorithm} at argument time",
            flags=(REJECTION,),
            fix=fix_of(f"drop {REJECTION}", Applicability.UNSAFE, Edit(name=REJECTION, value=None)),
        )
        return
    topk = ctx.spec.get("speculative_eagle_topk")
    effective = topk if topk is not None else ctx.resolution.eagle_topk
    if effective is not None and effective != 1:
        steps = ctx.spec.get("speculative_num_steps") or ctx.resolution.num_steps or 3
        origin = "" if topk is not None else " (SGLang's automatic choice for this target)"
        yield RULE.finding(
            f"{why} needs {ctx.flag('--speculative-eagle-topk')} 1, and the topk is {effective}{origin}: SGLang "
            "raises '--speculative-use-rejection-sampling requires --speculative-eagle-topk=1.'",
            flags=("--speculative-eagle-topk",),
            fix=set_flags(
                f"set topk 1 with {steps} steps and {steps + 1} draft tokens",
                Applicability.UNSAFE,
                speculative_num_steps=steps,
                speculative_eagle_topk=1,
                speculative_num_draft_tokens=steps + 1,
            ),
        )
    yield from _deterministic(ctx, why, implied)
    set_thresholds = tuple(f for f in THRESHOLDS if float_flag(ctx, f) not in (None, 1.0))
    if set_thresholds:
        yield RULE.finding(
            f"{why} ignores the accept thresholds, and SGLang rejects {', '.join(ctx.flag(f) for f in set_thresholds)} "
            "other than 1.0 with it at argument time",
            flags=set_thresholds,
            fix=fix_of("drop the accept thresholds", Applicability.UNSAFE, *(Edit(name=f, value=None) for f in set_thresholds)),
        )


def _deterministic(ctx: CheckContext, why: str, implied: bool) -> Iterator[Finding]:
    """Deterministic inference: refused on every device up to 0.5.22, only off CUDA from 0.5.23."""
    if not ctx.spec.has(DETERMINISTIC):
        return
    drop = fix_of(
        f"drop {REJECTION}" + (f" and {BLOCK}" if implied else ""),
        Applicability.UNSAFE,
        Edit(name=REJECTION, value=None),
        *((Edit(name=BLOCK, value=None),) if implied else ()),
    )
    if not DETERMINISTIC_REJECTION_ON_CUDA.present_in(ctx.version):
        yield RULE.finding(
            f"{why} with {ctx.flag(DETERMINISTIC)} in SGLang {ctx.version}: SGLang raises '--speculative-use-rejection-"
            "sampling is incompatible with --enable-deterministic-inference' at argument time (its sampling kernel "
            "is not batch-invariant). 0.5.23 allows the pair on CUDA",
            flags=(REJECTION, DETERMINISTIC),
            fix=drop,
        )
        return
    where = device(ctx)
    if where is not None and where != "cuda":
        yield RULE.finding(
            f"{why} with {ctx.flag(DETERMINISTIC)} on device {where!r}: SGLang raises 'Deterministic rejection "
            "sampling is currently supported only on CUDA-compatible devices' at argument time (the draft proposals "
            "are sampled by a Triton hash kernel)",
            flags=(REJECTION, DETERMINISTIC, "--device"),
            fix=drop,
        )


RULE = Rule(
    check=check,
    code="SP009",
    category=Category.START,
    name="rejection-sampling-unsupported",
    summary="Rejection sampling with an algorithm, topk or thresholds it does not support",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="With `--speculative-use-rejection-sampling` (or, from 0.5.22, block verification on EAGLE/EAGLE3, "
        "which turns it on), checks the algorithm, the effective topk, the accept thresholds and "
        "`--enable-deterministic-inference`.",
        why="SGLang raises at argument time: NotImplementedError unless EAGLE/EAGLE3/NEXTN, ValueError for "
        "topk != 1 (including Llama's automatic topk 4) and for accept thresholds other than 1.0 (catalogue "
        "P52, P51; 0.5.23 speculative_hook.py:1210-1253). These guards came with the flag in 0.5.14 "
        "(speculative_hook.py:341-380; 0.5.13 has neither). With `--enable-deterministic-inference` it raised on "
        "every device from 0.5.14 to 0.5.22 (0.5.22 speculative_hook.py:1144-1149); 0.5.23 draws the draft "
        "proposals with a Triton hash kernel and refuses the pair only off CUDA (speculative_hook.py:1225-1230).",
        fix="Use topk 1 (a chain); drop the thresholds; on other algorithms, or with deterministic inference "
        "where it is refused, drop the flag.",
        fix_safety="Unsafe: each changes what runs.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--speculative-use-rejection-sampling", "--speculative-num-steps", "5",
              "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8"),
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--speculative-use-rejection-sampling", "--speculative-num-steps", "5",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "6"),
    ),
    sources=(
        "sglang 0.5.13: python/sglang/srt/server_args.py (no speculative_use_rejection_sampling)",
        "sglang 0.5.14: python/sglang/srt/arg_groups/speculative_hook.py:341-380",
        "sglang 0.5.22: python/sglang/srt/arg_groups/speculative_hook.py:1119-1162",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1210-1253",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:175-195 (block verification)",
        "catalogue: shared/design/sglang-spec-checks.md P51, P52",
    ),
    sglang_versions=">=0.5.14",
    log_signatures=(
        r"--speculative-use-rejection-sampling requires --speculative-eagle-topk=1",
        r"--speculative-use-rejection-sampling is incompatible with --enable-deterministic-inference",
        r"Deterministic rejection sampling is currently supported only on CUDA-compatible devices",
    ),
)
