"""FX092 multi-layer-eagle-verify-without-grammar."""

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
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS
from specguard.sglang_facts.changes import SPEC_V2_ALWAYS

MULTI_LAYER = "--enable-multi-layer-eagle"
GRAMMAR_BACKEND = "--grammar-backend"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_HEAD_ALGORITHMS or not ctx.spec.has(MULTI_LAYER):
        return
    if ctx.version < SPEC_V2_ALWAYS.release and ctx.resolution.disable_overlap_schedule is not False:
        return  # the V1 multi-layer worker runs
    item = ctx.spec.item(GRAMMAR_BACKEND)
    if item is not None and item.values and item.values[-1] == "none":
        return  # structured-output requests are refused before they reach the worker
    yield RULE.finding(
        f"{ctx.flag(MULTI_LAYER)} on the SpecV2 worker in SGLang {ctx.version}: its verify samples without the "
        "grammar's vocab mask, so draft tokens are accepted unconstrained and the grammar rejects them afterwards: "
        "json_schema, regex and ebnf requests end in FINISH_ABORT (sglang#31978; fixed in 0.5.16). Upgrade, or "
        f"refuse structured output with {ctx.flag(GRAMMAR_BACKEND)} none",
        flags=(MULTI_LAYER, GRAMMAR_BACKEND),
        fix=fix_of(f"set {GRAMMAR_BACKEND} none", Applicability.UNSAFE, Edit(name=GRAMMAR_BACKEND, value="none")),
    )


RULE = Rule(
    check=check,
    code="FX092",
    category=Category.WRONG_OUTPUT,
    needs=RequestFeature.STRUCTURED_OUTPUT,
    name="multi-layer-eagle-verify-without-grammar",
    summary="Multi-layer EAGLE on the SpecV2 worker before 0.5.16 verifies without the grammar mask",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="`--enable-multi-layer-eagle` on the SpecV2 worker (overlap on before 0.5.13, always from 0.5.13), "
        "SGLang 0.5.7 to 0.5.15, unless `--grammar-backend none`.",
        why="`MultiLayerEagleWorkerV2.verify` calls `verify_input.sample(batch, logits_output)` (0.5.7 "
        "speculative/multi_layer_eagle_worker_v2.py:677, 0.5.13 :813) or `eagle_sample(verify_input, batch, "
        "logits_output)` (0.5.14 :873, 0.5.15 :822) without generating the token bitmask that the single-layer "
        "`EAGLEWorkerV2.verify` passes, so the verify accepts tokens the grammar forbids and the grammar then "
        "cannot advance: structured-output requests abort (sglang#31978). 0.5.16 routes both workers through "
        "`run_eagle_verify` (speculative/eagle_worker_common.py:456-570), which builds the mask. The launch cannot "
        "tell whether clients send constrained requests, so this is a warning.",
        fix="Upgrade to 0.5.16 or later, or set `--grammar-backend none` so constrained requests are refused.",
        fix_safety="Unsafe: `--grammar-backend none` turns structured output off.",
    ),
    bad=Example(
        argv=("--model-path", "XiaomiMiMo/MiMo-V2-Flash", "--speculative-algorithm", "EAGLE", MULTI_LAYER,
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        sglang_version="0.5.15",
    ),
    good=Example(
        argv=("--model-path", "XiaomiMiMo/MiMo-V2-Flash", "--speculative-algorithm", "EAGLE", MULTI_LAYER,
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        sglang_version="0.5.16",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/31978",
        "sglang 0.5.13: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:813",
        "sglang 0.5.15: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:822",
        "sglang 0.5.16: python/sglang/srt/speculative/eagle_worker_common.py:456-570",
    ),
    sglang_versions=">=0.5.7,<0.5.16",
)
