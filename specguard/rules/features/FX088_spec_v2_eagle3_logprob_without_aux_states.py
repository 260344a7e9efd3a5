"""FX088 spec-v2-eagle3-logprob-without-aux-states."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import (
    Category,
    Finding,
    RequestFeature,
    Severity,
)
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B_EAGLE3_CHAIN
from specguard.rules.spec_params._spec_v2 import back_to_v1, v2_switch

NO_OVERLAP = "--disable-overlap-schedule"


def check(ctx: CheckContext) -> Iterator[Finding]:
    # Only an EAGLE3 draft hands aux hidden states to its logits processor, and only the SpecV2
    # worker runs the draft prefill in CaptureHiddenMode.LAST, the branch that concatenates them.
    if ctx.algorithm != "EAGLE3" or ctx.resolution.disable_overlap_schedule is not False:
        return
    yield RULE.finding(
        f"EAGLE3 on the SpecV2 (overlap) worker in SGLang {ctx.version}: a request that asks for logprobs "
        "(return_logprob, or logprobs in the OpenAI API) takes the logits processor's input-logprob branch, which "
        "never fills the aux hidden states, and the draft prefill then concatenates None: the scheduler dies "
        "(UnboundLocalError or TypeError in torch.cat, sglang#17349). Fixed in 0.5.11; otherwise run the V1 worker: "
        f"before 0.5.11 only {v2_switch(ctx)} chooses V2, and it turns the overlap scheduler back on over a typed "
        f"{NO_OVERLAP} (0.5.9 server_args.py:2367-2372)",
        flags=("--speculative-algorithm",),
        fix=back_to_v1(ctx),
    )


RULE = Rule(
    check=check,
    code="FX088",
    category=Category.CRASH,
    needs=RequestFeature.LOGPROBS,
    name="spec-v2-eagle3-logprob-without-aux-states",
    summary="EAGLE3 on the SpecV2 worker before 0.5.11 crashes on a request that returns logprobs",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="EAGLE3 running on the SpecV2 (overlap) worker, SGLang 0.5.5 to 0.5.10 (where V2 needs "
        "`SGLANG_ENABLE_SPEC_V2=1`).",
        why="`LogitsProcessor` prunes hidden states three ways in an extend batch; the third, used when the batch "
        "returns input logprobs, builds `pruned_states` but never `aux_pruned_states` (0.5.8 "
        "layers/logits_processor.py:406-447; 0.5.9-0.5.10 start it at None, :407). The SpecV2 worker runs the draft "
        "prefill with `CaptureHiddenMode.LAST` (0.5.10 speculative/eagle_worker_v2.py:701-702), and an EAGLE3 draft "
        "passes aux hidden states, so `torch.cat(aux_pruned_states)` (0.5.8 :547, 0.5.10 :562) raises: "
        "UnboundLocalError in sglang#17349 (gpt-oss-120b), `cat() received an invalid combination of arguments - "
        "got (NoneType, dim=int)` in sglang#20555 (Llama-3.1-8B). V1 does not hit it. 0.5.11 collects the aux "
        "states in that branch too (logits_processor.py:483-537). The launch cannot tell whether clients ask for "
        "logprobs, so this is a warning.",
        fix="Upgrade to 0.5.11 or later, or drop what chose the V2 worker (`SGLANG_ENABLE_SPEC_V2`, or "
        "`--enable-beta-spec`) so the V1 EAGLE worker runs; a typed `--disable-overlap-schedule` does not help while "
        "the variable is set (0.5.4.post1-0.5.10.post1 turn the overlap scheduler back on over it).",
        fix_safety="Unsafe: turning the overlap scheduler off changes the worker and its throughput.",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE3_CHAIN,
        env={"SGLANG_ENABLE_SPEC_V2": "1"},
        sglang_version="0.5.9",
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE3_CHAIN,
        env={"SGLANG_ENABLE_SPEC_V2": "1"},
        sglang_version="0.5.11",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/17349",
        "https://github.com/sgl-project/sglang/pull/20555",
        "sglang 0.5.8: python/sglang/srt/layers/logits_processor.py:406-447,547",
        "sglang 0.5.10: python/sglang/srt/speculative/eagle_worker_v2.py:690-705",
        "sglang 0.5.11: python/sglang/srt/layers/logits_processor.py:483-537",
    ),
    sglang_versions=">=0.5.5,<0.5.11",
)
