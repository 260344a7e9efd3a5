"""FX500 custom-logit-processor-ignored-by-early-eagle-verify."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

CUSTOM_PROCESSOR = "--enable-custom-logit-processor"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or not ctx.spec.has(
        CUSTOM_PROCESSOR
    ):
        return
    yield RULE.finding(
        f"{ctx.flag(CUSTOM_PROCESSOR)} with {ctx.algorithm} in SGLang {ctx.version}: the EAGLE verify takes the "
        "target's logits without sampling them (skip_sample) and never calls the request's custom logit processor, "
        "so the processor shapes the first token only and every speculative token after it ignores it (banned "
        "tokens come back). 0.4.7.post1 applies it in the verify; upgrade, or serve those requests without "
        "speculative decoding",
        flags=(CUSTOM_PROCESSOR, "--speculative-algorithm"),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="FX500",
    category=Category.WRONG_OUTPUT,
    needs=RequestFeature.CUSTOM_LOGIT_PROCESSOR,
    name="custom-logit-processor-ignored-by-early-eagle-verify",
    summary="EAGLE on 0.4.1.post7-0.4.7: custom logit processors are ignored after the first token",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--enable-custom-logit-processor` with EAGLE/NEXTN or EAGLE3 on SGLang 0.4.1.post7 to 0.4.7.",
        why="The flag arrived in 0.4.1.post7 (server_args.py:163; 0.4.1.post5 has none). Only the sampler applies "
        "a request's processor (0.4.1.post7 layers/sampler.py:40-41; 0.4.7 :61-62). The EAGLE worker runs the target's verify forward with "
        "`skip_sample=True` (0.4.1.post7 speculative/eagle_worker.py:125; 0.4.7 :563-567, which skips "
        "`model_runner.sample` in managers/tp_worker.py:208-213) and `EagleVerifyInput.verify` picks the tokens "
        "from the raw logits (0.4.1.post7 speculative/eagle_utils.py:528 argmax; 0.4.7 :264-523, which imports "
        "`apply_custom_logit_processor` at :17 but never calls it). So only the prefill token, which the normal "
        "sampler draws, sees the processor. 0.4.7.post1 calls `apply_custom_logit_processor` on the verify logits "
        "(eagle_utils.py:294-300). The SpecV2 worker of 0.5.5+ skips it again (FX090).",
        fix="Upgrade to 0.4.7.post1 or later, or send requests that need a custom logit processor to a server "
        "without speculative decoding.",
        fix_safety="No fix: the release decides it.",
    ),
    bad=Example(argv=(*LLAMA31_8B_EAGLE, CUSTOM_PROCESSOR), sglang_version="0.4.7"),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE, CUSTOM_PROCESSOR), sglang_version="0.4.7.post1"
    ),
    sources=(
        "sglang 0.4.1.post5: python/sglang/srt/server_args.py (no enable_custom_logit_processor)",
        "sglang 0.4.1.post7: python/sglang/srt/server_args.py:163",
        "sglang 0.4.1.post7: python/sglang/srt/speculative/eagle_worker.py:125",
        "sglang 0.4.1.post7: python/sglang/srt/speculative/eagle_utils.py:528",
        "sglang 0.4.7: python/sglang/srt/speculative/eagle_worker.py:563-567",
        "sglang 0.4.7: python/sglang/srt/managers/tp_worker.py:208-213",
        "sglang 0.4.7: python/sglang/srt/speculative/eagle_utils.py:17,264-523",
        "sglang 0.4.7.post1: python/sglang/srt/speculative/eagle_utils.py:294-300",
    ),
    sglang_versions=">=0.4.1.post7,<=0.4.7",
)
