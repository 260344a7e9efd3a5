"""FX091 spec-return-hidden-states-truncated."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, RequestFeature, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA2_7B_EAGLE

RETURN_HIDDEN = "--enable-return-hidden-states"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not ctx.spec.has(RETURN_HIDDEN):
        return
    yield RULE.finding(
        f"{ctx.flag(RETURN_HIDDEN)} with {ctx.algorithm} in SGLang {ctx.version}: each decode step stores one hidden "
        "state per request (row i of the verify output) although a speculative step emits several tokens, so "
        "return_hidden_states comes back shorter than the completion and, with more than one request in the batch, "
        "can carry another request's rows; no error is raised (sglang#26163). Fixed in 0.5.14",
        flags=(RETURN_HIDDEN, "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="FX091",
    category=Category.WRONG_OUTPUT,
    needs=RequestFeature.HIDDEN_STATES,
    name="spec-return-hidden-states-truncated",
    summary="Under speculative decoding before 0.5.14, returned hidden states are truncated and can be misattributed",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--enable-return-hidden-states` with any speculative algorithm, SGLang before 0.5.14.",
        why="`process_batch_result_decode` appends `logits_output.hidden_states[i]` once per request and step on "
        "the speculative paths as on the plain one (0.4.9 managers/scheduler_output_processor_mixin.py:262, 0.5.12 "
        ":540-545 for V1 and the V2 branch below it, 0.5.13 scheduler_components/batch_result_processor.py:649,683). "
        "A verify step emits up to steps + 1 tokens and its hidden states are laid out per accepted token (V1) or "
        "strided by the draft-token count (V2), so the request receives one row per step, and row i can belong to "
        "another request (sglang#26163: 'silently returns fewer per-token hidden states than completion_tokens ... "
        "with possible cross-request misattribution'). sglang#28496 slices each request's accepted rows, first in "
        "0.5.14 (batch_result_processor.py:716-733); 0.5.13 dropped the V1 paths.",
        fix="Upgrade to 0.5.14 or later, or serve requests that need hidden states without speculative decoding.",
        fix_safety="No automatic fix: the choice is between the speed-up and the hidden states.",
    ),
    bad=Example(
        argv=(*LLAMA2_7B_EAGLE, RETURN_HIDDEN),
        sglang_version="0.5.12",
    ),
    good=Example(
        argv=(*LLAMA2_7B_EAGLE, RETURN_HIDDEN),
        sglang_version="0.5.14",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/26163",
        "https://github.com/sgl-project/sglang/pull/28496",
        "sglang 0.5.12: python/sglang/srt/managers/scheduler_output_processor_mixin.py:524-545",
        "sglang 0.5.13: python/sglang/srt/managers/scheduler_components/batch_result_processor.py:640-690",
        "sglang 0.5.14: python/sglang/srt/managers/scheduler_components/batch_result_processor.py:716-733",
    ),
    sglang_versions="<0.5.14",
)
