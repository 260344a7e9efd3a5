"""FX093 pd-decode-spec-v2-grammar-abort."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import (
    Applicability,
    Category,
    Edit,
    Finding,
    RequestFeature,
    Severity,
)
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

DISAGGREGATION = "--disaggregation-mode"
GRAMMAR_BACKEND = "--grammar-backend"


def check(ctx: CheckContext) -> Iterator[Finding]:
    mode = ctx.spec.item(DISAGGREGATION)
    if mode is None or not mode.values or mode.values[-1] != "decode" or ctx.algorithm not in EAGLE_WORKER_ALGORITHMS:
        return
    if ctx.resolution.disable_overlap_schedule is not False:
        return  # the reports and both fixes concern the overlap decode loop of the SpecV2 worker
    backend = ctx.spec.item(GRAMMAR_BACKEND)
    if backend is not None and backend.values and backend.values[-1] == "none":
        return  # constrained requests are refused before they reach the decode loop
    yield RULE.finding(
        f"{ctx.algorithm} on a PD decode server ({ctx.flag(DISAGGREGATION)} decode) with the SpecV2 overlap loop in "
        f"SGLang {ctx.version}: the decode loop launches the next speculative batch before the previous result has "
        "advanced the grammar and accepts the verified tokens against it twice, so json_schema, regex and "
        "tool_choice requests end in FINISH_ABORT ('Tokens not accepted', sglang#25388, #29110) and under DP "
        f"attention the ranks can hang (sglang#28039). Fixed in 0.5.14; otherwise {ctx.flag(GRAMMAR_BACKEND)} none "
        "refuses constrained requests",
        flags=(DISAGGREGATION, GRAMMAR_BACKEND, "--speculative-algorithm"),
        fix=fix_of(f"set {GRAMMAR_BACKEND} none", Applicability.UNSAFE, Edit(name=GRAMMAR_BACKEND, value="none")),
    )


RULE = Rule(
    check=check,
    code="FX093",
    category=Category.CRASH,
    needs=RequestFeature.STRUCTURED_OUTPUT,
    name="pd-decode-spec-v2-grammar-abort",
    summary="A PD decode server running SpecV2 EAGLE/MTP before 0.5.14 aborts grammar-constrained requests",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="`--disaggregation-mode decode` with EAGLE/NEXTN, EAGLE3 or STANDALONE on the SpecV2 overlap worker, "
        "SGLang 0.5.5 to 0.5.13, unless `--grammar-backend none`.",
        why="`event_loop_overlap_disagg_decode` overlapped every batch (0.5.13 disaggregation/decode.py:1731-1830), "
        "without the `is_disable_overlap_for_batch` guard the collocated overlap loop applies to spec + grammar "
        "batches, so the next draft was built against a grammar that had not yet taken the previous accepted "
        "tokens; and the SpecV2 result path accepted the verified tokens into the grammar a second time. A token "
        "the grammar has already taken or forbids then fails `accept_token` (\"Tokens not accepted: <token>\", "
        "0.5.10 constrained/xgrammar_backend.py:80, 0.5.13 :86) and the request aborts: GLM-5.1 with "
        "MTP in PD (sglang#25388, 0.5.11), GLM-5.2-FP8 with EAGLE on a PD decode engine, every tool_choice or "
        "response_format request aborted (sglang#29110); with DP attention one rank diverges and the engine hangs "
        "(sglang#28039). 0.5.14 adds the guard (decode.py:1799-1800, sglang#28039) and accepts grammar tokens once, "
        "stopping at grammar completion (managers/scheduler_components/batch_result_processor.py:527-, "
        "`_accept_grammar_tokens`, sglang#24082/#28682). The launch cannot tell whether clients send constrained "
        "requests, so this is a warning.",
        fix="Upgrade to 0.5.14 or later, or set `--grammar-backend none` on the decode server so constrained "
        "requests are refused.",
        fix_safety="Unsafe: `--grammar-backend none` turns structured output and forced tool calls off.",
    ),
    bad=Example(
        argv=("--model-path", "zai-org/GLM-5.1-FP8", "--disaggregation-mode", "decode", "--speculative-algorithm",
              "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4"),
        sglang_version="0.5.12",
    ),
    good=Example(
        argv=("--model-path", "zai-org/GLM-5.1-FP8", "--disaggregation-mode", "decode", "--speculative-algorithm",
              "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4"),
        sglang_version="0.5.14",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/25388",
        "https://github.com/sgl-project/sglang/issues/29110",
        "https://github.com/sgl-project/sglang/pull/24082",
        "https://github.com/sgl-project/sglang/pull/28039",
        "https://github.com/sgl-project/sglang/pull/28682",
        "sglang 0.5.13: python/sglang/srt/disaggregation/decode.py:1731-1830",
        "sglang 0.5.14: python/sglang/srt/disaggregation/decode.py:1778-1800",
        "sglang 0.5.14: python/sglang/srt/managers/scheduler_components/batch_result_processor.py:527",
    ),
    sglang_versions=">=0.5.5,<0.5.14",
    log_signatures=(r"Tokens not accepted: ",),
)
