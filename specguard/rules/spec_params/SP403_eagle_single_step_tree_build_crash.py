"""SP403 eagle-single-step-tree-build-crash."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA2_7B_EAGLE

STEPS = "--speculative-num-steps"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE" or ctx.spec.get("speculative_num_steps") != 1:
        return
    yield RULE.finding(
        f"{ctx.flag(STEPS)} 1 with {ctx.spec.get('speculative_algorithm')} in SGLang {ctx.version}: the draft tree "
        "is built from every draft step's parents but the last, which with one step is an empty list, so the first "
        'decode batch raises "RuntimeError: torch.cat(): expected a non-empty list of Tensors" and the scheduler '
        f"dies. Use {ctx.flag(STEPS)} 2 or more, or upgrade to 0.4.3.post4, which builds an empty parent list",
        flags=(STEPS,),
    )


RULE = Rule(
    check=check,
    code="SP403",
    category=Category.CRASH,
    name="eagle-single-step-tree-build-crash",
    summary="EAGLE/NEXTN with --speculative-num-steps 1 crashes at the first decode (0.4.2.post2-0.4.3.post2)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm` EAGLE or NEXTN with `--speculative-num-steps 1`, SGLang 0.4.2.post2 to 0.4.3.post2.",
        why="From 0.4.2.post2 the EAGLE worker's draft loop appends one parents tensor per step "
        "(speculative/eagle_worker.py:212-218; 0.4.3.post2 :234-240) and the verify tree is built from "
        "`torch.cat(parents_list[:-1], dim=1)` (0.4.2.post2 speculative/eagle_utils.py:191; from 0.4.2.post3 in "
        "build_eagle_tree.py `build_tree_kernel_efficient_preprocess`, 0.4.3.post2 :35, used by both the greedy and "
        "the sampling tree builders). With one step the slice is empty and torch.cat raises on the first decode. "
        "0.4.3.post4 builds an empty parent list when there is one step (build_eagle_tree.py:30-34).",
        fix="Use two or more draft steps, or upgrade to 0.4.3.post4. No automatic fix: the step count shapes the tree.",
        fix_safety="No fix: the tree shape is the user's choice.",
    ),
    bad=Example(
        argv=(
            *LLAMA2_7B_EAGLE,
            STEPS,
            "1",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "2",
        ),
        sglang_version="0.4.3.post2",
    ),
    good=Example(
        argv=(
            *LLAMA2_7B_EAGLE,
            STEPS,
            "1",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "2",
        ),
        sglang_version="0.4.3.post4",
    ),
    sources=(
        "sglang 0.4.2: python/sglang/srt/speculative/eagle_worker.py (draft steps through EagleDraftInput, no parents_list loop)",
        "sglang 0.4.2.post2: python/sglang/srt/speculative/eagle_worker.py:212-218; speculative/eagle_utils.py:191",
        "sglang 0.4.3.post2: python/sglang/srt/speculative/eagle_worker.py:234-240; speculative/build_eagle_tree.py:16-37",
        "sglang 0.4.3.post4: python/sglang/srt/speculative/build_eagle_tree.py:30-34",
    ),
    sglang_versions=">=0.4.2.post2,<=0.4.3.post2",
    log_signatures=(r"torch\.cat\(\): expected a non-empty list of Tensors",),
)
