"""SP008 adaptive-spec-unsupported."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

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
from specguard.rules.examples import LLAMA31_8B_EAGLE
from specguard.sglang_facts.changes import (
    ADAPTIVE_CANDIDATE_CHECK,
    ADAPTIVE_CANDIDATE_FIVE,
    ADAPTIVE_CANDIDATE_ZERO,
    Change,
    as_of,
)

ADAPTIVE = "--speculative-adaptive"
# Whether SGLang switches adaptive off is decided in resolution.adaptive_off_reason.
# The union of the default tiers' candidate_steps (speculative/adaptive_spec_params.py), newest
# first: 0.5.13 [1, 3, 7] + [1, 3] + [1]; 0.5.14-0.5.19 [1, 3, 7] + [0, 1, 3] + [0, 1] + [0];
# 0.5.20 added 5. Before 0.5.13 SGLang added the starting steps to the candidates, raising nothing.
CANDIDATE_STEPS: tuple[tuple[Change, tuple[int, ...]], ...] = (
    (ADAPTIVE_CANDIDATE_FIVE, (0, 1, 3, 5, 7)),
    (ADAPTIVE_CANDIDATE_ZERO, (0, 1, 3, 7)),
    (ADAPTIVE_CANDIDATE_CHECK, (1, 3, 7)),
)


def candidate_steps(version: Version) -> tuple[int, ...] | None:
    """The steps the default adaptive config accepts; None where specguard has not read the check."""
    return as_of(CANDIDATE_STEPS, version, before=None)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not ctx.spec.has(ADAPTIVE):
        return
    reason = ctx.resolution.adaptive_off_reason  # decided once, in resolution (RS001 reads the same)
    if reason is not None:
        yield RULE.finding(
            f"{ctx.flag(ADAPTIVE)} is switched off by SGLang because {reason}: it logs a warning and runs "
            "the static parameters",
            flags=(ADAPTIVE,),
            fix=fix_of(f"drop {ADAPTIVE}, which SGLang turns off", Applicability.SAFE, Edit(name=ADAPTIVE, value=None)),
            severity=Severity.WARNING,
        )
        return
    candidates = candidate_steps(ctx.version)
    if ctx.spec.has("--speculative-adaptive-config") or candidates is None:
        return  # its own candidate steps: not readable here; before 0.5.13 not checked
    steps = ctx.spec.get("speculative_num_steps")
    if steps is None or steps in candidates:
        return
    usable = [c for c in candidates if c >= 1]
    nearest = min(usable, key=lambda c: (abs(c - steps), c))
    steps_flag = ctx.flag("--speculative-num-steps")
    yield RULE.finding(
        f"{steps_flag} {steps} is not one of the adaptive candidate steps {list(candidates)}: SGLang "
        f"{ctx.version} raises 'is not in the adaptive config candidate_steps' at argument time. Use one of them",
        flags=("--speculative-num-steps",),
        fix=set_flags(
            f"set {steps_flag} {nearest}",
            Applicability.UNSAFE,
            speculative_num_steps=nearest,
            speculative_num_draft_tokens=nearest + 1 if ctx.spec.has("--speculative-num-draft-tokens") else None,
        ),
    )


RULE = Rule(
    check=check,
    code="SP008",
    category=Category.START,
    name="adaptive-spec-unsupported",
    summary="--speculative-adaptive with a configuration it cannot run",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Checks `--speculative-adaptive` against the cases SGLang disables it for, and the starting "
        "`--speculative-num-steps` against the default candidate steps.",
        why="SGLang turns adaptive off with only a warning for algorithms other than EAGLE/EAGLE3, topk != 1, "
        "attention DP, multi-layer EAGLE, two-batch overlap and PD-multiplexing, and raises when the steps "
        "are not a candidate (catalogue P55; 0.5.23 speculative_hook.py:1374-1427, "
        "adaptive_spec_params.py:56-100). The check arrived in 0.5.13 (speculative_hook.py:120-130, "
        "adaptive_spec_params.py:129-139); the default candidates are {1, 3, 7} in 0.5.13, {0, 1, 3, 7} in "
        "0.5.14-0.5.19 and {0, 1, 3, 5, 7} from 0.5.20; 0.5.12 added the starting steps to the candidates instead. The flag appeared in 0.5.11 (server_args.py:3619-3630, 5530-5540) with "
        "the same reasons plus the overlap scheduler (adaptive_spec_params.py:38-42 'adaptive is only "
        "implemented for EAGLEWorker v1'), which 0.5.11 runs by default for EAGLE/EAGLE3 chains, so a plain "
        "`--speculative-adaptive` there is switched off; 0.5.12 removed that reason.",
        fix="Drop the flag where SGLang turns it off; pick the nearest candidate step count otherwise.",
        fix_safety="Dropping a flag SGLang disables is safe; changing the steps is unsafe.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE, "--speculative-adaptive", "--speculative-num-steps", "4",
              "--speculative-eagle-topk", "1"),
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE, "--speculative-adaptive", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1"),
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:261-264, 1374-1427",
        "sglang 0.5.23: python/sglang/srt/speculative/adaptive_spec_params.py:56-100",
        "sglang 0.5.20: python/sglang/srt/speculative/adaptive_spec_params.py (candidate_steps [1, 3, 5, 7])",
        "sglang 0.5.14: python/sglang/srt/speculative/adaptive_spec_params.py:24-42; arg_groups/speculative_hook.py:502-507",
        "sglang 0.5.13: python/sglang/srt/arg_groups/speculative_hook.py:120-130; speculative/adaptive_spec_params.py:23-42, 129-139",
        "sglang 0.5.12: python/sglang/srt/speculative/adaptive_spec_params.py:94-106 (the starting steps joined the candidates)",
        "sglang 0.5.11: python/sglang/srt/speculative/adaptive_spec_params.py:18-56; python/sglang/srt/server_args.py:3619-3630",
        "https://github.com/sgl-project/sglang/pull/23336",
        "catalogue: shared/design/sglang-spec-checks.md P55",
    ),
    sglang_versions=">=0.5.11",
    log_signatures=(
        r"is not in the adaptive config candidate_steps",
    ),
)
