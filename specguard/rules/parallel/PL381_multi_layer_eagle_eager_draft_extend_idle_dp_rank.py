"""PL381 multi-layer-eagle-eager-draft-extend-idle-dp-rank."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import draft_decode_backend
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.spec_params._shared import attn_dp_enabled, attn_dp_flags
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS
from specguard.sglang_facts.changes import FORCED_MULTI_LAYER_EAGLE

MULTI_LAYER = "--enable-multi-layer-eagle"
NO_GRAPHS = "--disable-cuda-graph"
MIMO_V2_FLASH_EAGLE_DP = (
    "--model-path", "XiaomiMiMo/MiMo-V2-Flash", "--speculative-algorithm", "EAGLE",
    "--tp", "8", "--enable-dp-attention", "--dp-size", "8",
)  # fmt: skip
MIMO_V2_FLASH = {"architectures": ("MiMoV2FlashForCausalLM",)}


def _runs_multi_layer(ctx: CheckContext) -> bool:
    """--enable-multi-layer-eagle, or a target whose model override turns it on for EAGLE."""
    if ctx.algorithm not in EAGLE_HEAD_ALGORITHMS:
        return False
    forced = (
        FORCED_MULTI_LAYER_EAGLE.get(ctx.target.architecture or "")
        if ctx.target is not None
        else None
    )
    return ctx.spec.has(MULTI_LAYER) or (
        ctx.algorithm == "EAGLE"
        and forced is not None
        and forced.present_in(ctx.version)
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        not _runs_multi_layer(ctx)
        or not attn_dp_enabled(ctx)
        or not ctx.spec.get("disable_cuda_graph")
    ):
        return
    if draft_decode_backend(ctx) != "fa3":
        return  # the empty-batch raise read in the code is FlashAttentionBackend's
    dp = " ".join(ctx.flag(f) for f in attn_dp_flags(ctx))
    yield RULE.finding(
        f"Multi-layer EAGLE with DP attention ({dp}) and {ctx.flag(NO_GRAPHS)} in SGLang {ctx.version}: the draft "
        "extend runs eagerly and plans every step's fa3 metadata, also on a DP rank with no requests, whose empty "
        'seq_lens make the scheduler die with "RuntimeError: max(): Expected reduction dim to be specified for '
        'input.numel() == 0" as soon as one rank idles. Fixed in 0.5.18; otherwise keep the CUDA graphs on',
        flags=(NO_GRAPHS, "--enable-dp-attention"),
        fix=fix_of(
            f"drop {NO_GRAPHS}", Applicability.UNSAFE, Edit(name=NO_GRAPHS, value=None)
        ),
    )


RULE = Rule(
    check=check,
    code="PL381",
    category=Category.CRASH,
    name="multi-layer-eagle-eager-draft-extend-idle-dp-rank",
    summary="Multi-layer EAGLE with DP attention and --disable-cuda-graph crashes on an idle rank's fa3 draft extend (0.5.16-0.5.17)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="Multi-layer EAGLE (`--enable-multi-layer-eagle`, or MiMo-V2-Flash / Step-3.5-Flash with EAGLE) with "
        "attention DP wider than 1 and `--disable-cuda-graph`, its draft runners on fa3 (`--speculative-draft-"
        "attention-backend`, else the target's decode backend), SGLang 0.5.16 and 0.5.17.",
        why="0.5.16 made the eager draft extend of `MultiLayerEagleDraftWorker._draft_extend_for_decode` call each "
        "step runner's `attn_backend.init_forward_metadata(forward_batch)` (0.5.16 speculative/"
        "multi_layer_eagle_worker_v2.py:810-819, 0.5.17 :843-852; 0.5.15.post1 has no such call). Without CUDA graphs "
        "the draft-extend graph runner is never built (0.5.17 :375-377), so every round takes that path, and with "
        "attention DP a rank without requests runs an IDLE batch through draft, verify and draft extend (0.5.17 "
        ":992-1016) with empty seq_lens (managers/schedule_batch.py:2843-2844). FlashAttentionBackend."
        "init_forward_metadata takes `seq_lens_cpu.max().item()` before looking at the mode (0.5.16 "
        "layers/attention/flashattention_backend.py:637-638, 0.5.17 :643-648), which torch refuses on an empty "
        'tensor: "RuntimeError: max(): Expected reduction dim to be specified for input.numel() == 0". 0.5.18 '
        "skips the call for idle rounds, with the comment 'Avoid raising when seq_lens is empty here' (0.5.18 "
        "multi_layer_eagle_worker_v2.py:855-861). Other backends are not read here, so the rule stays quiet for them; "
        "batches above the draft-extend graph sizes also run eagerly, which the launch cannot show.",
        fix="Keep the CUDA graphs on (drop `--disable-cuda-graph`), or upgrade to 0.5.18.",
        fix_safety="Unsafe: CUDA graphs use more memory at start-up; the user may have turned them off on purpose.",
    ),
    bad=Example(
        argv=(*MIMO_V2_FLASH_EAGLE_DP, NO_GRAPHS),
        target=MIMO_V2_FLASH,
        gpu="H100",
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=MIMO_V2_FLASH_EAGLE_DP,
        target=MIMO_V2_FLASH,
        gpu="H100",
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py (no init_forward_metadata in the eager draft extend)",
        "sglang 0.5.16: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:810-819",
        "sglang 0.5.16: python/sglang/srt/layers/attention/flashattention_backend.py:637-638",
        "sglang 0.5.17: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:375-377, 843-852, 992-1016",
        "sglang 0.5.17: python/sglang/srt/managers/schedule_batch.py:2843-2844",
        "sglang 0.5.18: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:855-861",
    ),
    sglang_versions=">=0.5.16,<=0.5.17",
    log_signatures=(
        r"max\(\): Expected reduction dim to be specified for input\.numel\(\) == 0",
    ),
)
