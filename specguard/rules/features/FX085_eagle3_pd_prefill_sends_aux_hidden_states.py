"""FX085 eagle3-pd-prefill-sends-aux-hidden-states."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B_EAGLE3

MODE = "--disaggregation-mode"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE3" or ctx.spec.get("disaggregation_mode") != "prefill":
        return
    yield RULE.finding(
        f"EAGLE3 on a PD prefill server ({ctx.flag(MODE)} prefill) in SGLang {ctx.version}: the prefill side "
        "sends the target's concatenated aux hidden states instead of the draft's hidden state, so the KV "
        "transfer fails with a shape error in the prefill event loop (sglang#10059, fixed by sglang#9976 in "
        "0.5.3). Upgrade to 0.5.3 or later, or use EAGLE (one hidden state) under PD",
        flags=("--speculative-algorithm", MODE),
    )


RULE = Rule(
    check=check,
    code="FX085",
    category=Category.CRASH,
    name="eagle3-pd-prefill-sends-aux-hidden-states",
    summary="EAGLE3 on a PD-disaggregation prefill server before 0.5.3",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE3` with `--disaggregation-mode prefill` before 0.5.3.",
        why="Under PD the prefill server hands each request's last hidden state to the decode server with its "
        "KV. Up to 0.5.2 it took that state from the target's `logits_output.hidden_states` (0.5.2 "
        "disaggregation/prefill.py:410-418), which under EAGLE3 holds the concatenated aux hidden states "
        "(3x hidden size), not the state the draft consumes; the transfer then fails with a shape error "
        "(sglang#10059). sglang#9976 takes `batch.spec_info.hidden_states` for EAGLE3 (0.5.3 "
        "disaggregation/prefill.py:427-434).",
        fix="Upgrade to 0.5.3 or later.",
        fix_safety="No automatic fix: the alternatives change the release or the algorithm.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, MODE, "prefill"),
        sglang_version="0.5.2",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, MODE, "prefill"),
        sglang_version="0.5.3",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/10059",
        "https://github.com/sgl-project/sglang/pull/9976",
        "sglang 0.5.2: python/sglang/srt/disaggregation/prefill.py:410-418",
        "sglang 0.5.3: python/sglang/srt/disaggregation/prefill.py:427-434",
    ),
    sglang_versions="<0.5.3",
)
