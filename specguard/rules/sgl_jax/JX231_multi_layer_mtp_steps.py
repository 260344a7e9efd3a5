"""JX231 multi-layer-mtp-steps."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, set_flags
from specguard.rules.sgl_jax._jax import (
    TOPK_DRAFT_ALGORITHMS,
    params,
    raw_algorithm,
    runnable_in,
)
from specguard.sglang_facts.sgl_jax import MULTI_LAYER_MTP, MULTI_LAYER_TOPK1


def check(ctx: CheckContext) -> Iterator[Finding]:
    algorithm = raw_algorithm(ctx)
    built = ctx.env.sgl_jax_built
    # The scheduler routes every is_eagle() algorithm (EAGLE, EAGLE3, NEXTN) by the target's MTP head count.
    if algorithm not in TOPK_DRAFT_ALGORITHMS or algorithm not in runnable_in(built) or ctx.target is None:
        return
    layers = ctx.target.num_nextn_predict_layers
    if layers is None or layers <= 1 or (built is not None and not MULTI_LAYER_MTP.present_in(built)):
        return
    steps, topk, _ = params(ctx)
    if steps != layers:
        yield RULE.finding(
            f"the target has {layers} MTP layers (num_nextn_predict_layers), so sgl-jax runs {algorithm} with its "
            f"multi-layer draft worker, one runner per layer, which asserts '--speculative-num-steps={steps} must "
            f"equal the model's num_nextn_predict_layers={layers}' as the server starts. Set "
            f"{ctx.flag('--speculative-num-steps')} {layers}"
            + (" (sgl-jax's default is 4)" if ctx.spec.get("speculative_num_steps") is None else ""),
            flags=("--speculative-num-steps",),
            fix=set_flags(f"set steps {layers}", Applicability.SAFE, speculative_num_steps=layers),
        )
    if topk != 1 and (built is None or MULTI_LAYER_TOPK1.present_in(built)):
        yield RULE.finding(
            f"the target has {layers} MTP layers, so sgl-jax runs {algorithm} with its multi-layer draft worker, "
            f"which asserts 'MultiLayerDraftWorker fused decode requires topk=1, got {topk}' as the server starts. "
            f"Set {ctx.flag('--speculative-eagle-topk')} 1"
            + (" (sgl-jax's default is 5)" if ctx.spec.get("speculative_eagle_topk") is None else ""),
            flags=("--speculative-eagle-topk",),
            fix=set_flags("set topk 1", Applicability.SAFE, speculative_eagle_topk=1),
        )


# A target whose config.json has three MTP layers (the condition, not a particular checkpoint).
_MTP3 = ("--model-path", "m", "--speculative-algorithm", "NEXTN", "--speculative-eagle-topk", "1",
         "--disable-overlap-schedule")


def _example(*extra: str) -> Example:
    return Example(
        argv=(*_MTP3, *extra),
        target={"num_nextn_predict_layers": 3},
        dialect=Dialect.SGL_JAX,
        gpu="TPU-v6e",
    )


RULE = Rule(
    check=check,
    code="JX231",
    category=Category.START,
    name="multi-layer-mtp-steps",
    summary="sgl-jax: a target with several MTP layers needs steps equal to their count and topk 1",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="sgl-jax EAGLE, EAGLE3 or NEXTN launches whose target's config.json `num_nextn_predict_layers` is "
        "above 1, with `--speculative-num-steps` (default 4) other than that count, or (from b735f16e) "
        "`--speculative-eagle-topk` (default 5) other than 1.",
        why="From sglang-jax #1192 (10fe9e8b, 2026-05-28) the scheduler picks `MultiLayerEAGLEWorker` for any "
        "is_eagle() algorithm when the target's `num_nextn_predict_layers` is above 1 (scheduler.py:329-340; "
        "cddbf6f1 :381-401), and its `MultiLayerDraftWorker` builds one runner per MTP layer and asserts "
        "`cfg_mtp is None or cfg_mtp == speculative_num_steps` (10fe9e8b multi_layer_draft_worker.py:78-85; "
        "cddbf6f1 :77-87). #1293 (b735f16e, 2026-06-24) adds `assert self.topk == 1` for its fused decode "
        "(:78-80, unchanged at cddbf6f1). Before #1192 there is no multi-layer path (10fe9e8b^ scheduler.py never "
        "reads num_nextn_predict_layers). A target with one MTP layer (DeepSeek-V3) keeps the single-layer worker.",
        fix="Set `--speculative-num-steps` to the target's `num_nextn_predict_layers`, and `--speculative-eagle-topk 1`.",
        fix_safety="Safe: they are the only values the multi-layer worker runs with.",
    ),
    bad=_example("--speculative-num-steps", "2", "--speculative-num-draft-tokens", "3"),
    good=_example("--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4"),
    sources=(
        "sglang-jax 10fe9e8b^: python/sgl_jax/srt/managers/scheduler.py (no num_nextn_predict_layers, one EAGLEWorker)",
        "sglang-jax 10fe9e8b (#1192): python/sgl_jax/srt/managers/scheduler.py:329-340; speculative/multi_layer_draft_worker.py:78-85",
        "sglang-jax b735f16e (#1293): python/sgl_jax/srt/speculative/multi_layer_draft_worker.py:78-80 (topk 1)",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/managers/scheduler.py:381-401; speculative/multi_layer_draft_worker.py:77-87",
    ),
    dialects=(Dialect.SGL_JAX,),
    log_signatures=(
        r"--speculative-num-steps=\d+ must equal the model's num_nextn_predict_layers=\d+",
        r"MultiLayerDraftWorker fused decode requires topk=1",
    ),
)
