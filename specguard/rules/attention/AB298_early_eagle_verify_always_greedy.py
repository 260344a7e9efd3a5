"""AB298 early-eagle-verify-always-greedy."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS:
        return
    yield RULE.finding(
        f"{ctx.algorithm} in SGLang {ctx.version}: the verify compares the draft with the target's argmax for every "
        "request, so requests with temperature > 0 (SGLang's default sampling params sample) get greedy tokens and "
        "temperature, top_p and top_k are ignored. 0.4.2.post4 samples them (0.4.2.post3 crashes on them, AB299)",
        flags=("--speculative-algorithm",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB298",
    category=Category.WRONG_OUTPUT,
    name="early-eagle-verify-always-greedy",
    summary="EAGLE on 0.4.1.post5-0.4.2.post2: the verify is greedy for every request, sampling params are ignored",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE` on SGLang 0.4.1.post5 to 0.4.2.post2, on any device.",
        why="The first EAGLE releases verify with `predict = torch.argmax(logits_output.next_token_logits, dim=-1)` and "
        "accept the draft tokens that match it, for every request (0.4.1.post5 speculative/eagle_utils.py:527-541; "
        "0.4.2.post2 :260-273). A request's temperature, top_p and top_k never enter the verify, so sampled requests, "
        "SGLang's default (temperature 1.0, sampling/sampling_params.py:35), are decoded greedily. 0.4.2.post3 samples "
        "when the batch is not all greedy (`tree_speculative_sampling_target_only`, eagle_utils.py:258-321), but "
        "reads accept thresholds no key holds (AB299); 0.4.2.post4 is the first that serves them "
        "(eagle_utils.py:301-366). 0.4.1.post3 has no EAGLE worker.",
        fix="Upgrade to 0.4.2.post4 or later, or send greedy requests only.",
        fix_safety="No fix: the release decides it.",
    ),
    bad=Example(argv=LLAMA31_8B_EAGLE, sglang_version="0.4.2.post2"),
    good=Example(argv=LLAMA31_8B_EAGLE, sglang_version="0.4.2.post4"),
    sources=(
        "sglang 0.4.1.post3: python/sglang/srt/speculative (spec_info.py only, no EAGLE worker)",
        "sglang 0.4.1.post5: python/sglang/srt/speculative/eagle_utils.py:527-541",
        "sglang 0.4.2.post2: python/sglang/srt/speculative/eagle_utils.py:260-273",
        "sglang 0.4.2.post3: python/sglang/srt/speculative/eagle_utils.py:252-321",
        "sglang 0.4.2.post4: python/sglang/srt/speculative/eagle_utils.py:301-366",
    ),
    sglang_versions=">=0.4.1.post5,<=0.4.2.post2",
)
