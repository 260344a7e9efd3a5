"""What sgl-jax (sgl-project/sglang-jax, HEAD cddbf6f1, ``python/sgl_jax/srt/server_args.py``) accepts.

Read for design/dialects.md §2; the speculative defaults differ from SGLang's and sgl-jax has no
automatic parameter choice and no topk==1 rewrite of the draft token count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from specguard.models import Dialect
from specguard.rules.base import CheckContext, Example
from specguard.rules.examples import QWEN3_32B_TP4_EAGLE3
from specguard.sglang_facts.sgl_jax import DFLASH, NEXTN_RUNS, SPECULATIVE_DECODING

if TYPE_CHECKING:
    from datetime import date

ATTENTION_BACKENDS = ("native", "fa", "fa_mha", "dsa_sparse")
DEFAULT_ATTENTION_BACKEND = "fa"
ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "DFLASH")
# The algorithms that draft with --speculative-eagle-topk (DFLASH drafts a block: JX005 judges it).
TOPK_DRAFT_ALGORITHMS = tuple(a for a in ALGORITHMS if a != "DFLASH")
DEFAULT_NUM_STEPS = 4
DEFAULT_EAGLE_TOPK = 5
DEFAULT_NUM_DRAFT_TOKENS = 4


def algorithms_in(built: date | None) -> tuple[str, ...]:
    """The --speculative-algorithm choices of an sgl-jax build (None: the HEAD the rules were read at)."""
    if built is None:
        return ALGORITHMS
    if not SPECULATIVE_DECODING.present_in(built):
        return ()
    return tuple(a for a in ALGORITHMS if a != "DFLASH" or DFLASH.present_in(built))


# Choices the parser takes but the scheduler cannot run (ledger/sgl-jax): STANDALONE at every build
# (the scheduler builds a draft worker only for is_eagle() algorithms and DFLASH, f671c326
# scheduler.py:231-236 to cddbf6f1 :383-417, then calls self.draft_worker: cddbf6f1 :561), NEXTN
# before #1192 (SpeculativeAlgorithm.from_string had no NEXTN key).


def runnable_in(built: date | None) -> tuple[str, ...]:
    """The choices whose worker the build can make (the comment above says which it cannot)."""
    return tuple(
        a for a in algorithms_in(built)
        if a != "STANDALONE" and (a != "NEXTN" or built is None or NEXTN_RUNS.present_in(built))
    )


def raw_algorithm(ctx: CheckContext) -> str | None:
    """The algorithm as sgl-jax sees it (NEXTN kept apart from EAGLE)."""
    value = ctx.spec.get("speculative_algorithm")
    return value.upper() if value else None


def params(ctx: CheckContext) -> tuple[int, int, int]:
    """(steps, topk, draft tokens) with sgl-jax's defaults filled in."""
    steps = ctx.spec.get("speculative_num_steps")
    topk = ctx.spec.get("speculative_eagle_topk")
    draft = ctx.spec.get("speculative_num_draft_tokens")
    return (
        DEFAULT_NUM_STEPS if steps is None else steps,
        DEFAULT_EAGLE_TOPK if topk is None else topk,
        DEFAULT_NUM_DRAFT_TOKENS if draft is None else draft,
    )


def backend(ctx: CheckContext) -> str:
    return ctx.spec.get("attention_backend") or DEFAULT_ATTENTION_BACKEND


def jax_example(*extra: str, base: tuple[str, ...] = QWEN3_32B_TP4_EAGLE3, build: str | None = None) -> Example:
    return Example(argv=(*base, *extra), dialect=Dialect.SGL_JAX, gpu="TPU-v6e", sgl_jax_version=build)
