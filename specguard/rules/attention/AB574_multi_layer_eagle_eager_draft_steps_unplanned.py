"""AB574 multi-layer-eagle-eager-draft-steps-unplanned."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.AB021_multi_layer_eagle_v2_forces_fa3 import (
    forced_by_model,
)
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.sglang_facts.changes import SPEC_V2_ALWAYS

# MultiLayerEagleWorkerV2 gives every draft step its own runner and attention backend
# (draft_extend_attn_backend_list), but only runner[0]'s backend is planned for the draft extend
# (prepare_for_draft_extend with draft_runner_list[0]); without the draft-extend CUDA graph it then runs
# every step with skip_attn_backend_init=True (0.5.7-0.5.13) or after forward_batch.mark_forward_metadata_ready()
# (0.5.14-0.5.15.post1), logging "can't use cuda graph for draft extend! may have correctness issue!".
# 0.5.16: "each de-tied runner has its own attn backend, and only runner[0]'s was pre-planned, so each
# step's forward must init its own metadata".
NO_GRAPH = "--disable-cuda-graph"
MULTI_LAYER = "--enable-multi-layer-eagle"
WARNING_TEXT = "can't use cuda graph for draft extend! may have correctness issue!"


def _runs_multi_layer_v2(ctx: CheckContext) -> bool:
    """Multi-layer EAGLE on its V2 worker: always from 0.5.13, else with the overlap scheduler on (AB021)."""
    forced = forced_by_model(ctx)
    if ctx.algorithm != "EAGLE" or not (forced or ctx.spec.has(MULTI_LAYER)):
        return False
    if SPEC_V2_ALWAYS.present_in(ctx.version):
        return True
    if forced:
        return not ctx.spec.has("--disable-overlap-schedule")
    return ctx.resolution.disable_overlap_schedule is False


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    steps = ctx.resolution.num_steps or ctx.spec.get("speculative_num_steps")
    if (
        not ctx.spec.get("disable_cuda_graph")
        or steps is None
        or steps <= 1
        or (gpu is not None and gpu.platform not in ("cuda", "rocm"))
        or not _runs_multi_layer_v2(ctx)
    ):
        return
    yield RULE.finding(
        f"multi-layer EAGLE with {ctx.flag(NO_GRAPH)} in SGLang {ctx.version}: each of the {steps} draft steps has "
        "its own attention backend, but without the draft-extend CUDA graph only the first step's is planned for "
        "the batch, so steps 2 and later attend with metadata left from another batch (SGLang logs "
        f'"{WARNING_TEXT}"): wrong draft tokens and a lower acceptance rate (the target still verifies every '
        f"token). Keep CUDA graphs on, or upgrade to 0.5.16+",
        flags=(NO_GRAPH, MULTI_LAYER),
        fix=fix_of(
            f"drop {NO_GRAPH}",
            Applicability.UNSAFE,
            Edit(name=NO_GRAPH, value=None),
        ),
    )


_MIMO_CHAIN = (
    "--model-path",
    "XiaomiMiMo/MiMo-V2-Flash",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)
_MIMO = {"architectures": ("MiMoV2FlashForCausalLM",)}

RULE = Rule(
    check=check,
    code="AB574",
    category=Category.PERF,
    name="multi-layer-eagle-eager-draft-steps-unplanned",
    summary="Multi-layer EAGLE with CUDA graphs off runs draft steps 2+ on unplanned attention metadata "
    "(0.5.7-0.5.15.post1)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="Multi-layer EAGLE (`--enable-multi-layer-eagle`, or a MiMo-V2-Flash/Step-3.5 target with EAGLE, which "
        "turns it on) on the multi-layer V2 worker (always from 0.5.13; before, with the overlap scheduler on), more "
        "than one draft step, and `--disable-cuda-graph`; SGLang 0.5.7 to 0.5.15.post1. Batches above the captured "
        "draft-extend sizes take the same path, which no launch shows.",
        why="The multi-layer V2 worker builds one draft-extend attention backend per step and gives it to that "
        "step's runner (0.5.7 speculative/multi_layer_eagle_worker_v2.py:176-190; 0.5.15.post1 :213-227), but plans "
        "only runner[0]'s for the draft extend (0.5.15.post1 :500-510). Without the draft-extend CUDA graph it runs "
        "every step without initialising the others (0.5.7 :444-470 `skip_attn_backend_init=True`; 0.5.15.post1 "
        ":550-569 `mark_forward_metadata_ready()` off NPU) and warns that it 'may have correctness issue'. 0.5.16 "
        "leaves the batch unmarked so each runner plans its own metadata (:787-813, 'only runner[0]'s was "
        "pre-planned'). From 0.5.13 the multi-layer worker is always the V2 one (0.5.13 speculative/spec_info.py:"
        "192-199).",
        fix="Keep CUDA graphs on (the draft-extend graph replays each step against planned buffers), or upgrade "
        "to SGLang 0.5.16+.",
        fix_safety="Unsafe: CUDA graphs take memory and start-up time that `--disable-cuda-graph` avoided.",
    ),
    bad=Example(
        argv=(*_MIMO_CHAIN, NO_GRAPH),
        target=_MIMO,
        gpu="H100",
        sglang_version="0.5.15.post1",
    ),
    good=Example(
        argv=_MIMO_CHAIN,
        target=_MIMO,
        gpu="H100",
        sglang_version="0.5.15.post1",
    ),
    sources=(
        "sglang 0.5.7: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:176-190, 440-470",
        "sglang 0.5.13: python/sglang/srt/speculative/spec_info.py:192-199",
        "sglang 0.5.15.post1: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:213-227, 500-569",
        "sglang 0.5.16: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:785-813",
    ),
    sglang_versions=">=0.5.7,<0.5.16",
    log_signatures=(
        r"can't use cuda graph for draft extend! may have correctness issue!",
    ),
)
