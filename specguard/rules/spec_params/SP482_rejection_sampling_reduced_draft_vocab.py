"""SP482 rejection-sampling-reduced-draft-vocab."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import effective_topk
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3_CHAIN
from specguard.rules.spec_params.SP194_rejection_sampling_multi_layer_eagle import (
    multi_layer_source,
)
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS

REJECTION = "--speculative-use-rejection-sampling"
TOKEN_MAP = "--speculative-token-map"


def _reduced_vocab(ctx: CheckContext) -> str | None:
    """Why the draft proposes over fewer tokens than the target's vocabulary, or None when it does not (or
    that is unknown). SGLang's draft vocabulary here is its hot-token table: an EAGLE3 head's d2t, or an EAGLE
    head's --speculative-token-map (EAGLE3 ignores the map)."""
    if ctx.algorithm != "EAGLE3":
        return (
            f"{ctx.flag(TOKEN_MAP)} (a hot-token subset of the vocabulary)"
            if ctx.spec.has(TOKEN_MAP)
            else None
        )
    draft, target = ctx.draft, ctx.target
    if (
        draft is None
        or target is None
        or draft.draft_vocab_size is None
        or target.vocab_size is None
    ):
        return None
    # Without a d2t table SGLang keeps no hot-token table and never compares (DM102 reports that head).
    if draft.weights is not None and draft.weights.d2t_shape is None:
        return None
    if draft.draft_vocab_size == target.vocab_size:
        return None
    return f"the EAGLE3 head's draft_vocab_size {draft.draft_vocab_size} (d2t table) vs the target's vocab_size {target.vocab_size}"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_HEAD_ALGORITHMS or not ctx.spec.has(REJECTION):
        return
    # A tree is refused at argument time (SP009), and the multi-layer worker has no such comparison.
    topk = effective_topk(ctx)
    if (topk is not None and topk != 1) or multi_layer_source(ctx) is not None:
        return
    reduced = _reduced_vocab(ctx)
    if reduced is None:
        return
    yield RULE.finding(
        f"{ctx.flag(REJECTION)} with a draft that proposes over a reduced vocabulary ({reduced}) in SGLang "
        f"{ctx.version}: rejection sampling compares draft and target probabilities token by token, so the "
        "draft worker raises when its KV pool is allocated, after the weights load (ValueError "
        "'--speculative-use-rejection-sampling requires the draft and target to share one vocab'). "
        f"Drop {ctx.flag(REJECTION)}, or use a full-vocabulary draft",
        flags=(REJECTION, TOKEN_MAP)
        if ctx.algorithm != "EAGLE3"
        else (REJECTION, "--speculative-draft-model-path"),
        fix=fix_of(
            f"drop {REJECTION}", Applicability.UNSAFE, Edit(name=REJECTION, value=None)
        ),
    )


LLAMA31_8B_EAGLE3_FACTS = {"architectures": ("LlamaForCausalLM",), "vocab_size": 128256}

RULE = Rule(
    check=check,
    code="SP482",
    category=Category.START,
    name="rejection-sampling-reduced-draft-vocab",
    summary="--speculative-use-rejection-sampling with a reduced-vocabulary draft (an EAGLE3 d2t head, or an "
    "EAGLE token map) fails when the draft pool is allocated (0.5.14+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-use-rejection-sampling` on EAGLE/EAGLE3/NEXTN with a topk-1 chain (no multi-layer "
        "EAGLE) when the draft proposes over a hot-token subset: an EAGLE3 head whose config.json "
        "`draft_vocab_size` differs from the target's `vocab_size` (and whose weights carry the `d2t` table, or "
        "are not read), or an EAGLE head given `--speculative-token-map`. SGLang 0.5.14 or later.",
        why="0.5.14 added rejection sampling with a FIXME: the kernel cannot scatter a reduced draft vocabulary "
        "back into the target's. `EAGLEWorkerV2.alloc_memory_pool` takes the draft vocabulary from the "
        "hot-token table (`hot_token_id`: the EAGLE3 head's d2t, llama_eagle3.py:322-324, read in init_lm_head; "
        "or the EAGLE token map, init_token_map) and raises ValueError '--speculative-use-rejection-sampling "
        "requires the draft and target to share one vocab' when its size differs from the target's vocab_size "
        "(0.5.14 speculative/eagle_worker_v2.py:216-247, 302-335). Unchanged to 0.5.23 (eagle_worker_v2.py:243-277, "
        "323-370); 0.5.23's ROCm auto-enable skips EAGLE3 and token maps for this reason (arg_groups/"
        "speculative_hook.py:40-46). 0.5.13 has no rejection sampling.",
        fix="Drop `--speculative-use-rejection-sampling`, or use a draft that proposes over the full vocabulary.",
        fix_safety="Unsafe: verification goes back to greedy/threshold acceptance, which changes sampled output.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, REJECTION),
        target=LLAMA31_8B_EAGLE3_FACTS,
        draft={
            "architectures": ("LlamaForCausalLMEagle3",),
            "vocab_size": 128256,
            "draft_vocab_size": 32000,
        },
        sglang_version="0.5.14",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, REJECTION),
        target=LLAMA31_8B_EAGLE3_FACTS,
        draft={
            "architectures": ("LlamaForCausalLMEagle3",),
            "vocab_size": 128256,
            "draft_vocab_size": 128256,
        },
        sglang_version="0.5.14",
    ),
    sources=(
        "sglang 0.5.13: python/sglang/srt/server_args.py (no speculative_use_rejection_sampling)",
        "sglang 0.5.14: python/sglang/srt/speculative/eagle_worker_v2.py:216-247,302-335",
        "sglang 0.5.14: python/sglang/srt/models/llama_eagle3.py:322-324",
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_worker_v2.py:243-277,323-370",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:40-46",
    ),
    sglang_versions=">=0.5.14",
    log_signatures=(
        r"--speculative-use-rejection-sampling requires the draft and target to share one vocab",
    ),
)
