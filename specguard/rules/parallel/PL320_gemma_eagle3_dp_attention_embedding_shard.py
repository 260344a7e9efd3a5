"""PL320 gemma-eagle3-dp-attention-embedding-shard."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.spec_params._shared import attn_dp_flags

# The Gemma classes whose get_embed_and_head() cuts the target's unsharded embedding along the full
# TP group (``_shard_weight``): Gemma3ForConditionalGeneration delegates to its Gemma3ForCausalLM
# (0.5.21 gemma3_mm.py:485-490). Gemma4ForConditionalGeneration hands over the whole embedding
# (gemma4_mm.py:1103-1118) and is not this case.
FULL_TP_SHARDING_GEMMA = frozenset(
    {"Gemma3ForCausalLM", "Gemma3ForConditionalGeneration", "Gemma4ForCausalLM"}
)


def _attention_dp_width(ctx: CheckContext) -> int:
    """The DP-attention group count this launch asks for (1 = none): before 0.5.22 the switch
    --enable-dp-attention with --dp-size, from 0.5.22 also --attn-dp-size."""
    if ctx.resolution.attention_dp_size <= 1:
        return 1
    return ctx.spec.get("attn_dp_size") or ctx.spec.get("dp_size") or 1


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "EAGLE3"
        or ctx.target is None
        or ctx.target.architecture not in FULL_TP_SHARDING_GEMMA
    ):
        return
    dp = _attention_dp_width(ctx)
    tp = ctx.spec.get("tp_size") or 1
    if dp <= 1 or tp <= 1:
        return
    draft = ctx.draft
    # The EAGLE3 head keeps its own embedding when its width differs from the target's
    # (LlamaForCausalLM.set_embed returns early), so nothing is shared and nothing is cut wrong.
    if (
        draft is not None
        and draft.target_hidden_size is not None
        and draft.target_hidden_size != draft.hidden_size
    ):
        return
    written = " ".join(ctx.flag(f) for f in attn_dp_flags(ctx))
    attn_tp = max(tp // dp, 1)
    expects = (
        "the whole vocabulary"
        if attn_tp == 1
        else f"1/{attn_tp} of the vocabulary per rank"
    )
    yield RULE.finding(
        f"EAGLE3 on a {ctx.target.architecture} target with DP attention ({written}) in SGLang "
        f"{ctx.env.sglang_version}: the draft head is built on the attention-TP group ({attn_tp} ranks), "
        f"so its vocab-parallel embedding expects {expects}, while the Gemma "
        f"target hands it a 1/{tp} slice cut along the full {ctx.flag('--tp-size')}. The draft then looks up rows it "
        "was not given (an out-of-range index on the GPU, or embeddings of other tokens). Upgrade to SGLang 0.5.22, "
        "or serve this target without DP attention",
        flags=(*attn_dp_flags(ctx), "--speculative-algorithm"),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own EAGLE worker
    check=check,
    code="PL320",
    category=Category.CRASH,
    name="gemma-eagle3-dp-attention-embedding-shard",
    summary="EAGLE3 on a Gemma 3/Gemma 4 target with DP attention shares a wrongly cut embedding with the draft (0.5.12-0.5.21)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE3` on a `Gemma3ForCausalLM`, `Gemma3ForConditionalGeneration` or "
        "`Gemma4ForCausalLM` target with DP attention (`--enable-dp-attention --dp-size N`, N > 1, with "
        "`--tp-size` > 1), SGLang 0.5.12 to 0.5.21. Quiet when the EAGLE3 head's `target_hidden_size` differs "
        "from its `hidden_size` (it keeps its own embedding then).",
        why="Gemma keeps an unsharded `nn.Embedding`; its `get_embed_and_head()` (from 0.5.12, when these classes "
        "got their EAGLE hooks) cuts it into `ceil(vocab / tp_size)` rows for the rank, reading the full TP size "
        "(0.5.12 gemma3_causal.py:908-928, get_tensor_model_parallel_world_size; 0.5.21 gemma3_causal.py:931-951 "
        "and gemma4_causal.py:1390-1411, get_parallel().tp_size). With DP attention an EAGLE3 draft is built inside "
        "`draft_tp_context(attention TP group)` (0.5.12 eagle_worker_v2.py:142-163; 0.5.21 eagle_worker_v2.py:188-211, "
        "where patch_tensor_parallel_group narrows tp_size to the attention-TP width, parallel_state.py:3096-3146), "
        "so the head's VocabParallelEmbedding holds `vocab / attn_tp` rows (vocab_parallel_embedding.py:248-258), but "
        "`init_lm_head` runs outside that context and `set_embed` swaps in the `vocab / tp` slice "
        "(0.5.12 eagle_worker_v2.py:212-213, llama.py:779-787). 0.5.22 cuts the slice along the draft embedding's "
        "own TP group (`get_embed_and_head_for_draft`, gemma3_causal.py:928-955; pp_draft_embedding.py:79-99).",
        fix="Upgrade to SGLang 0.5.22, or drop DP attention for this target. No automatic fix.",
        fix_safety="No fix: the release and the parallel layout are the user's choice.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "google/gemma-3-27b-it",
            "--tp-size",
            "4",
            "--dp-size",
            "2",
            "--enable-dp-attention",
            "--speculative-algorithm",
            "EAGLE3",
            "--speculative-draft-model-path",
            "./gemma-3-27b-it-eagle3",
        ),
        target={"architectures": ("Gemma3ForConditionalGeneration",)},
        sglang_version="0.5.21",
    ),
    good=Example(
        argv=(
            "--model-path",
            "google/gemma-3-27b-it",
            "--tp-size",
            "4",
            "--dp-size",
            "2",
            "--enable-dp-attention",
            "--speculative-algorithm",
            "EAGLE3",
            "--speculative-draft-model-path",
            "./gemma-3-27b-it-eagle3",
        ),
        target={"architectures": ("Gemma3ForConditionalGeneration",)},
        sglang_version="0.5.22",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/models/gemma3_causal.py, gemma4_causal.py (no get_embed_and_head: DM040's window)",
        "sglang 0.5.12: python/sglang/srt/models/gemma3_causal.py:908-928; gemma4_causal.py:1105-1125",
        "sglang 0.5.12: python/sglang/srt/speculative/eagle_worker_v2.py:142-163, 212-213; eagle_worker.py:154-177",
        "sglang 0.5.12: python/sglang/srt/models/llama.py:779-787 (set_embed; skipped when target_hidden_size differs)",
        "sglang 0.5.21: python/sglang/srt/models/gemma3_causal.py:931-951; gemma3_mm.py:485-490; gemma4_causal.py:1390-1411",
        "sglang 0.5.21: python/sglang/srt/speculative/eagle_worker_v2.py:188-211, 325-349",
        "sglang 0.5.21: python/sglang/srt/distributed/parallel_state.py:3096-3146; layers/vocab_parallel_embedding.py:248-258",
        "sglang 0.5.22: python/sglang/srt/models/gemma3_causal.py:928-955; speculative/pp_draft_embedding.py:79-99",
    ),
    sglang_versions=">=0.5.12,<0.5.22",
)
