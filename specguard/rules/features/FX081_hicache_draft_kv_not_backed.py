"""FX081 hicache-draft-kv-not-backed."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

HICACHE = "--enable-hierarchical-cache"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.spec.has(HICACHE) or ctx.algorithm not in EAGLE_WORKER_ALGORITHMS:
        return
    yield RULE.finding(
        f"{ctx.flag(HICACHE)} with {ctx.algorithm} in SGLang {ctx.version}: HiCache backs up and loads back "
        "only the target's KV, so after a prefix comes back from host memory or storage the draft reads KV "
        "slots that hold other requests' data and the accept length falls (fixed in 0.5.11, sglang#21125)",
        flags=(HICACHE,),
    )


RULE = Rule(
    check=check,
    code="FX081",
    category=Category.PERF,
    name="hicache-draft-kv-not-backed",
    summary="HiCache with a draft that keeps its own KV cache, in a release that does not back that cache up",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--enable-hierarchical-cache` with EAGLE/NEXTN, EAGLE3 or STANDALONE before 0.5.11.",
        why="Draft and target share `req_to_token_pool` but keep separate KV pools. HiCache moved only the "
        "target pool to L2/L3 and back, so on a host or storage hit the shared index table points the draft at "
        "stale KV ('the draft model ends up drafting based on a random KV cache', sglang#17338) and acceptance "
        "drops; the draft cannot re-prefill because the target's hidden states are skipped on load-back "
        "(sglang#21125, which pairs the two pools; first shipped in 0.5.11).",
        fix="Upgrade to 0.5.11 or later, or serve without HiCache while speculating.",
        fix_safety="No automatic fix: dropping HiCache changes cache capacity and TTFT.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, HICACHE),
        sglang_version="0.5.9",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, HICACHE),
        sglang_version="0.5.11",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/16964",
        "https://github.com/sgl-project/sglang/pull/17338",
        "https://github.com/sgl-project/sglang/pull/21125",
        "sglang 0.5.11: python/sglang/srt/managers/scheduler.py:990-1030",
        "sglang 0.5.11: python/sglang/srt/managers/cache_controller.py:843-852",
    ),
    sglang_versions="<0.5.11",
)
