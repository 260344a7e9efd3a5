"""DM130 draft-vocab-same-size-other-family."""

from __future__ import annotations

import re
from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs


def model_family(model_type: str) -> str:
    """The family a config's ``model_type`` names, without its generation or variant
    (``qwen2``/``qwen3_moe`` -> ``qwen``, ``gemma3_text`` -> ``gemma``): generations of one family
    reuse their tokenizer far more often than two families share one."""
    return re.sub(r"[\d._-].*$", "", model_type.lower()) or model_type.lower()


# Below this share of ids naming the same token the two tokenizers are different ones; a few
# added special tokens (chat markers) may differ between fine-tunes of one base.
SAME_VOCABULARY = 0.99


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "STANDALONE" or ctx.target is None or ctx.draft is None:
        return
    if ctx.spec.get("speculative_draft_model_path") is None:
        return
    target, draft = ctx.target, ctx.draft
    if target.vocab_size is None or target.vocab_size != draft.vocab_size:
        return  # different sizes are DM003's
    consequence = (
        "SGLang never loads the draft's tokenizer and passes the draft's ids to the target as they are, so "
        "output stays correct but almost no draft token is accepted (slower than no speculation)"
    )
    if draft.vocab_agreement is not None:
        # Both tokenizer.json files were read: they decide, whatever the families.
        if draft.vocab_agreement >= SAME_VOCABULARY:
            return
        yield RULE.finding(
            f"the STANDALONE draft and the target both have {target.vocab_size} tokens, but their tokenizer.json "
            f"files were compared and only {draft.vocab_agreement:.1%} of the target's ids name the same token in "
            f"the draft's: {consequence}. Use a draft trained with the target's tokenizer",
            severity=Severity.WARNING,
        )
        return
    if target.model_type is None or draft.model_type is None:
        return
    if model_family(target.model_type) == model_family(draft.model_type):
        return
    yield RULE.finding(
        f"the STANDALONE draft ({draft.model_type}) and the target ({target.model_type}) both have "
        f"{target.vocab_size} tokens, but they are different model families, whose tokenizers usually "
        f"give the same ids to different tokens: {consequence}. The tokenizer files were not at hand to "
        "compare (give both as local directories, or have them in the Hugging Face cache, and specguard "
        f"compares them), or use a draft from the {target.model_type} family",
        severity=Severity.WARNING,
    )


RULE = Rule(
    check=check,
    code="DM130",
    category=Category.PERF,
    name="draft-vocab-same-size-other-family",
    summary="A STANDALONE draft of another model family has a vocabulary of the same size",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="For STANDALONE with a draft path and a draft `vocab_size` equal to the target's (unequal sizes "
        "are DM003's): when both checkpoints are on this machine, compares their `tokenizer.json` "
        "vocabularies id by id (fires below 99% agreement, whatever the families); otherwise compares the "
        "`model_type` families, where generations of one family (`qwen2`/`qwen3`, `gemma2`/`gemma3`) count "
        "as one.",
        why="The size of a vocabulary says nothing about its tokens: Llama-2 and Mistral both have 32000 "
        "tokens from different SentencePiece models. A STANDALONE draft keeps its own embedding and head "
        "(`standalone_worker_v2.py:131-135`, `init_lm_head` does not share the target's) and SGLang's "
        "draft worker never loads a tokenizer (`managers/tp_worker.py:326-329`: the draft's tokenizer "
        "would only duplicate the target's, since `tokenizer_path` points at the target). The draft's ids "
        "therefore reach the target's verify step as they are: with another tokenizer they name other "
        "tokens, the target rejects nearly all of them, and the launch is slower than plain decoding. "
        "Nothing crashes, which is why this is a warning.",
        fix="Use a draft trained with the target's tokenizer. Give both checkpoints as local directories (or "
        "have them in the Hugging Face cache) and specguard compares their `tokenizer.json` files. No automatic fix.",
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
