"""Parameter counts and per-token KV bytes from config.json facts (pure arithmetic, no torch).

Every formula here names where it comes from; ``specguard/memory/estimate.py`` turns the counts
into bytes per GPU.
"""

from __future__ import annotations

from specguard.models import ModelFacts
from specguard.records import Record, replace


class ParamCount(Record):
    """Parameters by what they are, because they are stored and sharded differently.

    ``linear``: decoder matrices (attention projections, MLP, experts) that a quantized
    checkpoint stores in its quantized type; ``replicated``: the part of ``linear`` that SGLang
    does not split under tensor parallelism (MLA's low-rank down-projections); ``embed`` and
    ``lm_head`` stay in the model dtype (vocab-parallel under tp); ``other``: norms, routers and
    biases, kept in the model dtype. ``mtp`` counts the checkpoint's MTP (next-n) layers, which
    published totals such as DeepSeek-V3's 671B leave out.
    """

    embed: int = 0
    lm_head: int = 0
    linear: int = 0
    replicated: int = 0
    other: int = 0
    mtp: int = 0

    @property
    def total(self) -> int:
        """Published-size convention: embeddings, head and decoder, without MTP layers."""
        return self.embed + self.lm_head + self.linear + self.other


def head_dim_of(facts: ModelFacts) -> int | None:
    if facts.head_dim:
        return facts.head_dim
    if facts.hidden_size and facts.num_attention_heads:
        return facts.hidden_size // facts.num_attention_heads
    return None


def is_mla(facts: ModelFacts) -> bool:
    return bool(facts.kv_lora_rank and facts.qk_rope_head_dim)


def _attention(facts: ModelFacts, input_width: int) -> tuple[int, int, int]:
    """(linear, replicated, other) for one attention block reading ``input_width`` features."""
    h = facts.hidden_size or 0
    heads = facts.num_attention_heads or 0
    if is_mla(facts):
        rope = facts.qk_rope_head_dim or 0
        nope = facts.qk_nope_head_dim or 0
        v = facts.v_head_dim or nope
        kv_rank = facts.kv_lora_rank or 0
        q_rank = facts.q_lora_rank
        linear = replicated = other = 0
        if q_rank:
            replicated += input_width * q_rank  # q_a_proj (ReplicatedLinear in SGLang)
            other += q_rank  # q_a_layernorm
            linear += q_rank * heads * (nope + rope)  # q_b_proj
        else:
            linear += input_width * heads * (nope + rope)
        replicated += input_width * (kv_rank + rope)  # kv_a_proj_with_mqa
        other += kv_rank  # kv_a_layernorm
        linear += kv_rank * heads * (nope + v)  # kv_b_proj
        linear += heads * v * h  # o_proj
        return linear + replicated, replicated, other
    hd = head_dim_of(facts) or 0
    kv = facts.num_key_value_heads or heads
    linear = input_width * heads * hd + 2 * input_width * kv * hd + heads * hd * h
    other = 0
    if facts.model_type == "qwen2":  # q/k/v biases (Qwen2 attention_bias)
        other += heads * hd + 2 * kv * hd
    if facts.model_type in ("qwen3", "qwen3_moe"):  # q_norm, k_norm
        other += 2 * hd
    return linear, 0, other


def _mlp(facts: ModelFacts, moe: bool) -> tuple[int, int]:
    """(linear, other) for one MLP: gated (gate, up, down) dense or MoE with router."""
    h = facts.hidden_size or 0
    if not moe:
        return 3 * h * (facts.intermediate_size or 0), 0
    experts = facts.num_experts or 0
    inter = facts.moe_intermediate_size or facts.intermediate_size or 0
    linear = experts * 3 * h * inter + (facts.n_shared_experts or 0) * 3 * h * inter
    other = h * experts  # router gate (kept unquantized)
    if facts.model_type in ("deepseek_v3", "deepseek_v32"):
        other += experts  # e_score_correction_bias
    return linear, other


def _decoder_layer(facts: ModelFacts, moe: bool) -> tuple[int, int, int]:
    h = facts.hidden_size or 0
    a_lin, a_rep, a_other = _attention(facts, h)
    m_lin, m_other = _mlp(facts, moe)
    return a_lin + m_lin, a_rep, a_other + m_other + 2 * h  # two RMSNorms


def count_target(facts: ModelFacts) -> ParamCount | None:
    """A decoder-only model: embeddings, L decoder layers (dense, MoE or MLA), norm, head."""
    h, layers, vocab = facts.hidden_size, facts.num_hidden_layers, facts.vocab_size
    if not (h and layers and vocab and facts.num_attention_heads):
        return None
    if not is_mla(facts) and head_dim_of(facts) is None:
        return None
    has_moe = bool(facts.num_experts and facts.moe_intermediate_size)
    dense_layers = min(facts.first_k_dense_replace or 0, layers) if has_moe else layers
    linear = replicated = other = 0
    for moe, count in ((False, dense_layers), (True, layers - dense_layers)):
        if count:
            lin, rep, oth = _decoder_layer(facts, moe)
            linear, replicated, other = linear + lin * count, replicated + rep * count, other + oth * count
    other += h  # final norm
    lm_head = 0 if facts.tie_word_embeddings else vocab * h
    mtp = 0
    if facts.num_nextn_predict_layers:
        # DeepSeek-V3 MTP module: one MoE decoder layer, enorm + hnorm, eh_proj (2h -> h),
        # shared_head norm; its checkpoint also stores its own embed and head copies.
        lin, rep, oth = _decoder_layer(facts, has_moe)
        mtp = facts.num_nextn_predict_layers * (lin + oth + 3 * h + 2 * h * h + 2 * vocab * h)
    return ParamCount(embed=vocab * h, lm_head=lm_head, linear=linear, replicated=replicated, other=other, mtp=mtp)


def draft_kind(algorithm: str | None, draft: ModelFacts | None, target: ModelFacts | None) -> str | None:
    """How SGLang builds the draft: 'eagle3', 'eagle' (EAGLE-1/2 head), 'mtp', 'standalone', 'dflash'."""
    if algorithm is None or algorithm == "NGRAM":
        return None
    if algorithm == "DFLASH":
        return "dflash"
    if algorithm == "STANDALONE":
        return "standalone"
    arch = (draft.architecture or "") if draft else ""
    if "Eagle3" in arch or algorithm == "EAGLE3":
        return "eagle3"
    if draft is None or (target is not None and draft.source == target.source):
        return "mtp" if target is not None and target.num_nextn_predict_layers else None
    if draft.num_nextn_predict_layers and draft.num_hidden_layers and draft.num_hidden_layers > 4:
        return "mtp"
    return "eagle"


# The shape facts an EAGLE/EAGLE3 head's count needs, which a draft known only by its dtype or
# context (no published config.json) leaves unstated.
_HEAD_SHAPE = ("hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads", "head_dim", "vocab_size")


def draft_shaped_like_target(kind: str | None, draft: ModelFacts | None, target: ModelFacts | None) -> ModelFacts | None:
    """An EAGLE/EAGLE3 draft whose shape is not stated, sized as one decoder layer of the target's
    shape; None when the draft's own shape is known, or it is not such a head.

    An assumption, named wherever it is used: every EAGLE/EAGLE3 draft with a stated shape in
    specguard's catalog has one layer and its target's hidden size (the head reads the target's
    embeddings: ``llama_eagle3.py`` set_embed), while its MLP width and head counts vary, so the
    estimate is near, not exact. The lm_head keeps the target's vocabulary unless the draft states
    ``draft_vocab_size``, as SGLang does (``llama_eagle3.py:306-308``)."""
    if kind not in ("eagle", "eagle3") or draft is None or target is None:
        return None
    if draft.hidden_size and draft.num_hidden_layers and draft.num_attention_heads:
        return None
    stated = {name: getattr(draft, name) for name in _HEAD_SHAPE}
    update = {name: getattr(target, name) for name, value in stated.items() if value is None}
    return replace(draft, **{**update, "num_hidden_layers": draft.num_hidden_layers or 1})


def count_draft(kind: str | None, draft: ModelFacts | None, target: ModelFacts | None) -> ParamCount | None:
    """The draft's own parameters as SGLang keeps them resident.

    - eagle3 (``llama_eagle3.py``): one layer whose attention reads [embeds; hidden] (2h), an
      ``fc`` from 3 target hidden states to h, a draft-vocab lm_head; ``embed_tokens`` is
      replaced by the target's (``eagle_worker_v2.py`` ``set_embed``), so it is not counted.
    - eagle (``llama_eagle.py``): ``fc`` 2h -> h plus its layers; embed and head are the
      target's (``set_embed_and_head``).
    - mtp: the target's next-n layers (counted in ``count_target(...).mtp``) minus the embed and
      head copies, which SGLang shares with the target.
    - standalone / dflash: a full model with its own embed and head (dflash approximated so).
    """
    if kind is None:
        return None
    if kind == "mtp":
        source = target if target is not None and target.num_nextn_predict_layers else draft
        if source is None:
            return None
        full = count_target(source)
        if full is None or not full.mtp:
            return None
        hidden, vocab = source.hidden_size or 0, source.vocab_size or 0
        return ParamCount(linear=full.mtp - 2 * vocab * hidden)
    if draft is None:
        return None
    if kind in ("standalone", "dflash"):
        return count_target(draft)
    h, layers = draft.hidden_size, draft.num_hidden_layers
    if not (h and layers and draft.num_attention_heads):
        return None
    if kind == "eagle3":
        a_lin, _a_rep, a_other = _attention(draft, 2 * h)
        m_lin, _ = _mlp(draft, False)
        per_layer_linear = a_lin + m_lin
        head_vocab = draft.draft_vocab_size or draft.vocab_size or (target.vocab_size if target else 0) or 0
        return ParamCount(
            linear=layers * per_layer_linear + 3 * h * h,  # + fc
            other=layers * (a_other + 3 * h) + h,  # input, hidden and post-attention norms; final norm
            lm_head=head_vocab * h,
        )
    lin, _, oth = _decoder_layer(draft, False)
    return ParamCount(linear=layers * lin + 2 * h * h, other=layers * oth + h + h)  # fc (+ bias), norm


def kv_bytes_per_token(facts: ModelFacts, kv_bytes: float, tp: int, layers: int | None = None) -> int | None:
    """SGLang 0.5.23's KV cell size for one token (``pool_configurator.py`` ``_compute_cell_size``).

    MHA/GQA: ``max(1, kv_heads // tp) * (head_dim + v_head_dim) * layers * kv_size``;
    MLA: ``(kv_lora_rank + qk_rope_head_dim) * layers * kv_size``, the compressed latent that every
    tp rank holds whole.
    """
    layers = facts.num_hidden_layers if layers is None else layers
    if not layers:
        return None
    if is_mla(facts):
        return int((facts.kv_lora_rank + facts.qk_rope_head_dim) * layers * kv_bytes)  # type: ignore[operator]
    hd = head_dim_of(facts)
    heads = facts.num_key_value_heads or facts.num_attention_heads
    if hd is None or not heads:
        return None
    return int(max(1, heads // max(tp, 1)) * (hd + hd) * layers * kv_bytes)
