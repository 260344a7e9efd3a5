"""DM421 eagle3-null-draft-vocab-untied-head."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, ModelFacts, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3

EAGLE3_HEAD = "LlamaForCausalLMEagle3"
# transformers' LlamaConfig defaults tie_word_embeddings to False: a llama head that leaves the key out is untied.
UNTIED_BY_DEFAULT_MODEL_TYPE = "llama"


def _untied(draft: ModelFacts) -> bool:
    if draft.tie_word_embeddings is not None:
        return not draft.tie_word_embeddings
    return draft.model_type == UNTIED_BY_DEFAULT_MODEL_TYPE


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if ctx.algorithm != "EAGLE3" or draft is None or draft.architecture != EAGLE3_HEAD:
        return
    if draft.draft_vocab_size_null is not True or not _untied(draft):
        return
    yield RULE.finding(
        f'the EAGLE3 head\'s config.json has "draft_vocab_size": null with untied embeddings: SGLang {ctx.version} '
        "builds its lm_head as ParallelLMHead(draft_vocab_size, ...) with that None, and loading the draft fails "
        "with \"TypeError: unsupported operand type(s) for -: 'NoneType' and 'NoneType'\" after the target has "
        "loaded. Set draft_vocab_size to the head's lm_head rows (the vocab_size for a full-vocabulary head), "
        "or use SGLang 0.5.2rc0 or later, which takes the target's lm_head",
        flags=("--speculative-draft-model-path",),
    )


NULL_VOCAB_HEAD = {
    "architectures": (EAGLE3_HEAD,),
    "model_type": "llama",
    "vocab_size": 128256,
    "draft_vocab_size_null": True,
    "tie_word_embeddings": False,
}

RULE = Rule(
    check=check,
    code="DM421",
    category=Category.START,
    name="eagle3-null-draft-vocab-untied-head",
    summary="An untied EAGLE3 head with draft_vocab_size null fails to load before 0.5.2rc0",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE3` with a `LlamaForCausalLMEagle3` draft whose config.json states "
        '`"draft_vocab_size": null` and whose embeddings are untied (`tie_word_embeddings` false, or absent on a '
        "`llama` config, whose default is false), SGLang 0.4.4.post2 (the first with EAGLE3) to 0.5.1.post3.",
        why="Up to 0.5.1.post3 an untied head builds `ParallelLMHead(config.draft_vocab_size, config.hidden_size)` "
        "(0.4.4.post2 models/llama_eagle3.py:167-175; 0.5.1.post3 :188-196); with None, "
        "`VocabParallelEmbedding.__init__` computes `num_embeddings - org_vocab_size` on two Nones "
        "(0.4.4.post2 layers/vocab_parallel_embedding.py:236-239; 0.5.1.post3 :222-233) and the draft fails to load. 0.5.2rc0 treats a "
        "null draft_vocab_size as the full vocabulary and takes the lm_head from the target "
        "(llama_eagle3.py:188-194 `load_lm_head_from_target`; speculative/eagle_worker.py:141-150 `set_embed_and_head`).",
        fix="Set `draft_vocab_size` in the head's config.json to its lm_head's rows, or upgrade to SGLang 0.5.2rc0 or later.",
        fix_safety="No automatic fix: it is the draft's config.json.",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE3, draft=NULL_VOCAB_HEAD, sglang_version="0.5.1.post3"
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE3, draft=NULL_VOCAB_HEAD, sglang_version="0.5.2rc0"
    ),
    sources=(
        "sglang 0.4.4.post1: no models/llama_eagle3.py (EAGLE3 arrives in 0.4.4.post2)",
        "sglang 0.4.4.post2: python/sglang/srt/models/llama_eagle3.py:167-175",
        "sglang 0.4.4.post2: python/sglang/srt/layers/vocab_parallel_embedding.py:236-239",
        "sglang 0.5.1.post3: python/sglang/srt/models/llama_eagle3.py:188-196",
        "sglang 0.5.1.post3: python/sglang/srt/layers/vocab_parallel_embedding.py:222-233",
        "sglang 0.5.2rc0: python/sglang/srt/models/llama_eagle3.py:188-194",
        "sglang 0.5.2rc0: python/sglang/srt/speculative/eagle_worker.py:141-150",
    ),
    sglang_versions=">=0.4.4.post2,<=0.5.1.post3",
    dialects=SGLANG_DIALECTS,
    log_signatures=(r"unsupported operand type\(s\) for -: 'NoneType' and 'NoneType'",),
)
