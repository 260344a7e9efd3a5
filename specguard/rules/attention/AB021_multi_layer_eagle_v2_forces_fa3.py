"""AB021 multi-layer-eagle-v2-forces-fa3."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, is_mla_target
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs
from specguard.sglang_facts.changes import FORCED_MULTI_LAYER_EAGLE


def forced_by_model(ctx: CheckContext) -> bool:
    forced = FORCED_MULTI_LAYER_EAGLE.get(ctx.target.architecture or "") if ctx.target is not None else None
    return forced is not None and forced.present_in(ctx.version)


def _fa3_runs(ctx: CheckContext) -> bool | None:
    """Whether FlashAttention 3 kernels run on this GPU (AB001's condition); None when unknown."""
    gpu = ctx.env.gpu
    if gpu is None or gpu.platform != "cuda" or not gpu.compute_capability:
        return None
    major = gpu.compute_capability[0]
    return major == 9 or (major == 8 and not is_mla_target(ctx))


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE":
        return
    forced = forced_by_model(ctx)
    typed = ctx.spec.has("--enable-multi-layer-eagle")
    if not (forced or typed):
        return
    # The V2 worker runs when the overlap scheduler does; the model overrides set SGLANG_ENABLE_SPEC_V2
    # themselves, so only --disable-overlap-schedule keeps them on the V1 worker.
    overlap = (
        not ctx.spec.has("--disable-overlap-schedule")
        if forced
        else ctx.resolution.disable_overlap_schedule is False
    )
    if not overlap or _fa3_runs(ctx) is not False:
        return
    gpu = ctx.env.gpu.name  # type: ignore[union-attr]
    why = (
        f"{ctx.target.architecture} with EAGLE turns on multi-layer EAGLE and SpecV2 by itself"  # type: ignore[union-attr]
        if forced and not typed
        else f"{ctx.flag('--enable-multi-layer-eagle')} with the overlap scheduler runs the multi-layer V2 worker"
    )
    yield RULE.finding(
        f"{why}, and in SGLang {ctx.version} that worker builds every draft-extend step on FlashAttentionBackend "
        f"(fa3) whatever {ctx.flag('--attention-backend')} says; fa3 has no kernels for the {gpu}, so capturing the "
        "draft-extend CUDA graph fails ('no kernel image is available for execution on the device'). SGLang 0.5.11 "
        f"routes it through the draft backend factory; on this release add {ctx.flag('--disable-overlap-schedule')} "
        "(the V1 multi-layer worker picks the draft backend like EAGLE does) or serve on Hopper",
        flags=("--disable-overlap-schedule", "--enable-multi-layer-eagle"),
    )


RULE = Rule(
    check=check,
    code="AB021",
    category=Category.START,
    name="multi-layer-eagle-v2-forces-fa3",
    summary="Multi-layer EAGLE on the SpecV2 worker builds its draft extend on fa3 (0.5.7-0.5.10) off Hopper",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Multi-layer EAGLE (`--enable-multi-layer-eagle`, or MiMo-V2-Flash / Step-3.5-Flash with EAGLE, whose "
        "model overrides turn it and SGLANG_ENABLE_SPEC_V2 on) with the overlap scheduler, in SGLang 0.5.7 to "
        "0.5.10.post1, on a GPU where fa3 has no kernels (Blackwell; MLA targets on Ampere/Ada).",
        why="`MultiLayerEagleWorkerV2.init_attention_backend` appends a `FlashAttentionBackend` for every draft "
        "step (0.5.7 speculative/multi_layer_eagle_worker_v2.py:175-183; 0.5.10.post1 :186-194), so the draft "
        "extend ignores `--attention-backend` and the GPU. On B200 the capture fails with 'no kernel image is "
        "available for execution on the device' in flash_fwd_launch_template.h (sglang#19125, Step-3.5-Flash). "
        "PRs 15559 and 17215 describe the same hardcoding for MiMo-V2-Flash MTP on RTX PRO 6000. 0.5.11 builds the "
        "draft-extend backends with `DraftBackendFactory` (multi_layer_eagle_worker_v2.py:191). The V1 multi-layer "
        "worker already used the factory (0.5.8.post1 multi_layer_eagle_worker.py:194).",
        fix="Add `--disable-overlap-schedule` (the V1 worker), upgrade to 0.5.11, or serve on Hopper. No automatic "
        "fix: both change how the server schedules.",
        fix_safety="No fix: the overlap scheduler's loss is the user's call.",
    ),
    bad=Example(
        argv=("--model-path", "stepfun-ai/Step-3.5-Flash-FP8", "--tp-size", "8", "--speculative-algorithm", "EAGLE",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
              "--enable-multi-layer-eagle"),
        target={"architectures": ("Step3p5ForCausalLM",)},
        gpu="B200",
        sglang_version="0.5.9",
    ),
    good=Example(
        argv=("--model-path", "stepfun-ai/Step-3.5-Flash-FP8", "--tp-size", "8", "--speculative-algorithm", "EAGLE",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
              "--enable-multi-layer-eagle"),
        target={"architectures": ("Step3p5ForCausalLM",)},
        gpu="B200",
        sglang_version="0.5.11",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/pull/19125",
        "https://github.com/sgl-project/sglang/pull/15559",
        "https://github.com/sgl-project/sglang/pull/17215",
        "sglang 0.5.7 / 0.5.10.post1: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:175-183 / :186-194",
        "sglang 0.5.11: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:191 (DraftBackendFactory)",
        "sglang 0.5.7: python/sglang/srt/server_args.py:1216-1223; 0.5.9 :1426-1433 (model overrides)",
        "sglang 0.5.8.post1: python/sglang/srt/speculative/spec_info.py:59-73 (V2 worker when overlap is on)",
    ),
    sglang_versions=">=0.5.7,<0.5.11",
    dialects=SGLANG_DIALECTS,
)
