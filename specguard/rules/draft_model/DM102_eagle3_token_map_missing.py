"""DM102 eagle3-token-map-missing."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if ctx.algorithm != "EAGLE3" or draft is None or draft.weights is None:
        return
    draft_vocab = draft.draft_vocab_size
    vocab = draft.vocab_size or (ctx.target.vocab_size if ctx.target else None)
    if draft_vocab is None or vocab is None or draft_vocab >= vocab:
        return
    d2t = draft.weights.d2t_shape
    if d2t is None:
        yield RULE.finding(
            f"the EAGLE3 head predicts {draft_vocab} draft tokens out of the target's {vocab} but its weights hold "
            "no d2t table (draft id -> target id). SGLang then uses draft ids as target ids: the drafts are "
            "wrong tokens, acceptance collapses to about 1 token per step and nothing errors "
            f"({ctx.flag('--speculative-token-map')} does not help: EAGLE3 ignores it). Re-export the head with d2t",
            flags=("--speculative-draft-model-path",),
        )
    elif d2t[:1] != (draft_vocab,):
        yield RULE.finding(
            f"the EAGLE3 head's d2t table has shape {list(d2t)}, but its draft_vocab_size is {draft_vocab}: "
            "each of the lm_head's rows needs one entry, so draft tokens map to the wrong target ids or index "
            "past the table. The d2t and the config come from different exports; re-export the head",
            flags=("--speculative-draft-model-path",),
        )


RULE = Rule(
    check=check,
    code="DM102",
    category=Category.START,
    name="eagle3-token-map-missing",
    summary="An EAGLE3 head with a reduced draft vocabulary has no d2t table (or one of the wrong size)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="When the draft's `draft_vocab_size` is smaller than the vocabulary, checks that its safetensors "
        "headers hold a `d2t` tensor with `draft_vocab_size` entries.",
        why="An EAGLE3 head with a reduced vocabulary (SpecForge's default 32000) scores only its draft tokens; "
        "`d2t` holds each draft id's offset to the target id, and SGLang builds `hot_token_id` from it while "
        "loading (`models/llama_eagle3.py:350-356`) and maps the draft's top-k through it "
        "(`speculative/eagle_worker_v2.py:363-369, 757-758`). Without `d2t`, `hot_token_id` stays None and "
        "draft ids are used as target ids; `--speculative-token-map` is ignored for EAGLE3 "
        "(`eagle_worker_v2.py:325-330`). Nothing fails: acceptance just collapses.",
        fix="Re-export the draft with its `d2t` (and `t2d`) tensors. No automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "./my-eagle3-head"),
        target={"vocab_size": 128256},
        draft={"vocab_size": 128256, "draft_vocab_size": 32000,
               "weights": {"source": "example", "tensor_count": 11, "lm_head_shape": (32000, 4096)}},
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "./my-eagle3-head"),
        target={"vocab_size": 128256},
        draft={"vocab_size": 128256, "draft_vocab_size": 32000,
               "weights": {"source": "example", "tensor_count": 13, "lm_head_shape": (32000, 4096),
                           "d2t_shape": (32000,), "t2d_shape": (128256,)}},
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/models/llama_eagle3.py:350-356",
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_worker_v2.py:325-330, 363-369, 757-758",
        "fixture: shared/fixtures/draft-templates/sgl-project-SpecForge/llama3-8B-eagle3.json (draft_vocab_size 32000 of 128256)",
    ),
)
