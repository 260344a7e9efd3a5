"""AB540 sm100-nvfp4-kv-speculation-refused."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Fix, Severity
from specguard.resolution.common import is_mla
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3, QWEN3_8B_DFLASH
from specguard.sglang_facts.algorithms import BY_NAME, SM100_NVFP4_KV_ALGORITHMS
from specguard.sglang_facts.defaults import NGRAM_DEFAULT_MAX_BFS_BREADTH

# handle_kv4_compatibility (0.5.21 arg_groups/kv_cache_hook.py:165-231) raises, in this order:
#   "SM100 native NVFP4 speculative decoding does not yet support DFLASH; use EAGLE/NEXTN or NGRAM."
#   "SM100 native NVFP4 speculative decoding supports EAGLE, EAGLE3, NEXTN, and breadth-1 NGRAM; got STANDALONE."
#   "SM100 native NVFP4 NGRAM speculative decoding requires --speculative-ngram-max-bfs-breadth=1 because
#    trtllm_mha supports linear target verification only; got 10."
#   "SM100 native NVFP4 speculative decoding requires --speculative-draft-attention-backend=trtllm_mha so the
#    draft worker consumes its physical NVFP4 KV layout; got 'flashinfer'."
KV_DTYPE = "--kv-cache-dtype"
DEQUANT_DTYPE = "--prefill-kv-cache-dequant-dtype"
BREADTH = "--speculative-ngram-max-bfs-breadth"
DRAFT_BACKEND = "--speculative-draft-attention-backend"
NATIVE = "trtllm_mha"
# handle_nvfp4_prefill_kv_dequant_dtype (kv_cache_hook.py:34-96) runs first: it accepts only these backends and
# then sets decode to trtllm_mha, so every NVFP4 launch that gets past it reaches the checks above with
# trtllm_mha as its decode backend. Its prefill backend follows the dequant dtype (:25-28).
NVFP4_PREFILL_BACKEND_BY_DEQUANT = {"fp8_e4m3": "flashinfer", "nvfp4": NATIVE}


def _reaches_kv4_check(ctx: CheckContext) -> bool:
    """SM100, NVFP4 KV, and nothing that an earlier hook refuses with another message."""
    gpu = ctx.env.gpu
    if (
        gpu is None
        or gpu.platform != "cuda"
        or gpu.compute_capability is None
        or gpu.compute_capability[0] != 10
    ):
        return False
    if ctx.spec.get("kv_cache_dtype") != "nvfp4" or is_mla(ctx.target):
        return False
    attention, prefill = (
        ctx.spec.get("attention_backend"),
        ctx.spec.get("prefill_attention_backend"),
    )
    decode = ctx.spec.get("decode_attention_backend")
    if any(
        b not in (None, *NVFP4_PREFILL_BACKEND_BY_DEQUANT.values())
        for b in (attention, prefill)
    ):
        return False  # "NVFP4 prefill supports an FP8 E4M3 workspace or native NVFP4, but backend ... provides neither."
    if decode not in (None, NATIVE):
        return False  # "NVFP4 decode requires --decode-attention-backend=trtllm_mha"
    dequant = ctx.spec.last_value(DEQUANT_DTYPE)
    wanted_prefill = NVFP4_PREFILL_BACKEND_BY_DEQUANT.get(dequant) if dequant else None
    return wanted_prefill is None or prefill in (None, wanted_prefill)


def _refusal(ctx: CheckContext) -> tuple[str, tuple[str, ...], Fix] | None:
    """(what SGLang says, the flags, the fix) for this algorithm, or None when it is accepted."""
    algorithm = ctx.algorithm
    if algorithm not in BY_NAME:
        return None  # a custom plugin name: specguard cannot tell what else refuses it first
    to_fp8 = fix_of(
        "use an FP8 KV cache",
        Applicability.UNSAFE,
        Edit(name=KV_DTYPE, value="fp8_e4m3"),
    )
    if algorithm not in SM100_NVFP4_KV_ALGORITHMS:
        # DFLASH and DSPARK meet "does not yet support" one check earlier (:165-175), the rest :176-188.
        said = (
            f'SM100 native NVFP4 speculative decoding does not yet support {algorithm}; use EAGLE/NEXTN or NGRAM" '
            f'or "SM100 native NVFP4 speculative decoding supports EAGLE, EAGLE3, NEXTN, and breadth-1 NGRAM; got '
            f"{algorithm}"
        )
        return said, (KV_DTYPE, "--speculative-algorithm"), to_fp8
    if algorithm == "NGRAM":
        breadth = ctx.spec.get("speculative_ngram_max_bfs_breadth")
        breadth = NGRAM_DEFAULT_MAX_BFS_BREADTH if breadth is None else breadth
        if breadth == 1:
            return None
        said = f"SM100 native NVFP4 NGRAM speculative decoding requires {BREADTH}=1 ...; got {breadth}"
        return (
            said,
            (KV_DTYPE, BREADTH),
            fix_of(
                f"set {BREADTH} 1", Applicability.UNSAFE, Edit(name=BREADTH, value=1)
            ),
        )
    draft_backend = ctx.spec.get("speculative_draft_attention_backend")
    if draft_backend in (None, NATIVE):
        return None  # unset: SGLang picks trtllm_mha for the draft itself (:214-224)
    said = f"SM100 native NVFP4 speculative decoding requires {DRAFT_BACKEND}=trtllm_mha ...; got '{draft_backend}'"
    return (
        said,
        (KV_DTYPE, DRAFT_BACKEND),
        fix_of(
            f"run the draft on {NATIVE}",
            Applicability.UNSAFE,
            Edit(name=DRAFT_BACKEND, value=NATIVE),
        ),
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not _reaches_kv4_check(ctx):
        return
    refusal = _refusal(ctx)
    if refusal is None:
        return
    said, flags, fix = refusal
    yield RULE.finding(
        f"{ctx.flag(KV_DTYPE)} nvfp4 on an SM100 GPU with {ctx.spec.get('speculative_algorithm')} in SGLang "
        f"{ctx.version}: NVFP4 decode runs on trtllm_mha, whose native NVFP4 layout only EAGLE/EAGLE3/NEXTN (with a "
        f'trtllm_mha draft) and breadth-1 NGRAM write, so the server refuses to start: "{said}". {fix.title[:1].upper()}'
        f"{fix.title[1:]}",
        flags=tuple(ctx.flag(f) for f in flags),
        fix=fix,
    )


RULE = Rule(
    check=check,
    code="AB540",
    category=Category.START,
    name="sm100-nvfp4-kv-speculation-refused",
    summary="--kv-cache-dtype nvfp4 on SM100 refuses speculation other than EAGLE/EAGLE3/NEXTN with a trtllm_mha "
    "draft or breadth-1 NGRAM (0.5.21+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--kv-cache-dtype nvfp4` on an SM100 (compute capability 10.x) GPU with DFLASH, DSPARK, STANDALONE, UNO "
        "or FROZEN_KV_MTP; with NGRAM at a `--speculative-ngram-max-bfs-breadth` other than 1 (the default is 10); or "
        "with EAGLE/EAGLE3/NEXTN and a `--speculative-draft-attention-backend` other than trtllm_mha; SGLang 0.5.21 "
        "or later. Quiet on MLA targets and where an earlier NVFP4 backend check refuses the launch first.",
        why="0.5.21 added handle_nvfp4_prefill_kv_dequant_dtype (arg_groups/kv_cache_hook.py:34-96), which runs "
        "before handle_kv4_compatibility (arg_groups/pipeline.py:228, 242) and sets the decode backend of every NVFP4 "
        "launch to trtllm_mha. handle_kv4_compatibility then treats SM100 + nvfp4 + trtllm_mha as the native NVFP4 "
        "path (:143-147) and raises for DFLASH/DSPARK (:165-175, their prefix commit writes no GenMHA scale layout), "
        "for any algorithm outside EAGLE/EAGLE3/NEXTN/NGRAM (:176-188), for NGRAM with a BFS breadth other than 1 "
        "(:189-203, trtllm_mha verifies a linear chain only) and for a draft model whose draft backend is given and "
        "is not trtllm_mha (:204-231). All of it runs at argument time, before the speculative hook. 0.5.20's "
        "handle_kv4_compatibility (:37-108) has none of these checks; 0.5.23 keeps them (:112-231).",
        fix="Use an FP8 KV cache for DFLASH/DSPARK/STANDALONE, breadth 1 for NGRAM, or the trtllm_mha draft "
        "backend (or leave the flag unset: SGLang then picks trtllm_mha).",
        fix_safety="Unsafe: each changes what runs (KV precision, the NGRAM tree or the draft's kernel).",
    ),
    bad=Example(
        argv=(*QWEN3_8B_DFLASH, KV_DTYPE, "nvfp4"), gpu="B200", sglang_version="0.5.21"
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, KV_DTYPE, "nvfp4"),
        gpu="B200",
        sglang_version="0.5.21",
    ),
    sources=(
        "sglang 0.5.20: python/sglang/srt/arg_groups/kv_cache_hook.py:37-108 (handle_kv4_compatibility: no speculative check)",
        "sglang 0.5.21: python/sglang/srt/arg_groups/kv_cache_hook.py:34-96, 143-231; python/sglang/srt/arg_groups/pipeline.py:228, 242",
        "sglang 0.5.23: python/sglang/srt/arg_groups/kv_cache_hook.py:34-96, 143-231; python/sglang/srt/arg_groups/pipeline.py:241, 254",
    ),
    sglang_versions=">=0.5.21",
    log_signatures=(
        r"SM100 native NVFP4 speculative decoding does not yet support \w+",
        r"SM100 native NVFP4 speculative decoding supports EAGLE, EAGLE3, NEXTN, and breadth-1 NGRAM; got \w+",
        r"SM100 native NVFP4 NGRAM speculative decoding requires --speculative-ngram-max-bfs-breadth=1",
        r"SM100 native NVFP4 speculative decoding requires --speculative-draft-attention-backend=trtllm_mha",
    ),
)
