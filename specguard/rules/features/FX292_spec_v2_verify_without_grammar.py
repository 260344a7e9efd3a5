"""FX292 spec-v2-verify-without-grammar."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, RequestFeature, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE_CHAIN
from specguard.rules.spec_params._spec_v2 import (
    ENV,
    back_to_v1,
    runs_overlapped_spec_v2,
    v2_switch,
)

GRAMMAR_BACKEND = "--grammar-backend"
DISAGGREGATION = "--disaggregation-mode"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not runs_overlapped_spec_v2(ctx):
        return
    backend = ctx.spec.item(GRAMMAR_BACKEND)
    if backend is not None and backend.values and backend.values[-1] == "none":
        return  # constrained requests are refused before they reach the worker
    mode = ctx.spec.item(DISAGGREGATION)
    if mode is not None and mode.values and mode.values[-1] == "decode":
        return  # FX093: a PD decode server aborts these requests instead
    chosen = v2_switch(ctx)
    yield RULE.finding(
        f"{ctx.algorithm} on the SpecV2 worker ({chosen}) in SGLang {ctx.version}: its verify samples the draft tree "
        "without the grammar's vocab mask and never advances the grammar, so json_schema, regex and ebnf requests get "
        "unconstrained tokens after the first one (the V1 worker masks them). Fixed in 0.5.6; otherwise run the V1 "
        f"worker, or refuse structured output with {ctx.flag(GRAMMAR_BACKEND)} none",
        flags=("--speculative-algorithm", GRAMMAR_BACKEND),
        fix=back_to_v1(ctx),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="FX292",
    category=Category.WRONG_OUTPUT,
    needs=RequestFeature.STRUCTURED_OUTPUT,
    name="spec-v2-verify-without-grammar",
    summary="EAGLE on the SpecV2 overlap worker before 0.5.6 verifies without the grammar mask: structured output is not enforced",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 or NEXTN on the SpecV2 worker with the overlap scheduler on (`--enable-beta-spec` in "
        "0.5.3.post2-0.5.4, `SGLANG_ENABLE_SPEC_V2=1` in 0.5.5-0.5.5.post3), unless `--grammar-backend none`; "
        "a PD decode server is FX093's.",
        why="Up to 0.5.5.post3 `EAGLEWorkerV2.verify` (speculative/eagle_worker_v2.py:631-; 0.5.3.post2 :230-) and "
        "`EagleVerifyInputV2Mixin.sample` (eagle_info_v2.py:253-300) have no grammar branch: the tree is verified on "
        "raw logits, and the scheduler does not advance a speculative request's grammar in decode either (it does so "
        "only without speculation, managers/scheduler_output_processor_mixin.py:369-380), so every token after the "
        "prefill's is unconstrained. The V1 `EAGLEWorker.verify` builds the mask (eagle_worker.py:663-680). 0.5.6 "
        "adds it to V2: `generate_token_bitmask` in `verify` (eagle_worker_v2.py:675-711) and `apply_vocab_mask` in "
        "`sample` (eagle_info_v2.py:280-285). The launch cannot tell whether clients send constrained requests, so "
        "this is a warning.",
        fix="Upgrade to 0.5.6 or later, run the V1 worker (drop `--enable-beta-spec` / unset `SGLANG_ENABLE_SPEC_V2`), "
        "or set `--grammar-backend none` so constrained requests are refused.",
        fix_safety="Unsafe: the V1 worker runs without the overlap scheduler (slower).",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE_CHAIN, env={ENV: "1"}, sglang_version="0.5.5.post3"
    ),
    good=Example(argv=LLAMA31_8B_EAGLE_CHAIN, env={ENV: "1"}, sglang_version="0.5.6"),
    sources=(
        "sglang 0.5.3.post2: python/sglang/srt/speculative/eagle_worker_v2.py:230-",
        "sglang 0.5.5.post3: python/sglang/srt/speculative/eagle_worker_v2.py:631-",
        "sglang 0.5.5.post3: python/sglang/srt/speculative/eagle_info_v2.py:253-300",
        "sglang 0.5.5.post3: python/sglang/srt/managers/scheduler_output_processor_mixin.py:369-380",
        "sglang 0.5.5.post3: python/sglang/srt/speculative/eagle_worker.py:663-680",
        "sglang 0.5.6: python/sglang/srt/speculative/eagle_worker_v2.py:675-711",
        "sglang 0.5.6: python/sglang/srt/speculative/eagle_info_v2.py:280-285",
    ),
    sglang_versions=">=0.5.3.post2,<=0.5.5.post3",
)
