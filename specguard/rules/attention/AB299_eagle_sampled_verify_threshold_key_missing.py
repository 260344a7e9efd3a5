"""AB299 eagle-sampled-verify-threshold-key-missing."""

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
        f"{ctx.algorithm} in SGLang {ctx.version}: the first batch that is not all greedy (any request with "
        "temperature > 0, SGLang's default) takes the new sampled verify, which reads "
        "global_server_args_dict['speculative_accept_threshold_single'], a key this release never sets, so the "
        "scheduler dies with \"KeyError: 'speculative_accept_threshold_single'\". Upgrade to 0.4.2.post4, or send "
        "greedy requests only",
        flags=("--speculative-algorithm",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB299",
    category=Category.CRASH,
    name="eagle-sampled-verify-threshold-key-missing",
    summary="EAGLE on 0.4.2.post3: the first sampled batch raises KeyError 'speculative_accept_threshold_single'",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE` on SGLang 0.4.2.post3, serving any request with temperature > 0.",
        why="0.4.2.post3 teaches the EAGLE verify to sample: when the batch is not all greedy it calls "
        "`tree_speculative_sampling_target_only` with `threshold_single=global_server_args_dict["
        '"speculative_accept_threshold_single"]` and `threshold_acc=...["speculative_accept_threshold_acc"]` '
        "(speculative/eagle_utils.py:258-321). Neither the dict's defaults (managers/schedule_batch.py:58-68) nor "
        "the model runner's update (model_executor/model_runner.py:161-173) hold those keys and no flag sets them, so "
        "the lookup raises \"KeyError: 'speculative_accept_threshold_single'\" on the first such batch; SGLang's "
        "default sampling params sample (temperature 1.0). 0.4.2.post4 calls the kernel without them "
        "(eagle_utils.py:354-366); the flags arrive in 0.4.3.post4.",
        fix="Upgrade to 0.4.2.post4 or later, or send greedy requests only (temperature 0).",
        fix_safety="No fix: no flag of this release sets the key.",
    ),
    bad=Example(argv=LLAMA31_8B_EAGLE, sglang_version="0.4.2.post3"),
    good=Example(argv=LLAMA31_8B_EAGLE, sglang_version="0.4.2.post4"),
    sources=(
        "sglang 0.4.2.post2: python/sglang/srt/speculative/eagle_utils.py:260-273 (argmax for every request)",
        "sglang 0.4.2.post3: python/sglang/srt/speculative/eagle_utils.py:258-321",
        "sglang 0.4.2.post3: python/sglang/srt/managers/schedule_batch.py:58-68",
        "sglang 0.4.2.post3: python/sglang/srt/model_executor/model_runner.py:161-173",
        "sglang 0.4.2.post4: python/sglang/srt/speculative/eagle_utils.py:354-366",
    ),
    sglang_versions="==0.4.2.post3",
    log_signatures=(r"KeyError: 'speculative_accept_threshold_single'",),
)
