"""FX090 custom-logit-processor-skipped-in-v2-verify."""

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
from specguard.sglang_facts.changes import SPEC_V2_ALWAYS

CUSTOM_PROCESSOR = "--enable-custom-logit-processor"
NO_OVERLAP = "--disable-overlap-schedule"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or not ctx.spec.has(CUSTOM_PROCESSOR):
        return
    v1_available = ctx.version < SPEC_V2_ALWAYS.release
    if v1_available and ctx.resolution.disable_overlap_schedule is not False:
        return  # the V1 worker runs, and its verify applies the processors
    message = (
        f"{ctx.flag(CUSTOM_PROCESSOR)} with {ctx.algorithm} on the SpecV2 worker in SGLang {ctx.version}: the V2 "
        "verify step samples without calling the request's custom logit processor, so it acts on the first token "
        "only and is ignored afterwards (a thinking budget or banned tokens have no effect, sglang#26330)"
    )
    if v1_available:
        yield RULE.finding(
            f"{message}; {ctx.flag(NO_OVERLAP)} runs the V1 worker, which applies it",
            flags=(CUSTOM_PROCESSOR, "--speculative-algorithm", NO_OVERLAP),
            fix=fix_of(f"add {NO_OVERLAP} (the V1 EAGLE worker)", Applicability.UNSAFE, Edit(name=NO_OVERLAP, value=True)),
        )
        return
    yield RULE.finding(
        f"{message}; from 0.5.13 there is no V1 worker to fall back to: drop speculative decoding for requests "
        "that need the processor",
        flags=(CUSTOM_PROCESSOR, "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="FX090",
    category=Category.WRONG_OUTPUT,
    needs=RequestFeature.CUSTOM_LOGIT_PROCESSOR,
    name="custom-logit-processor-skipped-in-v2-verify",
    summary="Custom logit processors are skipped by the SpecV2 EAGLE verify step",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="`--enable-custom-logit-processor` with EAGLE/NEXTN, EAGLE3 or STANDALONE on the SpecV2 worker: "
        "0.5.5-0.5.12 while the overlap scheduler runs (default on from 0.5.11), always from 0.5.13.",
        why="The V1 verify applies the processors to the verify logits (0.5.12 speculative/eagle_info.py:290-296), "
        "as do NGRAM and DFLASH; the V2 verify (`EagleVerifyInputV2Mixin.sample`, 0.5.13 "
        "speculative/eagle_info_v2.py:445-490; `eagle_sample` in 0.5.14+ speculative/eagle_utils.py:357) applies "
        "penalties and the grammar mask but never `apply_custom_logit_processor`, so after the prefill token "
        "the processor has no effect (sglang#21724 on Qwen3.5-35B-A3B with EAGLE and SGLANG_ENABLE_SPEC_V2=1; "
        "sglang#26330: a Qwen3 thinking budget ignored under NEXTN). The fixes (sglang#27290, #27769, #28373) "
        "were not merged; no release up to 0.5.23 calls it in the EAGLE verify. 0.5.13 removed the V1 worker.",
        fix="Before 0.5.13 add `--disable-overlap-schedule` (the V1 worker applies the processor); later, no "
        "speculative configuration applies it.",
        fix_safety="Unsafe: turning the overlap scheduler off changes the worker and its throughput.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--enable-custom-logit-processor", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "Tengyunw/qwen3_8b_eagle3", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        sglang_version="0.5.12",
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--enable-custom-logit-processor", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "Tengyunw/qwen3_8b_eagle3", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4", NO_OVERLAP),
        sglang_version="0.5.12",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/21724",
        "https://github.com/sgl-project/sglang/issues/26330",
        "https://github.com/sgl-project/sglang/pull/27290",
        "sglang 0.5.12: python/sglang/srt/speculative/eagle_info.py:290-296",
        "sglang 0.5.13: python/sglang/srt/speculative/eagle_info_v2.py:445-490",
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_utils.py (eagle_sample: no custom logit processor)",
    ),
    sglang_versions=">=0.5.5",
)
