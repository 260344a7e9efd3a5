"""The frozen data that flows through specguard.

Everything here is plain data: rules and the engine read these models and never touch files,
the network, the process environment or a GPU. The edges (``facts``, ``dialects``,
``environment``, the CLI) build them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from packaging.version import Version

from specguard.records import Record

if TYPE_CHECKING:
    from datetime import date


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Category(StrEnum):
    """What a rule's finding means for the launch."""

    START = "start"  # it fails to start
    CRASH = "crash"  # it crashes or hangs while serving
    WRONG_OUTPUT = "wrong-output"  # it returns wrong output
    PERF = "perf"  # it runs slower than it should
    EXPOSED = "exposed"  # it is exposed (security)
    HYGIENE = "hygiene"  # a deprecated spelling, a redundant flag


# The categories a check reports at full severity by default: the launch fails, breaks or is
# exposed. PERF and HYGIENE speak as info unless their rules are selected explicitly.
DEFAULT_CATEGORIES = frozenset({Category.START, Category.CRASH, Category.WRONG_OUTPUT, Category.EXPOSED})


class RequestFeature(StrEnum):
    """A kind of request that only some clients send: a bug that needs one hits only those requests.

    A launch enables some of them with a flag (``severity.FEATURE_FLAGS`` says which); the rest it
    cannot show, since any client may ask for them.
    """

    STRUCTURED_OUTPUT = "structured output (json_schema, regex, ebnf)"
    LOGPROBS = "logprobs"
    CUSTOM_LOGIT_PROCESSOR = "custom logit processors"
    HIDDEN_STATES = "returned hidden states"
    LONG_PROMPTS = "long prompts over a cached prefix"


class Applicability(StrEnum):
    """How safe a fix is, ordered like ruff's: a safe fix only fills in what would run anyway."""

    SAFE = "safe"
    UNSAFE = "unsafe"


class Dialect(StrEnum):
    SGLANG = "sglang"
    SLIME = "slime"
    SGL_JAX = "sgl-jax"


# --------------------------------------------------------------------------------------------
# Model facts


ModelOrigin = Literal["local", "hf-cache", "hub", "catalog", "preset", "example"]


class WeightFacts(Record):
    """What a checkpoint's safetensors headers say (names, shapes, dtypes), normalised once.

    Read from the headers only, never the tensors: a local shard's first bytes, or the hub's
    safetensors metadata. ``None`` means the headers did not say (the tensor is absent).
    """

    source: str  # where the headers were read: a directory, repo@revision, or the catalog
    tensor_count: int
    # EAGLE heads: fc maps the target's features to the draft's hidden size (out, in).
    fc_shape: tuple[int, ...] | None = None
    # EAGLE3's vocabulary maps: d2t (draft id -> target id offset) and t2d (target -> in draft).
    d2t_shape: tuple[int, ...] | None = None
    t2d_shape: tuple[int, ...] | None = None
    embed_shape: tuple[int, ...] | None = None
    lm_head_shape: tuple[int, ...] | None = None
    # Safetensors dtype names (BF16, F16, F32, F8_E4M3, I8, ...) of the floating-point weights.
    stored_dtypes: tuple[str, ...] = ()
    # Tensors that only quantized checkpoints carry (weight_scale, qweight, ...), counted.
    quantized_tensors: int = 0
    # Tensor names of an MTP/NextN module, where the family's naming is known (see weights.py).
    mtp_tensors: int | None = None
    # The first dotted part of every tensor name, distinct and sorted ("lm_head", "model", "mtp"):
    # where a checkpoint keeps its tensors, for a draft class that refuses names outside its own.
    name_roots: tuple[str, ...] = ()


class ModelFacts(Record):
    """What one config.json says, normalised once. ``None`` means the file did not say."""

    source: str  # local path, repo@revision, or 'preset:<name>'
    origin: ModelOrigin | None = None  # where config.json was read: resolution order local, hf-cache, hub, catalog
    origin_detail: str | None = None  # for the catalog: its snapshot date and the copy's source
    revision: str | None = None
    architectures: tuple[str, ...] | None = None
    model_type: str | None = None
    dtype: str | None = None
    dtype_key: Literal["dtype", "torch_dtype"] | None = None
    max_position_embeddings: int | None = None
    rope_scaling: dict[str, Any] | None = None
    rope_theta: float | None = None
    vocab_size: int | None = None
    # The embedding rows a target declares beside its vocab (e.g. Inkling), which DSPARK bounds its draft's mask
    # token by from 0.5.18 (DM450).
    padded_vocab_size: int | None = None
    draft_vocab_size: int | None = None
    # EAGLE3 heads: the config states "draft_vocab_size": null (True) or a value (False); None when the key is absent.
    # Before 0.5.2rc0 llama_eagle3.py builds an untied head's lm_head with that None (DM421).
    draft_vocab_size_null: bool | None = None
    hidden_size: int | None = None
    intermediate_size: int | None = None
    # Llama-4 text configs: the dense MLP's width beside the experts' intermediate_size; an EAGLE3 head with
    # model_type llama4_text builds its MLP from it from 0.4.9 (DM554).
    intermediate_size_mlp: int | None = None
    num_hidden_layers: int | None = None
    num_attention_heads: int | None = None
    num_key_value_heads: int | None = None
    head_dim: int | None = None
    num_nextn_predict_layers: int | None = None
    # Inkling: the MTP depths built as banded (sliding-window) blocks, mtp_config.local_layer_ids (which wins) or
    # text_config.mtp_local_layer_ids (0.5.16 configs/inkling.py:329-334); None when the config has neither key.
    mtp_local_layer_ids: tuple[int, ...] | None = None
    tie_word_embeddings: bool | None = None
    quantization: str | None = None
    # quantization_config names packed NVFP4 experts (moe_quant_algo NVFP4, moe_quant_format nvfp4-pack-quantized):
    # a MiniMax-M3.1 checkpoint that declares mxfp8 and SGLang serves as minimax_m3_nvfp4 (0.5.23; QT305).
    moe_nvfp4_packed: bool | None = None
    # quantization_config.exclude: the modules a Quark checkpoint keeps unquantized (QT462 reads its mtp.* entries,
    # which SGLang 0.5.12+ takes to mean a BF16 MTP module).
    quantization_exclude: tuple[str, ...] | None = None
    # quantization_config.ignored_layers (else modules_to_not_convert): the modules an fp8 checkpoint keeps unquantized
    # (Fp8Config.from_config, 0.5.12 layers/quantization/fp8.py:210-220; DM620 reads kv_b_proj entries).
    quantization_ignored: tuple[str, ...] | None = None
    # quantization_config.ignore: the modules a compressed-tensors checkpoint keeps unquantized, matched by SGLang
    # equal, as a dotted suffix, or as a 're:' regex (0.5.20 compressed_tensors/utils.py:24-98; QT647 reads the MTP
    # layer's entries).
    quantization_ignore: tuple[str, ...] | None = None
    # quantization_config.quant_algo (ModelOpt: FP8, NVFP4, MIXED_PRECISION, ...) and, for MIXED_PRECISION, its
    # quantized_layers as module name -> quant_algo (upper case); QT465 reads the mtp.* entries.
    quant_algo: str | None = None
    quantized_layers: dict[str, str] | None = None
    # quantization_config.scale_fmt (DeepSeek-style FP8 block scales: "ue8m0" or absent); a LongCat-Flash FP8
    # checkpoint without ue8m0 scales gets the flashinfer_trtllm FP8 GEMM on SM100 (0.5.16 arg_groups/overrides.py:1400-1410).
    quant_scale_fmt: str | None = None
    # The encoder sections config.json holds as objects, of vision_config and audio_config (a MiMo-V2 checkpoint is
    # multimodal only with both: 0.5.11 models/mimo_v2.py:1038-1040; DM464).
    encoder_configs: tuple[str, ...] | None = None
    eagle_aux_hidden_state_layer_ids: tuple[int, ...] | None = None
    # EAGLE3 heads: SGLang sizes fc as target_hidden_size (else hidden_size) times
    # num_aux_hidden_states (else the number of aux layer ids, else 3); llama_eagle3.py:151-167.
    target_hidden_size: int | None = None
    num_aux_hidden_states: int | None = None
    # EAGLE3 heads' input and output norms, as SGLang reads them (DM340, DM341): eagle_config.use_aux_hidden_state
    # (false: the head takes the target's last hidden state, no aux layers); fc_norm (fc_norm or the legacy
    # use_aux_norm: one RMSNorm per aux chunk before fc); norm_before_fc (eagle_config, else top level: one
    # RMSNorm over the concatenation); norm_output (the draft feeds its post-norm hidden state forward).
    eagle_use_aux_hidden_state: bool | None = None
    fc_norm: bool | None = None
    norm_before_fc: bool | None = None
    norm_output: bool | None = None
    block_size: int | None = None
    # DFLASH drafts: the target layers whose hidden states feed the draft, and the target's layer
    # count the draft declares (dflash_config.X, else top-level X; speculative/dflash_utils.py).
    dflash_target_layer_ids: tuple[int, ...] | None = None
    dflash_num_target_layers: int | None = None
    # DFLASH drafts' layers as models/dflash.py builds them: full or sliding attention per layer, the
    # declared causality, and Gemma-style RMSNorm (weight + 1); releases that ignored them built another draft.
    layer_types: tuple[str, ...] | None = None
    is_causal: bool | None = None
    use_gemma_norm: bool | None = None
    hidden_act: str | None = None  # the MLP activation (DFLASH drafts: models/dflash.py DFlashMLP)
    # DFLASH drafts' attention extras (DM342): dflash_config.attention_sink_bias (a per-head sink), its
    # attention_value_scale (V scaled), and the top-level partial_rotary_factor (RoPE on part of each head).
    dflash_attention_sink_bias: bool | None = None
    dflash_attention_value_scale: float | None = None
    partial_rotary_factor: float | None = None
    # Nemotron 3.5 DFlash/DSpark drafts (AB600): the layout dflash_utils.is_nemotron_35_draft_config recognises
    # (0.5.19+), and the top-level attention_sink_bias with which DFlashAttention builds a per-head sink for it.
    nemotron_35_draft_layout: bool | None = None
    attention_sink_bias: bool | None = None
    # LiLiCorr DFLASH drafts (DM345): dflash_config's lilicorr_* keys as written ({} when it has none, None
    # without a dflash_config); read raw, since parse_lilicorr_draft_config casts and refuses them itself and
    # DM345 says what it refuses.
    lilicorr_fields: dict[str, Any] | None = None
    # DFlash selector drafts (DFlash2DraftModel; DM411): dflash_config.selector_rank as parse_dflash_draft_config
    # reads it, 0 when the config.json does not set it (no dflash_config, or no such key).
    dflash_selector_rank: int | None = None
    # DFLASH/DSPARK drafts (DM601): dflash_config's conv_kernel_size, conv_group_size, selector_rank, selector_top_k and
    # output_multiplier as written ({} when it has none, None without a dflash_config); read raw, since
    # parse_dflash_draft_config (0.5.19+) casts and refuses them itself and DM601 says what it refuses.
    dflash_parsed_options: dict[str, Any] | None = None
    # MiniMax-M3.1 DSpark drafts (DSparkMiniMaxDraftModel; DM412): dspark_config.use_dense_ffn, else dspark_use_dense_ffn,
    # read as 0.5.23's configure_minimax_m3_dspark reads them (False when neither is set).
    dspark_use_dense_ffn: bool | None = None
    # DFLASH drafts' projector (DM414): dflash_config.projector_type, else the top-level one ("domino": a Domino draft).
    dflash_projector_type: str | None = None
    # DFLASH drafts' mask token id (DM441): dflash_config.mask_token_id, which every release reads, and the top-level
    # mask_token_id, which parse_dflash_draft_config falls back to from 0.5.18.
    dflash_mask_token_id: int | None = None
    mask_token_id: int | None = None
    # DFLASH drafts' sliding window (DM440): use_sliding_window, without which transformers' Qwen3Config drops the
    # sliding_window that sliding_attention layers need, and dflash_config.swa_window_size, which 0.5.19+ takes
    # instead for Nemotron-3.5 drafts.
    use_sliding_window: bool | None = None
    # A config.json that opts into SGLang's hybrid sliding-window pools under an architecture off its list
    # (is_hybrid_swa_model reads the text config's is_hybrid_swa; MM491).
    is_hybrid_swa: bool | None = None
    # Gemma 4's last num_kv_shared_layers layers read the K/V of an earlier layer and pass none of their own
    # (models/gemma4_causal.py); aiter's legacy target verify refuses them from 0.5.20 (AB471).
    num_kv_shared_layers: int | None = None
    dflash_swa_window_size: int | None = None
    # DSpark drafts' markov_rank as parse_dspark_draft_config resolves it (0 when no key states it; DM413): the prefixed
    # dspark_markov_rank, else dspark_config's, else the text config's or top-level markov_rank. 0.5.23 also reads
    # dflash_config (under dspark_config), where published DSpark drafts keep it; 0.5.16-0.5.22 do not.
    dspark_markov_rank: int | None = None
    dspark_markov_rank_without_dflash_config: int | None = None
    # DSpark drafts' mask token id as parse_dspark_draft_config resolves it (DM450): the prefixed dspark_noise_token_id,
    # else dspark_config's, else the text config's, top-level or dflash_config's mask_token_id (None when none is
    # stated, or when the last two disagree: 0.5.23 reads dflash_config first, 0.5.16-0.5.22 last).
    dspark_mask_token_id: int | None = None
    # DSpark drafts' markov_head_type as parse_dspark_draft_config resolves it, lower-cased (DM451): read like the rank,
    # with dflash_config from 0.5.23 and without it before.
    dspark_markov_head_type: str | None = None
    dspark_markov_head_type_without_dflash_config: str | None = None
    # A target checkpoint that bundles its DSpark draft: any dspark_* key of DSPARK_BUNDLE_KEYS (facts.py).
    dspark_draft_bundled: bool | None = None
    # A target checkpoint (a local directory) with a dspark/ subfolder holding a config.json, which SGLang takes as the
    # DSpark draft from 0.5.23 (DM178); None when the checkpoint is not a local directory.
    dspark_subfolder: bool | None = None
    # DSpark drafts: the top-level sample_from_anchor (false: draft from the gamma non-anchor query rows), which
    # SGLang reads from 0.5.19 (speculative/dspark_components/dspark_config.py get_dspark_sample_from_anchor; DM306).
    sample_from_anchor: bool | None = None
    # LongCat's n-gram embedding (PL382): SGLang's ModelConfig.use_ngram_embedding is the config's
    # use_ngram_embedding, which LongcatFlashConfig (model_type longcat_flash) derives from ngram_vocab_size_ratio.
    use_ngram_embedding: bool | None = None
    ngram_vocab_size_ratio: float | None = None
    has_remote_code: bool | None = None
    # MoE and MLA shape facts, used by the memory estimate.
    num_experts: int | None = None
    num_experts_per_tok: int | None = None
    moe_intermediate_size: int | None = None
    # Qwen2/3 MoE's shared expert width; equal to moe_intermediate_size it may be fused as an extra expert (DM569).
    shared_expert_intermediate_size: int | None = None
    first_k_dense_replace: int | None = None
    n_shared_experts: int | None = None
    kv_lora_rank: int | None = None
    # DeepSeek sparse attention (NSA/DSA): SGLang's is_deepseek_nsa needs index_topk in config.json; index_kpool > 1
    # pools the indexer keys (IndexerKPool, from 0.5.20).
    index_topk: int | None = None
    index_kpool: int | None = None
    # A DSA config's learnable attention sinks, which make SGLang default both DSA backends to flashmla_sparse (AB584).
    learnable_sink: bool | None = None
    # GLM-5.2 IndexShare: the MTP draft reuses the indexer top-k the target's draft extend seeds.
    index_share_for_mtp_iteration: bool | None = None
    # HYV4's per-layer indexer kinds ("full"/"shared"); a shared layer reuses an earlier layer's top-k, which the
    # two-batch-overlap op path cannot carry (FX563).
    indexer_types: tuple[str, ...] | None = None
    # MiniMax-M3 sparse attention (sparse_attention_config, text_config's first): the block size and top-k
    # blocks that decide whether its backend runs the SM100 MSA kernel (AB581).
    sparse_block_size: int | None = None
    sparse_topk_blocks: int | None = None
    # Qwen sparse attention (QSA, Qwen4-Exp): parse_qsa_profile takes a config with indexer_n_heads as QSA, whose
    # indexer_compress_ratio bounds the verify window (AB583).
    indexer_n_heads: int | None = None
    indexer_compress_ratio: int | None = None
    q_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    weights: WeightFacts | None = None
    folder: str | None = None  # the directory config.json was read from, when it is on this machine (local or Hugging Face cache)
    # Draft only: the share of the target's token ids that name the same token in the draft's
    # tokenizer.json (read when both files are at hand and a rule needs it).
    vocab_agreement: float | None = None

    @property
    def architecture(self) -> str | None:
        return self.architectures[0] if self.architectures else None

    @property
    def has_mtp_layers(self) -> bool | None:
        if self.num_nextn_predict_layers is None:
            return None
        return self.num_nextn_predict_layers > 0


# --------------------------------------------------------------------------------------------
# Environment


class GpuSpec(Record):
    name: str
    vendor: Literal["nvidia", "amd", "google", "cpu"]
    platform: Literal["cuda", "rocm", "tpu", "cpu"]
    compute_capability: tuple[int, int] | None = None
    memory_gib: float | None = None

    @property
    def is_hopper(self) -> bool:
        return self.compute_capability == (9, 0)

    @property
    def sm(self) -> int | None:
        if self.compute_capability is None:
            return None
        major, minor = self.compute_capability
        return major * 10 + minor


class Environment(Record):
    sglang_version: str  # the SGLang version the rules speak of
    # Where the version came from: given, installed, docker image tag, requirements file,
    # inferred from flags, default (the newest known release).
    sglang_version_origin: str = "default"
    # The releases that accept every flag of the launch, when the version was inferred from them.
    sglang_version_range: tuple[str, str] | None = None
    # What the report header must add about the version (inferred, newer than known, conflict).
    sglang_version_note: str | None = None
    # The version follows the launch's flags (nothing named it): a fix that changes the flags
    # re-infers it, so the corrected launch is checked as the release it now fits.
    sglang_version_inferred: bool = False  # not in the JSON output (__dump_exclude__)
    gpu: GpuSpec | None = None
    gpu_origin: Literal["given", "detected", "unknown"] = "unknown"
    gpu_count: int | None = None
    # sgl-jax launches only: the build's commit date (ISO), and how it was named (None: unknown,
    # and the sgl-jax rules speak of the HEAD they were read at).
    sgl_jax_build: str | None = None
    sgl_jax_build_source: str | None = None
    # slime launches only: the slime release or commit named by --slime-version (None: not named,
    # and the slime rules speak of the newest slime they know). The rules' messages name it.
    slime_version: str | None = None  # not in the JSON output (__dump_exclude__)

    __dump_exclude__ = ("sglang_version_inferred", "slime_version")
    # The name the JSON output and the issue use for the origin, dumped after the fields.
    __dump_extra__ = ("sglang_version_source",)

    @property
    def sglang_version_source(self) -> str:
        return self.sglang_version_origin

    @property
    def version(self) -> Version:
        return Version(self.sglang_version)

    @property
    def platform(self) -> str | None:
        return self.gpu.platform if self.gpu else None

    @property
    def sgl_jax_built(self) -> date | None:
        from datetime import date  # sgl-jax launches only

        return date.fromisoformat(self.sgl_jax_build) if self.sgl_jax_build else None


# --------------------------------------------------------------------------------------------
# Fixes and findings


FlagValue = str | int | float | bool | tuple[str, ...] | None


class Edit(Record):
    """Set one flag or env var. ``value`` None removes it; True/False toggle a switch."""

    target: Literal["flag", "env"] = "flag"
    name: str  # canonical SGLang flag ('--dtype') or env var name
    value: FlagValue

    def key(self) -> tuple[str, str]:
        return (self.target, self.name)


class Fix(Record):
    title: str
    applicability: Applicability
    edits: tuple[Edit, ...]


class Finding(Record):
    code: str
    name: str
    severity: Severity
    message: str
    flags: tuple[str, ...] = ()
    fix: Fix | None = None
    # applied: this finding's own fix is in the corrected launch. resolved: the finding is gone
    # from the corrected launch, by its own fix or by another rule's change that removed its cause.
    applied: bool = False
    resolved: bool = False
    sources: tuple[str, ...] = ()


class Change(Record):
    """One edit that the engine applied, and the rule that asked for it."""

    target: Literal["flag", "env"]
    name: str
    old: FlagValue
    new: FlagValue
    rule: str


class Conflict(Record):
    target: Literal["flag", "env"]
    name: str
    proposals: tuple[tuple[str, FlagValue], ...]  # (rule code, value) pairs
