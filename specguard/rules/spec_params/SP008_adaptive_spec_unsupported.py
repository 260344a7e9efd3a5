"""SP008 adaptive-spec-unsupported."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from specguard.models import Applicability, Edit, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of, set_flags
from specguard.rules.spec_params._shared import attn_dp_enabled

ADAPTIVE = "--speculative-adaptive"
# The union of the default tiers' candidate_steps (speculative/adaptive_spec_params.py):
# 0.5.18-0.5.19 [1, 3, 7] + [0, 1, 3] + [0, 1]; 0.5.20 added 5.
FIVE_SINCE = Version("0.5.20")


def candidate_steps(version: Version) -> tuple[int, ...]:
    return (0, 1, 3, 5, 7) if version >= FIVE_SINCE else (0, 1, 3, 7)


def unsupported_reason(ctx: CheckContext) -> str | None:
    """``adaptive_unsupported_reason`` (0.5.23 speculative/adaptive_spec_params.py:56-100)."""
    topk = ctx.spec.get("speculative_eagle_topk")
    if ctx.algorithm not in ("EAGLE", "EAGLE3"):
        return f"it supports only EAGLE/EAGLE3, not {ctx.algorithm}"
    if topk is not None and topk != 1:
        return f"it supports only topk 1, not {topk}"
    if attn_dp_enabled(ctx):
        return "it does not support attention DP"
    for flag in ("--enable-multi-layer-eagle", "--enable-two-batch-overlap", "--enable-pdmux"):
        if ctx.spec.has(flag):
            return f"it does not support {ctx.flag(flag)}"
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not ctx.spec.has(ADAPTIVE):
        return
    reason = unsupported_reason(ctx)
    if reason is not None:
        yield RULE.finding(
            f"{ctx.flag(ADAPTIVE)} is switched off by SGLang because {reason}: it logs a warning and runs "
            "the static parameters",
            flags=(ADAPTIVE,),
            fix=fix_of(f"drop {ADAPTIVE}, which SGLang turns off", Applicability.SAFE, Edit(name=ADAPTIVE, value=None)),
            severity=Severity.WARNING,
        )
        return
    if ctx.spec.has("--speculative-adaptive-config"):
        return  # its own candidate steps: not readable here
    steps = ctx.spec.get("speculative_num_steps")
    candidates = candidate_steps(ctx.version)
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
    name="adaptive-spec-unsupported",
    summary="--speculative-adaptive with a configuration it cannot run",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Checks `--speculative-adaptive` against the cases SGLang disables it for, and the starting "
        "`--speculative-num-steps` against the default candidate steps.",
        why="SGLang turns adaptive off with only a warning for algorithms other than EAGLE/EAGLE3, topk != 1, "
        "attention DP, multi-layer EAGLE, two-batch overlap and PD-multiplexing, and raises when the steps "
        "are not a candidate (catalogue P55; 0.5.23 speculative_hook.py:1374-1427, "
        "adaptive_spec_params.py:56-100). The default candidates are {0, 1, 3, 7} in 0.5.18-0.5.19 and "
        "{0, 1, 3, 5, 7} from 0.5.20.",
        fix="Drop the flag where SGLang turns it off; pick the nearest candidate step count otherwise.",
        fix_safety="Dropping a flag SGLang disables is safe; changing the steps is unsafe.",
    ),
    bad=Example(
        argv=("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B",
              "--speculative-adaptive", "--speculative-num-steps", "4", "--speculative-eagle-topk", "1"),
    ),
    good=Example(
        argv=("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B",
              "--speculative-adaptive", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1"),
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:261-264, 1374-1427",
        "sglang 0.5.23: python/sglang/srt/speculative/adaptive_spec_params.py:56-100",
        "sglang 0.5.20: python/sglang/srt/speculative/adaptive_spec_params.py (candidate_steps [1, 3, 5, 7])",
        "catalogue: shared/design/sglang-spec-checks.md P55",
    ),
    sglang_versions=">=0.5.18",
)
