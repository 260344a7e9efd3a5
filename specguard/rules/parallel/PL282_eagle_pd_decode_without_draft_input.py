"""PL282 eagle-pd-decode-without-draft-input."""

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
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or ctx.spec.get("disaggregation_mode") != "decode"
    ):
        return
    yield RULE.finding(
        f"{ctx.algorithm} on a PD decode node ({ctx.flag('--disaggregation-mode')} decode) in SGLang "
        f"{ctx.env.sglang_version}: a request handed over from the prefill node gets no EAGLE draft input (and no "
        "draft KV cache), so the first decode step's draft fails with \"'NoneType' object has no attribute "
        "'positions'\" (or 'verified_id' with penalties) and the decode server dies. SGLang 0.4.6.post5 adds the "
        "EAGLE hand-over; until then serve EAGLE without PD disaggregation",
        flags=("--disaggregation-mode", "--speculative-algorithm"),
    )


EAGLE_DECODE = (*LLAMA31_8B_EAGLE, "--disaggregation-mode", "decode")

RULE = Rule(
    check=check,
    code="PL282",
    category=Category.CRASH,
    name="eagle-pd-decode-without-draft-input",
    summary="EAGLE/EAGLE3/NEXTN on a PD decode node before SGLang 0.4.6.post5: handed-over requests have no draft input",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--speculative-algorithm` EAGLE, EAGLE3 or NEXTN with `--disaggregation-mode decode`, SGLang 0.4.4.post2 "
        "(the first release with PD disaggregation) through 0.4.6.post4.",
        why="A decode node receives the prompt's KV cache and first token from the prefill node and turns them into "
        "a running batch in `process_prebuilt_extend`, which sets only the output ids (0.4.4.post2 "
        "disaggregation/decode.py:390-404; 0.4.6.post4 :442-456): no `EagleDraftInput`, and the KV manager "
        "registers only the target's KV pool. The next decode step runs `EAGLEWorker.draft`, which reads "
        "`batch.spec_info` (0.4.6.post4 speculative/eagle_worker.py:251-253, 306-309) and sets "
        "`spec_info.positions` on None (:384), an AttributeError in the scheduler. 0.4.6.post5 registers the draft "
        "KV pool for transfer (disaggregation/decode.py:120-126, prefill.py:104-112) and builds the draft input "
        "for the prebuilt batch (disaggregation/decode_schedule_batch_mixin.py:108-141).",
        fix="Upgrade to SGLang 0.4.6.post5 or later (both PD nodes), or serve EAGLE without PD disaggregation.",
        fix_safety="No automatic fix: both options change the deployment.",
    ),
    bad=Example(argv=EAGLE_DECODE, sglang_version="0.4.6.post4"),
    good=Example(argv=EAGLE_DECODE, sglang_version="0.4.6.post5"),
    sources=(
        "sglang 0.4.4.post1: python/sglang/srt/server_args.py (no disaggregation_mode)",
        "sglang 0.4.4.post2: python/sglang/srt/disaggregation/decode.py:390-404",
        "sglang 0.4.6.post4: python/sglang/srt/disaggregation/decode.py:442-456; speculative/eagle_worker.py:251-253,306-309,384",
        "sglang 0.4.6.post5: python/sglang/srt/disaggregation/decode_schedule_batch_mixin.py:108-141; disaggregation/decode.py:120-126",
    ),
    sglang_versions=">=0.4.4.post2,<0.4.6.post5",
    log_signatures=(r"'NoneType' object has no attribute '(positions|verified_id)'",),
)
