"""FX541 hisparse-pd-decode-draft-pool-non-mooncake."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import GLM52_FACTS, GLM52_FP8_TP8
from specguard.sglang_facts.algorithms import DRAFT_CHECKPOINT_ALGORITHMS
from specguard.sglang_facts.architectures import (
    DSA_ARCHITECTURES,
    DSV4_ARCHITECTURES,
    MINIMAX_M3_SPARSE_ARCHITECTURES,
)

# DecodePreallocQueue.pop_preallocated (0.5.22 disaggregation/decode.py:1730-1754) raises, on the first request it
# hands to a real (not fake) transfer:
#   NotImplementedError: HiSparse device-only PD transfer currently requires the Mooncake backend
HISPARSE = "--enable-hisparse"
TRANSFER = "--disaggregation-transfer-backend"
# Mooncake is the one backend the device-only transfer supports; fake moves no KV (_is_fake_transfer).
SERVED_TRANSFERS = ("mooncake", "fake")
# The targets validate_hisparse accepts (0.5.22 arg_groups/hisparse_hook.py:100-107); any other is refused first.
HISPARSE_TARGETS = (
    DSA_ARCHITECTURES | DSV4_ARCHITECTURES | MINIMAX_M3_SPARSE_ARCHITECTURES
)


def _reaches_transfer(ctx: CheckContext) -> bool:
    """A HiSparse PD decode server that passes the start-up checks and builds a separate draft KV pool."""
    if ctx.spec.get("disaggregation_mode") != "decode" or not ctx.spec.has(HISPARSE):
        return False
    architecture = ctx.target.architecture if ctx.target is not None else None
    if architecture not in HISPARSE_TARGETS or not ctx.spec.has(
        "--disable-radix-cache"
    ):
        return False  # validate_hisparse asserts first (hisparse_hook.py:103-111)
    if (ctx.resolution.eagle_topk or 1) != 1 or ctx.resolution.adaptive is True:
        return False  # refused at start first (FX189)
    # The draft runners of these algorithms own a KV pool; under --enable-unified-memory it may be the fused
    # UnifiedDraftKVPool, which primary_draft_kv_pool reports as None (speculative/base_spec_worker.py:182-191).
    return ctx.algorithm in DRAFT_CHECKPOINT_ALGORITHMS and not ctx.spec.has(
        "--enable-unified-memory"
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    transfer = ctx.spec.last_value(TRANSFER)
    if transfer is None or transfer in SERVED_TRANSFERS or not _reaches_transfer(ctx):
        return
    yield RULE.finding(
        f"{ctx.flag(HISPARSE)} on a PD decode server with {ctx.algorithm} and {ctx.flag(TRANSFER)} {transfer} in "
        f"SGLang {ctx.version}: the draft worker's KV pool sends HiSparse's device-only transfer path, which only "
        "Mooncake implements, so the decode scheduler raises 'NotImplementedError: HiSparse device-only PD transfer "
        f"currently requires the Mooncake backend' on the first transferred request. Use {ctx.flag(TRANSFER)} "
        "mooncake (on both the prefill and the decode server)",
        flags=(HISPARSE, TRANSFER, "--speculative-algorithm"),
        fix=fix_of(
            "transfer KV with Mooncake",
            Applicability.UNSAFE,
            Edit(name=TRANSFER, value="mooncake"),
        ),
    )


GLM52_PD_DECODE_HISPARSE = (
    *GLM52_FP8_TP8,
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-eagle-topk",
    "1",
    "--disaggregation-mode",
    "decode",
    HISPARSE,
    "--disable-radix-cache",
)

RULE = Rule(
    check=check,
    code="FX541",
    category=Category.CRASH,
    name="hisparse-pd-decode-draft-pool-non-mooncake",
    summary="--enable-hisparse on a PD decode server with a draft KV pool needs the Mooncake transfer backend "
    "(0.5.22+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--disaggregation-mode decode --enable-hisparse` on a HiSparse target (DSA, DeepSeek-V4 or MiniMax-M3 "
        "sparse) speculating with EAGLE/NEXTN, EAGLE3, STANDALONE or DFLASH (a draft model runner with its own KV "
        "pool) and `--disaggregation-transfer-backend` other than mooncake (nixl, mori, ascend, ...), SGLang 0.5.22 "
        "or later. Quiet under `--enable-unified-memory`, where the draft pool may be fused into the target's.",
        why="The decode scheduler passes the draft worker's primary draft KV pool to the prealloc queue (0.5.22 "
        "managers/scheduler.py:1487-1491, 1546-1549; speculative/base_spec_worker.py:168-191: every algorithm but "
        "NGRAM and FROZEN_KV_MTP has draft runners). 0.5.22 widened HiSparse's device-only PD transfer from "
        "DeepSeek-V4 pools to any decode server with a draft pool and raises NotImplementedError when the backend is "
        "not Mooncake (disaggregation/decode.py:1730-1754); 0.5.21 took that path only for a DeepSeek-V4 pool "
        "(decode.py:1672-1694), with or without speculation. Unchanged in 0.5.23 (decode.py:1788-1812). Nothing at "
        "start-up refuses the combination (arg_groups/hisparse_hook.py:88-170, pd_disaggregation_hook.py:64-110).",
        fix="Use the Mooncake transfer backend (the default) on both servers.",
        fix_safety="Unsafe: it changes the KV transfer engine the deployment needs.",
    ),
    bad=Example(
        argv=(*GLM52_PD_DECODE_HISPARSE, TRANSFER, "nixl"),
        target=GLM52_FACTS,
        sglang_version="0.5.22",
    ),
    good=Example(
        argv=(*GLM52_PD_DECODE_HISPARSE, TRANSFER, "mooncake"),
        target=GLM52_FACTS,
        sglang_version="0.5.22",
    ),
    sources=(
        "sglang 0.5.21: python/sglang/srt/disaggregation/decode.py:1672-1694 (only a DeepSeekV4TokenToKVPool target)",
        "sglang 0.5.22: python/sglang/srt/disaggregation/decode.py:1730-1754; python/sglang/srt/managers/scheduler.py:1487-1491,1546-1549; python/sglang/srt/speculative/base_spec_worker.py:168-191",
        "sglang 0.5.22: python/sglang/srt/arg_groups/hisparse_hook.py:88-125",
        "sglang 0.5.23: python/sglang/srt/disaggregation/decode.py:1788-1812",
    ),
    sglang_versions=">=0.5.22",
    log_signatures=(
        r"HiSparse device-only PD transfer currently requires the Mooncake backend",
    ),
)
