"""DM003 draft-vocab-differs-from-target."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import STANDALONE_VOCAB_CHECKED


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None or ctx.draft is None:
        return
    if ctx.spec.get("speculative_draft_model_path") is None:
        return  # the draft is the target's own MTP layers (or missing: DM005/DM006)
    target_vocab, draft_vocab = ctx.target.vocab_size, ctx.draft.vocab_size
    if target_vocab is None or draft_vocab is None or target_vocab == draft_vocab:
        return
    algorithm = ctx.algorithm
    if algorithm == "STANDALONE":
        if STANDALONE_VOCAB_CHECKED.present_in(ctx.version):
            return  # SGLang itself refuses the launch at start there (DM410)
        if draft_vocab > target_vocab:
            yield RULE.finding(
                f"the STANDALONE draft has {draft_vocab} tokens and the target only {target_vocab}: the draft "
                f"proposes token ids up to {draft_vocab - 1}, which index past the target's embedding "
                "(an illegal memory access at run time; SGLang never compares the two). Use a draft "
                "built on the target's tokenizer",
                flags=("--speculative-draft-model-path",),
            )
            return
        same_family = ctx.target.model_type is not None and ctx.target.model_type == ctx.draft.model_type
        if same_family:
            yield RULE.finding(
                f"the STANDALONE draft has {draft_vocab} tokens and the target {target_vocab} (both "
                f"{ctx.target.model_type}): fine only if they share one tokenizer and the difference is "
                "embedding padding (Qwen2.5-7B pads to 152064, Qwen2.5-0.5B to 151936); check that the "
                "tokenizer files match, since SGLang never loads the draft's tokenizer",
                severity=Severity.WARNING,
                flags=("--speculative-draft-model-path",),
            )
            return
        yield RULE.finding(
            f"the STANDALONE draft ({ctx.draft.model_type or 'unknown type'}, {draft_vocab} tokens) and the "
            f"target ({ctx.target.model_type or 'unknown type'}, {target_vocab} tokens) use different "
            "vocabularies: the target verifies token ids from the draft's tokenizer, so almost nothing is "
            "accepted. Use a draft from the target's model family",
            flags=("--speculative-draft-model-path",),
        )
        return
    what = "EAGLE3 head" if algorithm == "EAGLE3" else "EAGLE head"
    extra = ""
    if algorithm == "EAGLE3" and ctx.draft.draft_vocab_size is not None:
        extra = f" (its draft_vocab_size {ctx.draft.draft_vocab_size} is fine: d2t maps it into vocab_size)"
    yield RULE.finding(
        f"the {what}'s vocab_size is {draft_vocab} but the target's is {target_vocab}{extra}: the head was "
        "trained for another tokenizer. SGLang replaces its embedding with the target's and starts, but "
        "its proposals are other tokens' ids and acceptance collapses. Use a draft trained for this target",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    check=check,
    code="DM003",
    category=Category.WRONG_OUTPUT,
    name="draft-vocab-differs-from-target",
    summary="The draft's vocab_size differs from the target's",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="Compares `vocab_size` of the draft's and the target's config.json for EAGLE, EAGLE3 and "
        "STANDALONE with a draft path. An EAGLE3 head's smaller `draft_vocab_size` is expected and "
        "not compared.",
        why="SGLang never compares the two vocabularies: not at argument time (catalogue §3e, cases "
        "dm:P03, core:C02 accept a 151936-token draft for a 128256-token target) and not at start-up, "
        "because the draft worker never loads a tokenizer (`managers/tp_worker.py:326`). An EAGLE/EAGLE3 "
        "head gets the target's embedding (`eagle_worker_v2.py` `init_lm_head`), and its `d2t` table maps "
        "its `draft_vocab_size` ids into a `vocab_size` that must be the target's. A STANDALONE draft uses "
        "its own embedding and head (`standalone_worker_v2.py:131-135`) and its token ids go straight to "
        "the target: ids beyond the target's vocabulary read past its embedding (only caught with "
        "`SGLANG_ENABLE_ASYNC_ASSERT`), and ids from another tokenizer are never accepted. Same-family "
        "models may differ only by padding (Qwen2.5-7B 152064 vs Qwen2.5-0.5B 151936), which is a "
        "warning, not an error. From 0.5.15 the STANDALONE worker compares the two itself and refuses "
        "the launch at start (DM410 reports it); this rule then speaks of EAGLE and EAGLE3 heads only.",
        fix="Use a draft trained for (or from the family of) the target. No automatic fix.",
        fix_safety="No fix: the draft checkpoint is the user's choice.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "STANDALONE",
              "--speculative-draft-model-path", "Qwen/Qwen2.5-0.5B-Instruct"),
        target={"vocab_size": 128256, "model_type": "llama"},
        draft={"vocab_size": 151936, "model_type": "qwen2"},
        sglang_version="0.5.14",
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "STANDALONE",
              "--speculative-draft-model-path", "meta-llama/Llama-3.2-1B-Instruct"),
        target={"vocab_size": 128256, "model_type": "llama"},
        draft={"vocab_size": 128256, "model_type": "llama"},
        sglang_version="0.5.14",
    ),
    sources=(
        "design: sglang-spec-checks.md §3e (tokenizer/vocab mismatch), cases dm:P03, core:C02",
        "sglang 0.5.23: python/sglang/srt/managers/tp_worker.py:326 (draft worker skips the tokenizer)",
        "sglang 0.5.23: python/sglang/srt/speculative/standalone_worker_v2.py:131-135",
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_worker_v2.py:336-380 (init_lm_head)",
        "sglang 0.5.23: python/sglang/srt/models/llama_eagle3.py:325-352 (d2t -> hot_token_id)",
        "seed: sglang-speculative-decoding.md (Standalone Speculative Decoding (Small Draft Model))",
    ),
)
