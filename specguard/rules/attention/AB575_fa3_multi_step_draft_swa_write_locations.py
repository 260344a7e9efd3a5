"""AB575 fa3-multi-step-draft-swa-write-locations."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, ModelFacts, Severity
from specguard.rules.attention.AB021_multi_layer_eagle_v2_forces_fa3 import (
    forced_by_model,
)
from specguard.rules.attention.backends import SGLANG_DIALECTS, draft_decode_backend
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

# FlashAttentionMultiStepBackend.init_forward_metadata plans every step's backend on the whole forward batch,
# and with a sliding-window KV pool each step's metadata.swa_out_cache_loc is translated from the whole
# multi-step out_cache_loc buffer; the V2 draft loop then hands each step only its slice of that buffer, and
# forward_decode writes KVWriteLoc(cache_loc, swa_out_cache_loc): the step's sliding-window layers store their
# KV at other steps' slots. 0.5.21 slices the SWA locations per step (_get_swa_write_locations).
BACKEND = "fa3"
NO_HYBRID = "--disable-hybrid-swa-memory"
# Architectures on SGLang's is_hybrid_swa_model list in every release of the window (0.5.13
# configs/model_config.py:1684-1698; 0.5.14 :1842-1875; 0.5.20 :2340-2379), leaving out GPT-OSS (speculation turns its hybrid
# memory off, HY557), MiMo-V2 and Step-3.5 (EAGLE runs them on the multi-layer worker) and Laguna (hybrid only
# with a sliding_window, which specguard does not read). The draft shares the target's SWA allocator, so both
# must be hybrid.
HYBRID_SWA_ARCHITECTURES = frozenset(
    {
        "Llama4ForConditionalGeneration",
        "Step3p7ForConditionalGeneration",
        "Gemma4ForCausalLM",
        "Gemma4ForConditionalGeneration",
        "Gemma4UnifiedForConditionalGeneration",
    }
)


def _hybrid(facts: ModelFacts | None) -> bool:
    """Whether SGLang gives this model a sliding-window KV pool: its architecture, or its config's opt-in."""
    return facts is not None and (
        facts.architecture in HYBRID_SWA_ARCHITECTURES or facts.is_hybrid_swa is True
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    steps = ctx.resolution.num_steps
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or ctx.spec.get("speculative_draft_model_path") is None
        or ctx.spec.has(NO_HYBRID)
        or ctx.spec.has("--enable-multi-layer-eagle")
        or forced_by_model(ctx)
        or steps is None
        or steps <= 1
        or draft_decode_backend(ctx) != BACKEND
        or not (_hybrid(ctx.draft) and _hybrid(ctx.target))
    ):
        return
    yield RULE.finding(
        f"{ctx.algorithm} with a sliding-window draft ({ctx.draft.architecture}) drafting {steps} steps on "  # type: ignore[union-attr]
        f"{BACKEND} in SGLang {ctx.version}: each draft step's sliding-window KV write locations are translated from "
        "the whole multi-step buffer instead of that step's slice, so the draft's sliding-window layers store the "
        "step's KV in other slots and attend over stale KV: wrong draft tokens and a lower acceptance rate (the "
        f"target still verifies every token). Use another draft attention backend, add {ctx.flag(NO_HYBRID)}, or "
        "upgrade to 0.5.21+",
        flags=("--speculative-draft-attention-backend", "--speculative-num-steps"),
    )


_LLAMA4_STANDALONE = (
    "--model-path",
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
    "--tp",
    "8",
    "--speculative-algorithm",
    "STANDALONE",
    "--speculative-draft-model-path",
    "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)
_LLAMA4 = {"architectures": ("Llama4ForConditionalGeneration",)}

RULE = Rule(
    check=check,
    code="AB575",
    category=Category.PERF,
    name="fa3-multi-step-draft-swa-write-locations",
    summary="A sliding-window draft with more than one step on the fa3 draft backend writes its window KV at other "
    "steps' slots (0.5.13-0.5.20)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE/EAGLE3/STANDALONE with a separate draft checkpoint, more than one draft step, the draft decoding "
        "on fa3 (`--speculative-draft-attention-backend`, else the decode backend, else the target's backend), and "
        "a target and draft SGLang serves from hybrid sliding-window KV pools (Llama 4, Step-3.7, Gemma 4, or a "
        "config with `is_hybrid_swa`), without `--disable-hybrid-swa-memory`; SGLang 0.5.13 to 0.5.20. Quiet for "
        "multi-layer EAGLE, which has its own worker, and before 0.5.13, whose fa3 backend passed no SWA write "
        "locations (the pool's own per-forward ones were not traced).",
        why="`FlashAttentionMultiStepBackend.init_forward_metadata` plans each step's backend on the whole batch "
        "(0.5.14 layers/attention/flashattention_backend.py:2783-2785), and with a sliding-window pool "
        "`init_forward_metadata` sets `metadata.swa_out_cache_loc` from the full `forward_batch.out_cache_loc` "
        "(0.5.14 :704-717; 0.5.20 :1143-1155). The V2 draft loop gives each step only its slice of that buffer "
        "(0.5.14 speculative/eagle_worker_v2.py:578-630; 0.5.20 :677-741), and `forward_decode` writes "
        "`KVWriteLoc(cache_loc, swa_out_cache_loc)` (0.5.14 :1322-1330; 0.5.20 :1855-1868), so the sliding-window "
        "layers store the step's KV at the first slots of the whole buffer. 0.5.13 opened it: fa3 then first "
        "passes its own `swa_out_cache_loc` (0.5.13 :698-711, 1270-1282, 2772-2774; mem_cache/swa_memory_pool.py:"
        "152-177), where 0.5.12.post1's fa3 passed none. 0.5.21 translates each step's own slice "
        "(flashattention_backend.py:522-537, 553-556, 1176-1180).",
        fix="Use another draft attention backend (e.g. triton or flashinfer), turn hybrid SWA memory off, or "
        "upgrade to SGLang 0.5.21+.",
        fix_safety="No automatic fix: each choice changes the draft's kernels or the KV pool size.",
    ),
    bad=Example(
        argv=(*_LLAMA4_STANDALONE, "--speculative-draft-attention-backend", BACKEND),
        target=_LLAMA4,
        draft=_LLAMA4,
        gpu="H100",
        sglang_version="0.5.20",
    ),
    good=Example(
        argv=(
            *_LLAMA4_STANDALONE,
            "--speculative-draft-attention-backend",
            BACKEND,
            NO_HYBRID,
        ),
        target=_LLAMA4,
        draft=_LLAMA4,
        gpu="H100",
        sglang_version="0.5.20",
    ),
    sources=(
        "sglang 0.5.12.post1: python/sglang/srt/layers/attention/flashattention_backend.py (no swa_out_cache_loc)",
        "sglang 0.5.13: python/sglang/srt/layers/attention/flashattention_backend.py:698-711, 1253-1282, 2772-2774",
        "sglang 0.5.13: python/sglang/srt/speculative/eagle_worker_v2.py:504-554",
        "sglang 0.5.13: python/sglang/srt/mem_cache/swa_memory_pool.py:152-177",
        "sglang 0.5.13: python/sglang/srt/configs/model_config.py:1679-1705 (is_hybrid_swa_model)",
        "sglang 0.5.14: python/sglang/srt/layers/attention/flashattention_backend.py:704-717, 1322-1330, 2783-2785",
        "sglang 0.5.14: python/sglang/srt/speculative/eagle_worker_v2.py:578-630",
        "sglang 0.5.14: python/sglang/srt/configs/model_config.py:1842-1875 (is_hybrid_swa_model)",
        "sglang 0.5.20: python/sglang/srt/layers/attention/flashattention_backend.py:1143-1155, 1855-1868",
        "sglang 0.5.20: python/sglang/srt/speculative/eagle_worker_v2.py:677-741",
        "sglang 0.5.20: python/sglang/srt/configs/model_config.py:2340-2379, 950-955",
        "sglang 0.5.21: python/sglang/srt/layers/attention/flashattention_backend.py:522-537, 553-556, 1176-1180",
    ),
    sglang_versions=">=0.5.13,<0.5.21",
)
