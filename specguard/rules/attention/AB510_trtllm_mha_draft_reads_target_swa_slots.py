"""AB510 trtllm-mha-draft-reads-target-swa-slots."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    attention_backend,
    effective_topk,
)
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.hybrid.HY350_draft_kv_pool_sized_before_swa_split import (
    NO_HYBRID,
    draft_splits_its_pool_too,
)
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS
from specguard.sglang_facts.changes import Change

TRTLLM_MHA = "trtllm_mha"
DRAFT_BACKEND = "--speculative-draft-attention-backend"
SLIDING = "sliding_attention"
GPT_OSS = "GptOssForCausalLM"
LLAMA4 = "Llama4ForConditionalGeneration"
# The hybrid-SWA targets whose layer 0, the id of an EAGLE head's first (usually only) layer, is a sliding
# layer (0.5.12.post1 configs/model_config.py:1678-1697): Llama 4 by its pattern ((i + 1) % 4 != 0, so always),
# gpt-oss by its config's layer_types. The other hybrid-SWA classes (MiMo-V2, Step-3.5, Gemma 4, Laguna) run
# their own MTP, FROZEN_KV_MTP or multi-layer EAGLE, or need facts specguard does not read; they stay out.
LAYER_ZERO_ALWAYS_SLIDING = frozenset({LLAMA4})
LAYER_ZERO_BY_LAYER_TYPES = frozenset({GPT_OSS})
# 0.5.9 turns hybrid SWA memory off for gpt-oss whenever its prefill or decode backend is trtllm_mha
# (server_args.py:1354-1362, "Disable hybrid SWA memory for GPT-OSS model with trtllm_mha attention backend.");
# 0.5.10rc0 drops that (translation supported), so the shared allocator is SWA from then on.
GPT_OSS_TRTLLM_HYBRID_SWA = Change(
    "0.5.10rc0",
    "0.5.10rc0 server_args.py no longer disables hybrid SWA memory for GPT-OSS on trtllm_mha (0.5.9 :1354-1362 did)",
)
# 0.5.13 _resolve_swa_kv_pool (trtllm_mha_backend.py:147-166) returns None for an EAGLE draft worker whose own
# pool is not SWA, so its KV is no longer addressed through the target allocator's SWA mapping.
DRAFT_POOL_RESOLVED = Change(
    "0.5.13", "0.5.13 layers/attention/trtllm_mha_backend.py:147-166"
)
SM100_MAJOR = 10  # trtllm_mha's prefill is refused off SM100 in these releases (AB395's PREFILL_ON_XQA_GPUS)


def _layer_zero_sliding(ctx: CheckContext) -> bool:
    arch = ctx.target.architecture if ctx.target is not None else None
    if arch in LAYER_ZERO_ALWAYS_SLIDING:
        return True
    if arch in LAYER_ZERO_BY_LAYER_TYPES:
        types = ctx.target.layer_types if ctx.target is not None else None
        return types is not None and len(types) > 0 and types[0] == SLIDING
    return False


def _draft_backend(ctx: CheckContext) -> tuple[str | None, str]:
    """(backend, how it was chosen) of the draft's decode steps: the draft flag, else the decode backend, else the
    attention backend as typed or predicted (0.5.12.post1 speculative/draft_utils.py:21-37)."""
    for flag in (DRAFT_BACKEND, "--decode-attention-backend", "--attention-backend"):
        value = ctx.spec.last_value(flag)
        if value is not None:
            return value, ctx.flag(flag)
    backend, _ = attention_backend(ctx)
    return backend, "SGLang's default for this target and GPU"


def _target_on_trtllm(ctx: CheckContext) -> bool:
    backend, _ = attention_backend(ctx)
    phases = (
        ctx.spec.last_value("--prefill-attention-backend") or backend,
        ctx.spec.last_value("--decode-attention-backend") or backend,
    )
    return TRTLLM_MHA in phases


def _target_pool_is_swa(ctx: CheckContext) -> bool:
    if ctx.spec.has(NO_HYBRID):
        return False
    arch = ctx.target.architecture if ctx.target is not None else None
    if arch == GPT_OSS and not GPT_OSS_TRTLLM_HYBRID_SWA.present_in(ctx.version):
        return not _target_on_trtllm(ctx)
    return True


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if (
        DRAFT_POOL_RESOLVED.present_in(ctx.version)
        or ctx.algorithm not in EAGLE_HEAD_ALGORITHMS
    ):
        return
    if (
        gpu is None
        or gpu.compute_capability is None
        or gpu.compute_capability[0] != SM100_MAJOR
    ):
        return
    if effective_topk(ctx) != 1 or draft_splits_its_pool_too(ctx) is not False:
        return  # trtllm_mha refuses a tree (AB003); a hybrid-SWA draft keeps an SWA pool of its own
    backend, chosen_by = _draft_backend(ctx)
    if (
        backend != TRTLLM_MHA
        or not _layer_zero_sliding(ctx)
        or not _target_pool_is_swa(ctx)
    ):
        return
    yield RULE.finding(
        f"{ctx.algorithm} on {ctx.target.architecture if ctx.target else 'the target'} with the draft on "
        f"{TRTLLM_MHA} ({chosen_by}) in SGLang {ctx.version}: the draft's trtllm_mha backend takes the target's "
        "sliding-window KV mapping from the shared allocator and reads the draft head's own full-attention pool "
        "through it (its layer 0 is a sliding layer of the target) while writing that pool at full-pool slots, so "
        "once the two slot spaces diverge, and for tokens the target freed outside the window (slot 0), the draft "
        "attends to other tokens' KV and acceptance falls on long contexts (fixed in 0.5.13). Put the draft on "
        f"another backend ({ctx.flag(DRAFT_BACKEND)} triton), or serve with {ctx.flag(NO_HYBRID)}",
        flags=(DRAFT_BACKEND, "--speculative-algorithm"),
    )


_GPT_OSS_EAGLE3 = (
    "--model-path", "openai/gpt-oss-120b", "--speculative-algorithm", "EAGLE3",
    "--speculative-draft-model-path", "lmsys/EAGLE3-gpt-oss-120b-bf16",
    "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
)  # fmt: skip
_GPT_OSS_FACTS = {
    "architectures": (GPT_OSS,),
    "layer_types": (SLIDING, "full_attention") * 18,
}
_EAGLE3_HEAD = {"architectures": ("LlamaForCausalLMEagle3",)}

RULE = Rule(
    check=check,
    code="AB510",
    category=Category.PERF,
    name="trtllm-mha-draft-reads-target-swa-slots",
    summary="An EAGLE head on trtllm_mha over a hybrid-SWA target (gpt-oss, Llama 4) addresses its KV through the "
    "target's sliding-window mapping (0.5.9-0.5.12.post1)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE or EAGLE3 (topk 1, a head draft that is not hybrid-SWA itself) on a GptOssForCausalLM target "
        "whose layer_types start with a sliding layer, or a Llama4ForConditionalGeneration target, with hybrid SWA "
        "memory on (no `--disable-hybrid-swa-memory`; for gpt-oss in 0.5.9 also a target not on trtllm_mha), and "
        "the draft's decode on trtllm_mha (`--speculative-draft-attention-backend`, else the decode or attention "
        "backend, gpt-oss's default on SM100), on an SM100 GPU, SGLang 0.5.9 to 0.5.12.post1.",
        why="The draft worker shares the target's `SWATokenToKVPoolAllocator` but owns a plain KV pool. "
        "`TRTLLMHAAttnBackend.__init__` takes the SWA pool whenever the allocator is SWA (0.5.12.post1 "
        "layers/attention/trtllm_mha_backend.py:128-137; 0.5.9 :131-137) and, per layer id, reads through a "
        "translated page table (:183-216, 682) using the target's `layers_mapping` (mem_cache/swa_memory_pool.py:"
        "90-94). The head's layers are numbered from 0 (models/llama_eagle3.py:182) and the target's layer 0 is "
        "sliding (configs/model_config.py:1683-1697), so the draft's full-attention layer is read in SWA slots, "
        "while with a bf16 KV cache it is written at the untranslated `out_cache_loc` of its plain pool (:710-730, "
        "796-816; the fp8 path translates the write too, :570); `maybe_evict_swa` frees out-of-window tokens and "
        "`free_swa` sets their mapping to 0 (managers/schedule_batch.py:2655-2745; swa_memory_pool.py:616-620), and "
        "the draft then reads slot 0 for them. 0.5.13 adds `_resolve_swa_kv_pool` (trtllm_mha_backend.py:147-166): 'EAGLE draft workers share the "
        "target allocator for token bookkeeping, but own a separate draft KV pool. Do not use the target allocator's "
        "SWA mapping for that draft pool.' 0.5.9 turns hybrid SWA memory off for gpt-oss on trtllm_mha "
        "(server_args.py:1354-1362); 0.5.10rc0 no longer does. Before 0.5.9 trtllm_mha had no SWA translation.",
        fix="Run the draft on another backend (`--speculative-draft-attention-backend`), turn hybrid SWA memory off "
        "(`--disable-hybrid-swa-memory`, more KV memory), or upgrade to 0.5.13.",
        fix_safety="No automatic fix: each way changes the backend or the KV capacity.",
    ),
    bad=Example(
        argv=_GPT_OSS_EAGLE3,
        target=_GPT_OSS_FACTS,
        draft=_EAGLE3_HEAD,
        gpu="B200",
        sglang_version="0.5.12.post1",
    ),
    good=Example(
        argv=_GPT_OSS_EAGLE3,
        target=_GPT_OSS_FACTS,
        draft=_EAGLE3_HEAD,
        gpu="B200",
        sglang_version="0.5.13",
    ),
    sources=(
        "sglang 0.5.9: python/sglang/srt/layers/attention/trtllm_mha_backend.py:131-137",
        "sglang 0.5.9: python/sglang/srt/server_args.py:1354-1362",
        "sglang 0.5.12.post1: python/sglang/srt/layers/attention/trtllm_mha_backend.py:128-137,151-216,682,710-730,796-816",
        "sglang 0.5.12.post1: python/sglang/srt/mem_cache/swa_memory_pool.py:90-94,616-620",
        "sglang 0.5.12.post1: python/sglang/srt/managers/schedule_batch.py:2655-2745",
        "sglang 0.5.12.post1: python/sglang/srt/models/llama_eagle3.py:182",
        "sglang 0.5.12.post1: python/sglang/srt/configs/model_config.py:1660-1697",
        "sglang 0.5.12.post1: python/sglang/srt/server_args.py:2007-2013",
        "sglang 0.5.12.post1: python/sglang/srt/speculative/draft_utils.py:21-37",
        "sglang 0.5.13: python/sglang/srt/layers/attention/trtllm_mha_backend.py:147-166",
    ),
    sglang_versions=">=0.5.9,<=0.5.12.post1",
)
