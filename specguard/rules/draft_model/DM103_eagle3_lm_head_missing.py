"""DM103 eagle3-lm-head-missing."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if ctx.algorithm != "EAGLE3" or draft is None or draft.weights is None:
        return
    if draft.tie_word_embeddings or draft.draft_vocab_size is None:
        return  # tied, or no draft vocabulary: SGLang takes the lm_head from the target
    head = draft.weights.lm_head_shape
    if head is None:
        yield RULE.finding(
            f"the EAGLE3 head's config sets draft_vocab_size {draft.draft_vocab_size} and untied embeddings, so "
            "SGLang builds its own lm_head and does not take the target's, but the weights hold no lm_head.weight: "
            "the head scores tokens with an uninitialised matrix and acceptance collapses, with no error. "
            "Use the complete export of the head",
            flags=("--speculative-draft-model-path",),
        )
    elif head[:1] != (draft.draft_vocab_size,):
        yield RULE.finding(
            f"the EAGLE3 head's lm_head.weight is {list(head)}, but its draft_vocab_size is "
            f"{draft.draft_vocab_size}: SGLang builds lm_head with draft_vocab_size rows and the weight loader's "
            "shape assertion fails after the target has loaded. Fix draft_vocab_size in the head's config.json",
            flags=("--speculative-draft-model-path",),
        )


RULE = Rule(
    check=check,
    code="DM103",
    category=Category.START,
    name="eagle3-lm-head-missing",
    summary="An EAGLE3 head with its own draft vocabulary lacks lm_head.weight (or it has the wrong rows)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="When the draft's config sets `draft_vocab_size` with untied embeddings, checks that its safetensors "
        "headers hold `lm_head.weight` with `draft_vocab_size` rows.",
        why="SGLang's EAGLE3 head takes the target's lm_head only when the config has no `draft_vocab_size` "
        "(`load_lm_head_from_target`, `models/llama_eagle3.py:302-316`, used by `eagle_worker_v2.py:353-362`); "
        "otherwise it builds `ParallelLMHead(draft_vocab_size, hidden_size)` and fills it from the draft's "
        "weights. The embedding always comes from the target (`set_embed`), so a missing `embed_tokens` is "
        "fine, but a missing `lm_head.weight` leaves the head's scores uninitialised, and a wrong row count "
        "fails the loader's shape assertion (`model_loader/weight_utils.py:1582`).",
        fix="Use the complete export of the head, or fix `draft_vocab_size`. No automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "./my-eagle3-head"),
        draft={"draft_vocab_size": 32000, "tie_word_embeddings": False,
               "weights": {"source": "example", "tensor_count": 12, "d2t_shape": (32000,)}},
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "./my-eagle3-head"),
        draft={"draft_vocab_size": 32000, "tie_word_embeddings": False,
               "weights": {"source": "example", "tensor_count": 13, "d2t_shape": (32000,), "lm_head_shape": (32000, 4096)}},
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/models/llama_eagle3.py:302-316",
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_worker_v2.py:353-362",
        "sglang 0.5.23: python/sglang/srt/model_loader/weight_utils.py:1582-1585",
    ),
)
