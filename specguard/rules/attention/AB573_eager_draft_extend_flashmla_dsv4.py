"""AB573 eager-draft-extend-flashmla-dsv4."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, typed_phase_backend
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import DEEPSEEK_V3_MLA_FACTS
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.architectures import DSV4_ARCHITECTURES

# EagleDraftWorker captures a draft-extend CUDA graph only when its draft-extend backend is one of
# graph_supported_backend_types (0.5.15.post1 speculative/eagle_worker_v2.py:452-481: Triton, TRTLLM MHA/MLA,
# Tokenspeed MLA, FlashInfer, DSA). FlashMLA had no draft-extend backend at all (draft_utils.py:347-351 logs
# "flashmla prefill backend is not yet supported for draft extend." and returns None) and DeepSeek-V4's is
# not on the list, so both ran the draft extend eagerly on every decode step; 0.5.16 adds both.
DRAFT_BACKEND = "--speculative-draft-attention-backend"
FLASHMLA = "flashmla"
DSV4 = "dsv4"


def _draft_extend_backend(ctx: CheckContext) -> str | None:
    """What DraftBackendFactory.create_draft_extend_backend builds on: the draft's flag, else the phase
    backend --speculative-attention-mode names, else --attention-backend, which DeepSeek-V4 pins to dsv4."""
    typed, flag = typed_phase_backend(ctx, DRAFT_BACKEND)
    if flag in (
        DRAFT_BACKEND,
        "--prefill-attention-backend",
        "--decode-attention-backend",
    ):
        return typed
    target = ctx.target
    if target is not None and target.architecture in DSV4_ARCHITECTURES:
        return DSV4  # the DeepseekV4 override sets attention_backend dsv4 over the flag
    return typed or ctx.resolution.attention_backend


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or ctx.spec.has("--enable-multi-layer-eagle")
        or ctx.spec.get("disable_cuda_graph")
        or gpu is None
        or gpu.platform != "cuda"
    ):
        return
    backend = _draft_extend_backend(ctx)
    if backend not in (FLASHMLA, DSV4):
        return
    yield RULE.finding(
        f"{ctx.algorithm} with the draft extend on {backend} in SGLang {ctx.version}: the EAGLE draft worker captures "
        f"no draft-extend CUDA graph for {backend}, so the draft extend runs eagerly (one launch per kernel) on every "
        "decode step, slower than the captured path the other CUDA backends get. SGLang 0.5.16 captures it for "
        f"{backend}",
        flags=("--attention-backend", DRAFT_BACKEND),
    )


_DEEPSEEK_V3_NEXTN = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp",
    "8",
    "--speculative-algorithm",
    "NEXTN",
)

RULE = Rule(
    check=check,
    code="AB573",
    category=Category.PERF,
    name="eager-draft-extend-flashmla-dsv4",
    summary="EAGLE draft extend on flashmla or DeepSeek-V4's dsv4 backend runs without a CUDA graph "
    "(0.5.13-0.5.15.post1)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE/EAGLE3/NEXTN/STANDALONE (not multi-layer EAGLE) on a CUDA GPU with CUDA graphs on, whose draft "
        "extend runs on flashmla (`--speculative-draft-attention-backend`, else the phase backend "
        "`--speculative-attention-mode` names, else `--attention-backend`) or on a DeepSeek-V4 target (SGLang pins "
        "its attention backend to dsv4); SGLang 0.5.13 to 0.5.15.post1.",
        why="The draft worker captures a draft-extend CUDA graph only for the backends in "
        "`graph_supported_backend_types` (0.5.15.post1 speculative/eagle_worker_v2.py:452-481; 0.5.13 :369-384 "
        "lists Triton, TRTLLM MHA/MLA and Tokenspeed MLA). For flashmla the draft-extend factory returns None "
        "(speculative/draft_utils.py:347-351), so the draft runner keeps its own backend and no graph is "
        "captured (eagle_worker_v2.py:385-391); DeepSeek-V4's dsv4 draft-extend backend exists but is not on the "
        "list. 0.5.16 builds a FlashMLA draft-extend backend (draft_utils.py:372-375) and appends "
        "DeepseekV4AttnBackend and FlashMLABackend to the list (eagle_worker_v2.py:432-457). Before 0.5.13 the "
        "V2 worker's flashmla draft extend fails outright (AB572).",
        fix="Upgrade to SGLang 0.5.16 or later.",
        fix_safety="No automatic fix: no other backend is a like-for-like choice for these MLA targets.",
    ),
    bad=Example(
        argv=(*_DEEPSEEK_V3_NEXTN, "--attention-backend", FLASHMLA),
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="H100",
        sglang_version="0.5.15.post1",
    ),
    good=Example(
        argv=(*_DEEPSEEK_V3_NEXTN, "--attention-backend", "triton"),
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="H100",
        sglang_version="0.5.15.post1",
    ),
    sources=(
        "sglang 0.5.13: python/sglang/srt/speculative/draft_utils.py:328-332",
        "sglang 0.5.13: python/sglang/srt/speculative/eagle_worker_v2.py:369-384",
        "sglang 0.5.13: python/sglang/srt/arg_groups/deepseek_v4_hook.py:15 (DeepSeek-V4: attention_backend dsv4)",
        "sglang 0.5.15.post1: python/sglang/srt/speculative/draft_utils.py:28-42, 347-351",
        "sglang 0.5.15.post1: python/sglang/srt/speculative/eagle_worker_v2.py:380-391, 452-481",
        "sglang 0.5.15.post1: python/sglang/srt/arg_groups/overrides.py:683-703 (DeepSeek-V4: attention_backend dsv4)",
        "sglang 0.5.16: python/sglang/srt/speculative/draft_utils.py:372-375",
        "sglang 0.5.16: python/sglang/srt/speculative/eagle_worker_v2.py:432-457",
    ),
    sglang_versions=">=0.5.13,<0.5.16",
)
