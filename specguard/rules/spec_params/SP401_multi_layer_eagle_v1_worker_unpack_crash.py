"""SP401 multi-layer-eagle-v1-worker-unpack-crash."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B_EAGLE_CHAIN
from specguard.sglang_facts.changes import FORCED_MULTI_LAYER_EAGLE

MULTI_LAYER = "--enable-multi-layer-eagle"
NO_OVERLAP = "--disable-overlap-schedule"


def forced_by_model(ctx: CheckContext) -> bool:
    """The target's model override turns multi-layer EAGLE (and SGLANG_ENABLE_SPEC_V2) on by itself."""
    forced = (
        FORCED_MULTI_LAYER_EAGLE.get(ctx.target.architecture or "")
        if ctx.target is not None
        else None
    )
    return forced is not None and forced.present_in(ctx.version)


def runs_v1_multi_layer_worker(ctx: CheckContext) -> bool:
    """Multi-layer EAGLE with the overlap scheduler off, which dispatches to MultiLayerEagleWorker."""
    if forced_by_model(ctx):
        # The override sets SGLANG_ENABLE_SPEC_V2, so only the typed flag keeps the overlap scheduler off.
        return ctx.spec.has(NO_OVERLAP)
    return ctx.spec.has(MULTI_LAYER) and ctx.resolution.disable_overlap_schedule is True


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE" or not runs_v1_multi_layer_worker(ctx):
        return
    yield RULE.finding(
        f"multi-layer EAGLE with the overlap scheduler off in SGLang {ctx.version} runs the non-overlap "
        "MultiLayerEagleWorker, whose draft extend unpacks ModelRunner.forward() as a pair while it returns a "
        'ModelRunnerOutput: the first request that finishes prefill raises "TypeError: cannot unpack '
        'non-iterable ModelRunnerOutput object" and the scheduler dies. Run it on the overlap scheduler '
        f"(drop {ctx.flag(NO_OVERLAP)}; SGLANG_ENABLE_SPEC_V2=1 with topk 1), drop {ctx.flag(MULTI_LAYER)}, or "
        "upgrade to 0.5.9",
        flags=(MULTI_LAYER, NO_OVERLAP),
    )


RULE = Rule(
    check=check,
    code="SP401",
    category=Category.CRASH,
    name="multi-layer-eagle-v1-worker-unpack-crash",
    summary="Multi-layer EAGLE with the overlap scheduler off crashes at the first draft extend (0.5.7-0.5.8.post1)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="EAGLE/NEXTN with multi-layer EAGLE (`--enable-multi-layer-eagle`, or MiMo-V2-Flash, whose model "
        "override turns it on) and the overlap scheduler off (`--disable-overlap-schedule`, or SpecV2 not enabled "
        "so SGLang turns the overlap scheduler off for EAGLE), SGLang 0.5.7 to 0.5.8.post1.",
        why="With the overlap scheduler off the scheduler builds `MultiLayerEagleWorker` (0.5.7 "
        "managers/scheduler.py:506-534; 0.5.8.post1 speculative/spec_info.py:60-73). Its `forward_draft_extend` "
        "and `forward_draft_extend_after_decode` do `logits_output, _ = self.mtp_model_runner(step).forward(...)` "
        "(0.5.7 and 0.5.8.post1 speculative/multi_layer_eagle_worker.py:616, :721), but `ModelRunner.forward` "
        "returns the `ModelRunnerOutput` dataclass (0.5.7 model_executor/model_runner.py:251-255, :2203; 0.5.8.post1 "
        ":254-257, :2228), which is not iterable. The draft extend runs right after the first target prefill "
        "(multi_layer_eagle_worker.py:245-253), so the first request crashes the scheduler. 0.5.9 reads "
        "`.logits_output` (multi_layer_eagle_worker.py:624). 0.5.6.post2 has no multi-layer EAGLE.",
        fix="Use the overlap scheduler (SpecV2: `SGLANG_ENABLE_SPEC_V2=1`, topk 1, no `--disable-overlap-schedule`), "
        "drop `--enable-multi-layer-eagle`, or upgrade to 0.5.9. No automatic fix: each changes how the server runs.",
        fix_safety="No fix: the scheduler and the release are the user's choice.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE_CHAIN, MULTI_LAYER), sglang_version="0.5.8.post1"
    ),
    good=Example(argv=(*LLAMA31_8B_EAGLE_CHAIN, MULTI_LAYER), sglang_version="0.5.9"),
    sources=(
        "sglang 0.5.6.post2: python/sglang/srt/speculative/ (no multi_layer_eagle_worker.py)",
        "sglang 0.5.7: python/sglang/srt/managers/scheduler.py:506-534; speculative/multi_layer_eagle_worker.py:616,721",
        "sglang 0.5.7: python/sglang/srt/model_executor/model_runner.py:251-255,2203",
        "sglang 0.5.8.post1: python/sglang/srt/speculative/spec_info.py:60-73; speculative/multi_layer_eagle_worker.py:616,721",
        "sglang 0.5.8.post1: python/sglang/srt/model_executor/model_runner.py:254-257,2228",
        "sglang 0.5.9: python/sglang/srt/speculative/multi_layer_eagle_worker.py:624",
    ),
    sglang_versions=">=0.5.7,<=0.5.8.post1",
    log_signatures=(r"cannot unpack non-iterable ModelRunnerOutput object",),
)
