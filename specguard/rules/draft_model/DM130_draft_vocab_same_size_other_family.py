"""DM130 draft-vocab-same-size-other-family."""

from __future__ import annotations

import re
from collections.abc import Iterator

from specguard.models import Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs


def model_family(model_type: str) -> str:
    """The family a config's ``model_type`` names, without its generation or variant
    (``qwen2``/``qwen3_moe`` -> ``qwen``, ``gemma3_text`` -> ``gemma``): generations of one family
    reuse their tokenizer far more often than two families share one."""
    return re.sub(r"[\d._-].*$", "", model_type.lower()) or model_type.lower()


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "STANDALONE" or ctx.target is None or ctx.draft is None:
        return
    if ctx.spec.get("speculative_draft_model_path") is None:
        return
    target, draft = ctx.target, ctx.draft
    if target.vocab_size is None or target.vocab_size != draft.vocab_size:
        return  # different sizes are DM003's
    if target.model_type is None or draft.model_type is None:
        return
    if model_family(target.model_type) == model_family(draft.model_type):
        return
    yield RULE.finding(
        f"the STANDALONE draft ({draft.model_type}) and the target ({target.model_type}) both have "
        f"{target.vocab_size} tokens, but they are different model families, whose tokenizers usually "
        "give the same ids to different tokens: SGLang never loads the draft's tokenizer and passes the "
        "draft's ids to the target as they are, so output stays correct but almost no draft token is "
        "accepted (slower than no speculation). Compare the two tokenizer files, or use a draft from the "
        f"{target.model_type} family",
        severity=Severity.WARNING,
    )


RULE = Rule(
    check=check,
    code="DM130",
    name="draft-vocab-same-size-other-family",
    summary="A STANDALONE draft of another model family has a vocabulary of the same size",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="For STANDALONE with a draft path, compares the `model_type` families of the draft and the "
        "target when their `vocab_size` is equal (unequal sizes are DM003's). Generations of one family "
        "(`qwen2`/`qwen3`, `gemma2`/`gemma3`) count as one family.",
        why="The size of a vocabulary says nothing about its tokens: Llama-2 and Mistral both have 32000 "
        "tokens from different SentencePiece models. A STANDALONE draft keeps its own embedding and head "
        "(`standalone_worker_v2.py:131-135`, `init_lm_head` does not share the target's) and SGLang's "
        "draft worker never loads a tokenizer (`managers/tp_worker.py:326-329`: the draft's tokenizer "
        "would only duplicate the target's, since `tokenizer_path` points at the target). The draft's ids "
        "therefore reach the target's verify step as they are: with another tokenizer they name other "
        "tokens, the target rejects nearly all of them, and the launch is slower than plain decoding. "
        "Nothing crashes, which is why this is a warning.",
        fix="Use a draft of the target's family, or check that the two `tokenizer.json` files hold the same "
        "vocabulary. No automatic fix.",
        fix_safety="No fix: the draft checkpoint is the user's choice.",
    ),
    bad=Example(
        argv=("--model-path", "meta-llama/Llama-2-7b-chat-hf", "--speculative-algorithm", "STANDALONE",
              "--speculative-draft-model-path", "mistralai/Mistral-7B-v0.1"),
        target={"vocab_size": 32000, "model_type": "llama"},
        draft={"vocab_size": 32000, "model_type": "mistral"},
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-32B", "--speculative-algorithm", "STANDALONE",
              "--speculative-draft-model-path", "Qwen/Qwen2.5-0.5B-Instruct"),
        target={"vocab_size": 151936, "model_type": "qwen3"},
        draft={"vocab_size": 151936, "model_type": "qwen2"},
    ),
    sources=(
        "issue #14 (Same-size vocabularies from different tokenizers: Llama vs Mistral at 32000)",
        "sglang 0.5.23: python/sglang/srt/managers/tp_worker.py:326-329 (the draft worker loads no tokenizer)",
        "sglang 0.5.23: python/sglang/srt/speculative/standalone_worker_v2.py:131-135 (own embeddings and lm_head)",
        "seed: sglang-speculative-decoding.md (Standalone Speculative Decoding (Small Draft Model))",
    ),
)
