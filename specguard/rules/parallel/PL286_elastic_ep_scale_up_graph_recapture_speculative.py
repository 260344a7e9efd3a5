"""PL286 elastic-ep-scale-up-graph-recapture-speculative."""

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
from specguard.rules.examples import GLM52_FACTS, GLM52_FP8_TP8
from specguard.rules.spec_params._shared import device, int_flag

ELASTIC_BACKEND = "--elastic-ep-backend"
MAX_EP = "--max-ep-size"
DECODE_BACKEND = "--cuda-graph-backend-decode"
DECODE_OFF = "--disable-decode-cuda-graph"
PREFILL_BACKEND = "--cuda-graph-backend-prefill"
PREFILL_OFF = "--disable-prefill-cuda-graph"
GRAPH_CONFIG = "--cuda-graph-config"


def _decode_graphs_full(ctx: CheckContext) -> bool | None:
    """Whether the decode CUDA-graph backend resolves to full (0.5.21 arg_groups/cuda_graph_hook.py:59-75:
    full by default, disabled by --disable-cuda-graph or --disable-decode-cuda-graph, and
    --cuda-graph-backend-decode wins over both); None under a --cuda-graph-config, which is not read here."""
    if ctx.spec.has(GRAPH_CONFIG):
        return None
    typed = ctx.spec.last_value(DECODE_BACKEND)
    if typed is not None:
        return typed == "full"
    return not (ctx.spec.get("disable_cuda_graph") or ctx.spec.has(DECODE_OFF))


def _prefill_graphs_off(ctx: CheckContext) -> bool:
    """Whether prefill CUDA graphs are typed off: scale-up asserts it before it reaches speculation
    (0.5.21 arg_groups/parallel_hook.py:559), and the CUDA prefill default is breakable
    (model_executor/cuda_graph_config.py:122-131), so without it that earlier assert fails instead."""
    typed = ctx.spec.last_value(PREFILL_BACKEND)
    if typed is not None:
        return typed == "disabled"
    return bool(ctx.spec.get("disable_cuda_graph")) or ctx.spec.has(PREFILL_OFF)


def check(ctx: CheckContext) -> Iterator[Finding]:
    backend = ctx.spec.last_value(ELASTIC_BACKEND)
    max_ep = int_flag(ctx, MAX_EP)
    tp = ctx.spec.get("tp_size") or 1
    # Runtime scale-up is on when an elastic backend is set and --max-ep-size is above --tp-size
    # (0.5.21 arg_groups/parallel_hook.py:477-481).
    if (
        ctx.algorithm is None
        or backend in (None, "none")
        or max_ep is None
        or max_ep <= tp
    ):
        return
    if not _decode_graphs_full(ctx) or device(ctx) not in (None, "cuda"):
        return  # off CUDA the assert before this one fails first
    # Scale-up asserts mooncake, PP 1 and prefill graphs off first (parallel_hook.py:545-561): any of
    # those fails with its own message, not this one.
    if (
        backend != "mooncake"
        or (ctx.spec.get("pp_size") or 1) > 1
        or not _prefill_graphs_off(ctx)
    ):
        return
    yield RULE.finding(
        f"{ctx.flag(ELASTIC_BACKEND)} {backend} with {ctx.flag(MAX_EP)} {max_ep} above the TP size {tp} (Elastic EP "
        f"runtime scale-up), full decode CUDA graphs and {ctx.algorithm}: SGLang {ctx.version} asserts at argument "
        "time 'Elastic EP CUDA graph recapture does not support speculative decoding.', since the decode graphs "
        f"are recaptured when the EP group grows. Set {ctx.flag(DECODE_BACKEND)} disabled, drop the scale-up "
        f"({ctx.flag(MAX_EP)} at most the TP size), or serve without speculative decoding",
        flags=(ELASTIC_BACKEND, MAX_EP, "--speculative-algorithm"),
    )


ELASTIC_MTP = (
    *GLM52_FP8_TP8,
    "--speculative-algorithm",
    "EAGLE",
    ELASTIC_BACKEND,
    "mooncake",
    MAX_EP,
    "16",
    "--cuda-graph-backend-prefill",
    "disabled",
)

RULE = Rule(
    check=check,
    code="PL286",
    category=Category.START,
    name="elastic-ep-scale-up-graph-recapture-speculative",
    summary="Elastic EP runtime scale-up with full decode CUDA graphs refuses speculative decoding at argument time (0.5.21+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--elastic-ep-backend` (mooncake or nixl) with `--max-ep-size` above `--tp-size`, decode CUDA graphs "
        "on the full backend (the default; not `--disable-cuda-graph`, `--disable-decode-cuda-graph` or another "
        "`--cuda-graph-backend-decode`), and any `--speculative-algorithm`, SGLang 0.5.21 or later, when the "
        "asserts before it pass: `--elastic-ep-backend mooncake`, no pipeline parallelism, and prefill CUDA graphs "
        "typed off (`--cuda-graph-backend-prefill disabled` or `--disable-prefill-cuda-graph`). A "
        "`--cuda-graph-config` keeps it quiet.",
        why="0.5.21's `handle_elastic_ep` turns on runtime scale-up when an elastic backend is set and "
        "`--max-ep-size` exceeds the TP size (arg_groups/parallel_hook.py:477-481); it first asserts the mooncake "
        "backend, PP 1, a full or disabled decode graph backend and a disabled prefill one (:545-561; the CUDA "
        "prefill default is breakable, model_executor/cuda_graph_config.py:122-131), then with the decode backend "
        "full it asserts CUDA, then `cfg.speculative_algorithm is None`: 'Elastic EP CUDA graph recapture does not "
        "support speculative decoding.' (:562-569). It runs after the CUDA-graph config is resolved "
        "(arg_groups/pipeline.py:175, 281), where full is the decode default (model_executor/cuda_graph_config.py:"
        "157-159) and `--disable-cuda-graph`, `--disable-decode-cuda-graph` and `--cuda-graph-backend-decode` set it "
        "(cuda_graph_hook.py:59-75). 0.5.20 computes the same scale-up condition (parallel_hook.py:424-428) without "
        "the assert; 0.5.22 (:639-641) and 0.5.23 (:704-706) keep it.",
        fix="Set `--cuda-graph-backend-decode disabled`, run without runtime scale-up (`--max-ep-size` at most the "
        "TP size), or serve without speculative decoding.",
        fix_safety="No automatic fix: each option trades decode speed, elasticity or speculation.",
    ),
    bad=Example(argv=ELASTIC_MTP, target=GLM52_FACTS, sglang_version="0.5.21"),
    good=Example(
        argv=(*ELASTIC_MTP, DECODE_BACKEND, "disabled"),
        target=GLM52_FACTS,
        sglang_version="0.5.21",
    ),
    sources=(
        "sglang 0.5.20: python/sglang/srt/arg_groups/parallel_hook.py:424-428 (scale-up, no speculation assert)",
        "sglang 0.5.21: python/sglang/srt/arg_groups/parallel_hook.py:477-481,545-569",
        "sglang 0.5.21: python/sglang/srt/arg_groups/pipeline.py:175,281; arg_groups/cuda_graph_hook.py:59-75; model_executor/cuda_graph_config.py:122-131,157-162",
        "sglang 0.5.23: python/sglang/srt/arg_groups/parallel_hook.py:572-576,704-706",
    ),
    sglang_versions=">=0.5.21",
    log_signatures=(
        r"Elastic EP CUDA graph recapture does not support speculative decoding",
    ),
)
