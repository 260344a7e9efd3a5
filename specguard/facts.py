"""Read a model's ``config.json`` (local directory or Hugging Face repo) into ``ModelFacts``.

The file is read as JSON and nothing else: no code from the model repository ever runs
(``trust_remote_code`` is never involved). A fact the file does not state stays ``None``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from specguard.config_values import CONFIG_DTYPES, check_config, parse_config_text
from specguard.errors import InputError
from specguard.models import ModelFacts, ModelOrigin
from specguard.records import field_names, replace
from specguard.refs import looks_like_repo_id

MAX_CONFIG_BYTES = 4 * 1024 * 1024


def split_revision(reference: str) -> tuple[str, str | None]:
    """``org/name@rev`` -> (``org/name``, ``rev``); local paths keep any ``@``."""
    if "@" in reference and not Path(reference).exists():
        name, revision = reference.rsplit("@", 1)
        return name, revision or None
    return reference, None


def load_facts(
    reference: str,
    *,
    revision: str | None = None,
    offline: bool = False,
    role: str = "target",
    weights: bool = False,
    catalog: bool = True,
) -> ModelFacts:
    """Facts for a local directory, a config.json file, or a hub repo id (``org/name[@rev]``).

    Resolution order: a local directory (or file), then the Hugging Face cache, then the hub
    (unless offline), then specguard's catalog (when the hub is offline, unreachable or gated).
    ``weights`` adds the safetensors header facts where the checkpoint's headers can be read.
    """
    name, inline_revision = split_revision(reference)
    revision = revision or inline_revision
    path = Path(name).expanduser()
    if path.is_dir():
        return _directory_facts(path, revision=revision, role=role, weights=weights)
    if path.is_file():
        return facts_from_file(path, source=str(path), revision=revision, origin="local")
    if looks_like_repo_id(name):
        return _hub_facts(name, revision=revision, offline=offline, role=role, weights=weights, catalog=catalog)
    raise InputError(
        f"{role} model {reference!r} is neither a directory nor a Hugging Face repo id",
        hint="give a local model directory or org/name[@revision]",
    )


def _directory_facts(path: Path, *, revision: str | None, role: str, weights: bool) -> ModelFacts:
    config_path = path / "config.json"
    # A FIFO or device named config.json is read (and refused by the reader), not taken for absent.
    if not (config_path.exists() or config_path.is_symlink()) or config_path.is_dir():
        raise InputError(
            f"{role} model directory {path} has no config.json",
            hint="point at the directory that holds the model's config.json",
        )
    from specguard.folders import escape
    from specguard.hub import hub_cache_dir

    problem = escape(path, "config.json", also_inside=(hub_cache_dir(),))
    if problem is not None:
        raise InputError(f"{config_path} {problem}", hint="copy the model's config.json into its folder")
    # A DSpark draft shipped as the checkpoint's dspark/ subfolder, which SGLang takes as the draft from 0.5.23 (DM178):
    # known only for a local directory (a hub cache holds only the files already fetched).
    dspark_subfolder = (path / DSPARK_DRAFT_SUBFOLDER / "config.json").is_file()
    facts = replace(facts_from_file(config_path, source=str(path), revision=revision, origin="local"), folder=str(path), dspark_subfolder=dspark_subfolder)
    if weights:
        from specguard.weights import local_weights

        facts = replace(facts, weights=local_weights(path, num_hidden_layers=facts.num_hidden_layers))
    return facts


def _hub_facts(name: str, *, revision: str | None, offline: bool, role: str, weights: bool, catalog: bool) -> ModelFacts:
    """A hub repo's config (the cache, then the hub), else the catalog's copy when the hub cannot serve it."""
    from specguard.hub import (  # the hub client is only imported when needed
        HubUnavailable,
        download_config,
        offline_miss,
    )

    source = f"{name}@{revision}" if revision else name
    try:
        miss = offline_miss(name, offline=offline, role=role, revision=revision)
        if miss is not None:
            raise miss
        config_path, resolved_revision, origin = download_config(name, revision=revision, offline=offline, role=role)
    except HubUnavailable as unavailable:
        from_catalog = catalog_facts(name, source=source, revision=revision, reason=unavailable.message) if catalog else None
        if from_catalog is None:
            message = unavailable.message + (", and specguard's catalog has no copy" if catalog else "")
            raise HubUnavailable(message, hint=unavailable.hint) from None
        return from_catalog
    facts = facts_from_file(config_path, source=source, revision=resolved_revision or revision, origin=origin)
    facts = replace(facts, folder=str(Path(config_path).parent))
    if weights:
        from specguard.weights import hub_weights

        found = hub_weights(name, revision=resolved_revision or revision, offline=offline, num_hidden_layers=facts.num_hidden_layers)
        facts = replace(facts, weights=found)
    return facts


def catalog_facts(repo_id: str, *, source: str, revision: str | None, reason: str | None = None) -> ModelFacts | None:
    """The catalog's facts for ``repo_id`` (None when it holds none), marked with where they came from."""
    from specguard import catalog

    entry = catalog.lookup(repo_id)
    if entry is None:
        return None
    document = entry.document()
    copied = f"copy of {entry.source}" + (f" ({entry.date})" if entry.date else "")
    if entry.kind != "config":
        copied = f"facts from {entry.source}"
    detail = f"catalog snapshot {catalog.snapshot_date()}: {copied}"
    if reason:
        detail += f"; used because {reason}"
    if entry.kind == "config":
        return facts_from_config(document, source=source, revision=revision, origin="catalog", origin_detail=detail, where=entry.path)
    return ModelFacts(source=source, revision=revision, origin="catalog", origin_detail=detail, **_facts_kwargs(document))


def _facts_kwargs(document: dict[str, Any]) -> dict[str, Any]:
    """A facts entry's keys are ModelFacts fields; lists become the tuples the model holds."""
    fields = set(field_names(ModelFacts)) - {"source", "revision", "origin", "origin_detail", "weights"}
    return {k: tuple(v) if isinstance(v, list) else v for k, v in document.items() if k in fields}


def facts_from_file(config_path: Path, *, source: str, revision: str | None = None, origin: ModelOrigin | None = None) -> ModelFacts:
    from specguard.text_input import TooLargeError, read_bytes_bounded

    try:
        raw = read_bytes_bounded(config_path, str(config_path), limit=MAX_CONFIG_BYTES, hint="point at the model's own config.json (a readable JSON file)")
    except TooLargeError:
        raise InputError(f"{config_path} is larger than {MAX_CONFIG_BYTES // 2**20} MiB, too large for a config.json", hint="check the path") from None
    config = parse_config_text(raw, config_path)
    if not isinstance(config, dict):
        raise InputError(f"{config_path} holds a JSON {type(config).__name__}, not an object", hint="a config.json must be a JSON object")
    return facts_from_config(config, source=source, revision=revision, origin=origin, where=config_path)


# The top-level config.json keys by which SGLang knows a target checkpoint bundles its DSpark draft
# (speculative/dspark_components/dspark_config.py checkpoint_bundles_dspark_draft: 0.5.16 :143-155, 0.5.23 :162-174).
DSPARK_BUNDLE_KEYS = ("dspark_block_size", "dspark_markov_rank", "dspark_noise_token_id", "dspark_target_layer_ids")
# The subfolder of a target checkpoint SGLang takes as its DSpark draft when it holds a config.json (0.5.23
# arg_groups/speculative_hook.py:622-663 _target_checkpoint_dspark_subfolder).
DSPARK_DRAFT_SUBFOLDER = "dspark"

# The dflash_config keys parse_dflash_draft_config casts and checks from 0.5.19 (speculative/dflash_utils.py:616-650).
DFLASH_PARSED_OPTIONS = ("conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k", "output_multiplier")

# ModelFacts fields read as one value from config.json: (the type, the keys tried in order, each in
# the config and then in its ``text_config``).
_PICKED_FIELDS: dict[str, tuple[type, tuple[str, ...]]] = {
    "model_type": (str, ("model_type",)),
    "max_position_embeddings": (int, ("max_position_embeddings",)),
    "vocab_size": (int, ("vocab_size",)),
    "padded_vocab_size": (int, ("padded_vocab_size",)),
    "draft_vocab_size": (int, ("draft_vocab_size",)),
    "hidden_size": (int, ("hidden_size",)),
    "intermediate_size": (int, ("intermediate_size",)),
    "intermediate_size_mlp": (int, ("intermediate_size_mlp",)),
    "num_hidden_layers": (int, ("num_hidden_layers",)),
    "num_attention_heads": (int, ("num_attention_heads",)),
    "num_key_value_heads": (int, ("num_key_value_heads",)),
    "head_dim": (int, ("head_dim",)),
    "num_nextn_predict_layers": (int, ("num_nextn_predict_layers",)),
    "tie_word_embeddings": (bool, ("tie_word_embeddings",)),
    "num_experts": (int, ("num_experts", "n_routed_experts", "num_local_experts")),
    "num_experts_per_tok": (int, ("num_experts_per_tok",)),
    "moe_intermediate_size": (int, ("moe_intermediate_size",)),
    "first_k_dense_replace": (int, ("first_k_dense_replace",)),
    "n_shared_experts": (int, ("n_shared_experts",)),
    "kv_lora_rank": (int, ("kv_lora_rank",)),
    "index_topk": (int, ("index_topk",)),
    "index_kpool": (int, ("index_kpool",)),
    "index_share_for_mtp_iteration": (bool, ("index_share_for_mtp_iteration",)),
    "q_lora_rank": (int, ("q_lora_rank",)),
    "qk_rope_head_dim": (int, ("qk_rope_head_dim",)),
    "qk_nope_head_dim": (int, ("qk_nope_head_dim",)),
    "v_head_dim": (int, ("v_head_dim",)),
    "is_causal": (bool, ("is_causal",)),
    "use_gemma_norm": (bool, ("use_gemma_norm",)),
    "hidden_act": (str, ("hidden_act",)),
    "use_sliding_window": (bool, ("use_sliding_window",)),
    "is_hybrid_swa": (bool, ("is_hybrid_swa",)),
    "num_kv_shared_layers": (int, ("num_kv_shared_layers",)),
    "use_ngram_embedding": (bool, ("use_ngram_embedding",)),
    "ngram_vocab_size_ratio": (float, ("ngram_vocab_size_ratio",)),
}


def facts_from_config(
    config: dict[str, Any],
    *,
    source: str,
    revision: str | None = None,
    origin: ModelOrigin | None = None,
    origin_detail: str | None = None,
    where: Path | str | None = None,
) -> ModelFacts:
    """Normalise a parsed config.json, each fact type-checked first (``where``: the file to name
    for a bad one, else ``source``). Multimodal wrappers keep the text model under ``text_config``."""
    check_config(config, where or source)
    text: dict[str, Any] = config["text_config"] if isinstance(config.get("text_config"), dict) else {}

    def pick(*keys: str) -> Any:
        for key in keys:
            if key in config and config[key] is not None:
                return config[key]
            if key in text and text[key] is not None:
                return text[key]
        return None

    dtype_key: Literal["dtype", "torch_dtype"] | None = "dtype" if pick("dtype") is not None else ("torch_dtype" if pick("torch_dtype") is not None else None)
    eagle_config: dict[str, Any] = config["eagle_config"] if isinstance(config.get("eagle_config"), dict) else {}
    aux = eagle_config.get("eagle_aux_hidden_state_layer_ids")
    dflash_config: dict[str, Any] = config["dflash_config"] if isinstance(config.get("dflash_config"), dict) else {}
    quantization = config.get("quantization_config")
    rope_scaling, rope_theta = _rope(pick("rope_scaling"), pick("rope_parameters"), pick("rope_theta"))
    architectures = pick("architectures")
    return ModelFacts(
        source=source,
        origin=origin,
        origin_detail=origin_detail,
        revision=revision,
        architectures=tuple(architectures) if isinstance(architectures, list) else None,
        dtype=_normalise_dtype(pick(dtype_key)) if dtype_key else None,
        dtype_key=dtype_key,
        rope_scaling=rope_scaling if isinstance(rope_scaling, dict) else None,
        rope_theta=_as(float, rope_theta),
        quantization=_as(str, quantization.get("quant_method") if isinstance(quantization, dict) else None),
        moe_nvfp4_packed=_moe_nvfp4_packed(quantization),
        **_quantization_lists(quantization),
        encoder_configs=tuple(key for key in ("vision_config", "audio_config") if isinstance(config.get(key), dict)),
        sample_from_anchor=_as(bool, config.get("sample_from_anchor")),
        eagle_aux_hidden_state_layer_ids=tuple(aux) if isinstance(aux, list) and all(isinstance(i, int) for i in aux) else None,
        target_hidden_size=_as(int, config.get("target_hidden_size")),
        num_aux_hidden_states=_as(int, config.get("num_aux_hidden_states")),
        **_draft_head_facts(config, eagle_config, dflash_config),
        block_size=_as(int, pick("block_size") if pick("block_size") is not None else dflash_config.get("block_size")),
        dflash_target_layer_ids=_int_tuple(_dflash_key(dflash_config, config, "target_layer_ids")),
        dflash_num_target_layers=_as(int, _dflash_key(dflash_config, config, "num_target_layers")),
        layer_types=_str_tuple(pick("layer_types")),
        # Not type-checked: Qwen2-MoE only compares it with 0, a negative one meaning no shared expert (0.5.18
        # models/qwen2_moe.py:134-135,151,278,315).
        shared_expert_intermediate_size=_as(int, pick("shared_expert_intermediate_size")),
        dspark_draft_bundled=any(config.get(key) is not None for key in DSPARK_BUNDLE_KEYS),
        has_remote_code=isinstance(config.get("auto_map"), dict),
        **{field: _as(kind, pick(*keys)) for field, (kind, keys) in _PICKED_FIELDS.items()},
    )


def _draft_head_facts(config: dict[str, Any], eagle_config: dict[str, Any], dflash_config: dict[str, Any]) -> dict[str, Any]:
    """The EAGLE3 and DFLASH head switches SGLang reads from a draft's config.json (DM340-DM345)."""
    return {
        "eagle_use_aux_hidden_state": _as(bool, eagle_config.get("use_aux_hidden_state")),
        "fc_norm": _any_true(config, "fc_norm", "use_aux_norm"),
        "norm_before_fc": _as(bool, eagle_config.get("norm_before_fc", config.get("norm_before_fc"))),
        "norm_output": _as(bool, config.get("norm_output")),
        "draft_vocab_size_null": config["draft_vocab_size"] is None if "draft_vocab_size" in config else None,
        "dflash_attention_sink_bias": _as(bool, dflash_config.get("attention_sink_bias")),
        "dflash_attention_value_scale": _as(float, dflash_config.get("attention_value_scale")),
        "partial_rotary_factor": _as(float, config.get("partial_rotary_factor")),
        "nemotron_35_draft_layout": _nemotron_35_draft_layout(config, dflash_config),
        "attention_sink_bias": _as(bool, config.get("attention_sink_bias")),
        "dflash_selector_rank": _as(int, dflash_config.get("selector_rank", 0)),
        "dflash_projector_type": _as(str, _dflash_key(dflash_config, config, "projector_type")),
        "dflash_mask_token_id": _as(int, dflash_config.get("mask_token_id")),
        "mask_token_id": _as(int, config.get("mask_token_id")),
        "dflash_swa_window_size": _as(int, dflash_config.get("swa_window_size")),
        "dspark_use_dense_ffn": _dspark_use_dense_ffn(config),
        "dspark_markov_rank": _dspark_markov_rank(config, ("dflash_config", "dspark_config")),
        "dspark_markov_rank_without_dflash_config": _dspark_markov_rank(config, ("dspark_config",)),
        "dspark_mask_token_id": _dspark_mask_token_id(config, dflash_config),
        "dspark_markov_head_type": _dspark_markov_head_type(config, ("dflash_config", "dspark_config")),
        "dspark_markov_head_type_without_dflash_config": _dspark_markov_head_type(config, ("dspark_config",)),
        "lilicorr_fields": {key: value for key, value in dflash_config.items() if key.startswith("lilicorr_")} if dflash_config else None,
        "dflash_parsed_options": {key: dflash_config[key] for key in DFLASH_PARSED_OPTIONS if key in dflash_config} if dflash_config else None,
        "mtp_local_layer_ids": _mtp_local_layer_ids(config),
        "indexer_types": _indexer_types(config.get("indexer_types")),
        **_sparse_attention_facts(config),
        **_cast_attention_facts(config),
    }


def _sparse_attention_facts(config: dict[str, Any]) -> dict[str, Any]:
    """MiniMax-M3's sparse_attention_config as get_minimax_sparse_attention_config picks it: text_config's,
    else the top level's (0.5.16 configs/model_config.py:144-155; 0.5.23 the same)."""
    text = config.get("text_config")
    section = text.get("sparse_attention_config") if isinstance(text, dict) else None
    if section is None:
        section = config.get("sparse_attention_config")
    if not isinstance(section, dict):
        return {"sparse_block_size": None, "sparse_topk_blocks": None}
    return {key: _as(int, section.get(key)) for key in ("sparse_block_size", "sparse_topk_blocks")}


def _cast_attention_facts(config: dict[str, Any]) -> dict[str, Any]:
    """Keys SGLang reads through int(), truthiness or arithmetic, so config_values does not type-check them; a value
    SGLang's cast would take differently is unknown here (None).

    QSA: parse_qsa_profile reads text_config when there is one, else the config, and int()s each value (0.5.20
    layers/attention/qsa/config.py:36-47, 80-88). learnable_sink: getattr(hf_config, "learnable_sink", False), a
    truth test on the top level (0.5.20 arg_groups/overrides.py:711)."""
    text = config.get("text_config")
    qsa = text if isinstance(text, dict) else config
    sink = config.get("learnable_sink")
    return {
        "indexer_n_heads": _int_cast(qsa.get("indexer_n_heads")),
        "indexer_compress_ratio": _int_cast(qsa.get("indexer_compress_ratio")),
        "learnable_sink": None if sink is None else bool(sink),
    }


def _indexer_types(value: Any) -> tuple[str, ...] | None:
    """HYV4's indexer_types as SGLang tests it, `"shared" in` the value and `value[layer_id] == "shared"` (0.5.20
    arg_groups/model_hook.py:55-59, configs/model_config.py:315-318), so no shape is refused there and none here. A
    list of strings is kept; any other value, present, replaces HYV4Config's default list but its shared layers are
    not read here: () (none known)."""
    if value is None:
        return None
    return _str_tuple(value) or ()


def _int_cast(value: Any) -> int | None:
    """int(value) as SGLang's parsers take it; None when it is absent or int() refuses it."""
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _nemotron_35_draft_layout(config: dict[str, Any], dflash_config: dict[str, Any]) -> bool:
    """SGLang's is_nemotron_35_draft_config (0.5.19 speculative/dflash_utils.py:469-505, 0.5.23 :461-497): a
    DFlashDraftModel or Qwen3DSparkModel draft with its own embedding and no lm_head, W4A16_NVFP4, top-level aux layer
    ids one above dflash_config's (else the top-level) target layer ids, and sample_from_anchor stated false."""
    quantization = config.get("quantization_config")
    targets = _int_tuple(_dflash_key(dflash_config, config, "target_layer_ids"))
    aux = _int_tuple(config.get("eagle_aux_hidden_state_layer_ids"))
    if not targets or not aux:
        return False
    return (
        bool({"DFlashDraftModel", "Qwen3DSparkModel"} & set(config.get("architectures") or ()))
        and bool(config.get("has_embed_tokens", False))
        and not config.get("has_lm_head", False)
        and isinstance(quantization, dict)
        and quantization.get("quant_algo") == "W4A16_NVFP4"
        and len(targets) == len(aux)
        and all(target + 1 == layer for target, layer in zip(targets, aux, strict=True))
        and dflash_config.get("sample_from_anchor", config.get("sample_from_anchor", True)) is False
    )


def _mtp_local_layer_ids(config: dict[str, Any]) -> tuple[int, ...] | None:
    """Inkling's banded MTP depths as SGLang reads them: a non-empty mtp_config.local_layer_ids replaces
    text_config.mtp_local_layer_ids (0.5.16 configs/inkling.py:329-334; 0.5.23 :337-342)."""
    mtp_config = config.get("mtp_config")
    if isinstance(mtp_config, dict) and mtp_config.get("local_layer_ids"):
        return _int_tuple(mtp_config["local_layer_ids"])
    # Without a text_config SGLang builds a default InklingModelConfig (no banded depths) and reads
    # no top-level key (0.5.16 configs/inkling.py:91-92).
    text = config.get("text_config")
    return _int_tuple(text.get("mtp_local_layer_ids")) if isinstance(text, dict) else None


def _dspark_use_dense_ffn(config: dict[str, Any]) -> bool | None:
    """0.5.23 configs/minimax_vl.py:63-73: the top-level dspark_* keys are copied onto the text config (the config
    itself without one), then its dspark_config.use_dense_ffn wins over its dspark_use_dense_ffn (default False)."""
    text = config["text_config"] if isinstance(config.get("text_config"), dict) else config
    merged = {**text, **{key: value for key, value in config.items() if key.startswith("dspark_")}}
    draft = merged.get("dspark_config", {})
    if not isinstance(draft, dict):
        return None
    return _as(bool, draft.get("use_dense_ffn", merged.get("dspark_use_dense_ffn", False)))


def _dspark_markov_rank(config: dict[str, Any], nested_keys: tuple[str, ...]) -> int | None:
    """parse_dspark_draft_config's markov_rank (0.5.16 speculative/dspark_components/dspark_config.py:212-222, 0.5.23
    :239-249), its DSpark section merged from ``nested_keys`` in order (0.5.23 :206-211 puts dflash_config first)."""
    text = config["text_config"] if isinstance(config.get("text_config"), dict) else config
    section: dict[str, Any] = {}
    for key in nested_keys:
        section.update(config[key] if isinstance(config.get(key), dict) else {})
    raw = config["dspark_markov_rank"] if config.get("dspark_markov_rank") is not None else section.get("markov_rank", text.get("markov_rank", config.get("markov_rank", 0)))
    return 0 if raw is None else _as(int, raw)


def _dspark_markov_head_type(config: dict[str, Any], nested_keys: tuple[str, ...]) -> str | None:
    """parse_dspark_draft_config's markov_head_type, lower-cased as it compares it (0.5.16
    speculative/dspark_components/dspark_config.py:226-248, 0.5.23 :253-275): the prefixed dspark_markov_head_type,
    else the DSpark section's (``nested_keys`` merged in order, as for the rank), else the text config's or top-level."""
    text = config["text_config"] if isinstance(config.get("text_config"), dict) else config
    section: dict[str, Any] = {}
    for key in nested_keys:
        section.update(config[key] if isinstance(config.get(key), dict) else {})
    raw = config["dspark_markov_head_type"] if config.get("dspark_markov_head_type") is not None else section.get("markov_head_type", text.get("markov_head_type", config.get("markov_head_type")))
    return raw.lower() if isinstance(raw, str) else None


def _dspark_mask_token_id(config: dict[str, Any], dflash_config: dict[str, Any]) -> int | None:
    """parse_dspark_draft_config's mask token id (0.5.16 speculative/dspark_components/dspark_config.py:250-262, 0.5.23
    :277-289): the prefixed dspark_noise_token_id, else dspark_config's, else the text config's (or top-level) and
    dflash_config's mask_token_id, in an order the releases differ on (0.5.23 :206-211 merges dflash_config first;
    0.5.16 reads it last, through dflash_utils.parse_dflash_draft_config): None when those two disagree."""
    dspark_config = config["dspark_config"] if isinstance(config.get("dspark_config"), dict) else {}
    for value in (config.get("dspark_noise_token_id"), dspark_config.get("mask_token_id")):
        if value is not None:
            return _as(int, value)
    text = config["text_config"] if isinstance(config.get("text_config"), dict) else config
    plain = text["mask_token_id"] if text.get("mask_token_id") is not None else config.get("mask_token_id")
    stated = {value for value in (plain, dflash_config.get("mask_token_id")) if value is not None}
    return _as(int, stated.pop()) if len(stated) == 1 else None


def _dflash_key(dflash_config: dict[str, Any], config: dict[str, Any], key: str) -> Any:
    """SGLang's parse_dflash_draft_config: ``dflash_config[key]`` when present, else the top-level key."""
    return dflash_config[key] if key in dflash_config else config.get(key)


def _any_true(config: dict[str, Any], *keys: str) -> bool | None:
    """SGLang's ``getattr(config, a, None) or getattr(config, b, False)``: None when no key states a bool."""
    stated = [value for value in (_as(bool, config.get(key)) for key in keys) if value is not None]
    return any(stated) if stated else None


def _quantization_lists(quantization: Any) -> dict[str, Any]:
    """What quantization_config lists per module: Quark's exclude (quark.py reads quant_config["exclude"]; QT462) and
    a ModelOpt MIXED_PRECISION checkpoint's quantized_layers, name -> quant_algo upper-cased as SGLang compares it
    (0.5.19 configs/model_config.py:1359-1366, modelopt_quant.py:852-870; QT465)."""
    if not isinstance(quantization, dict):
        return {"quantization_exclude": None, "quantization_ignored": None, "quantization_ignore": None, "quant_algo": None, "quantized_layers": None, "quant_scale_fmt": None}
    layers = quantization.get("quantized_layers")
    # Fp8Config reads the first of the two keys present (get_from_keys_or, 0.5.12 fp8.py:210-212).
    ignored_key = next((key for key in ("ignored_layers", "modules_to_not_convert") if key in quantization), None)
    return {
        "quantization_exclude": _str_tuple(quantization.get("exclude")),
        "quantization_ignored": _str_tuple(quantization[ignored_key]) if ignored_key else None,
        # compressed-tensors reads its own key (CompressedTensorsConfig.from_config; QT647)
        "quantization_ignore": _str_tuple(quantization.get("ignore")),
        "quant_algo": _as(str, quantization.get("quant_algo")),
        "quant_scale_fmt": _as(str, quantization.get("scale_fmt")),
        "quantized_layers": {name: str(info.get("quant_algo", "")).upper() for name, info in layers.items() if isinstance(info, dict)}
        if isinstance(layers, dict)
        else None,
    }


def _moe_nvfp4_packed(quantization: Any) -> bool | None:
    """SGLang's MiniMax-M3 test for NVFP4 packed experts (0.5.23 arg_groups/model_overrides/minimax_m3.py:18-34):
    moe_quant_algo NVFP4 (any case) and moe_quant_format nvfp4-pack-quantized; None without a quantization_config."""
    if not isinstance(quantization, dict):
        return None
    return str(quantization.get("moe_quant_algo", "")).upper() == "NVFP4" and quantization.get("moe_quant_format") == "nvfp4-pack-quantized"


def _int_tuple(value: Any) -> tuple[int, ...] | None:
    return tuple(value) if isinstance(value, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in value) else None


def _str_tuple(value: Any) -> tuple[str, ...] | None:
    return tuple(value) if isinstance(value, list) and all(isinstance(i, str) for i in value) else None


def _rope(rope_scaling: Any, rope_parameters: Any, rope_theta: Any) -> tuple[Any, Any]:
    """(rope_scaling, rope_theta): transformers 5 folds both into rope_parameters."""
    if isinstance(rope_parameters, dict):
        rope_theta = rope_theta if rope_theta is not None else rope_parameters.get("rope_theta")
        if rope_scaling is None and rope_parameters.get("rope_type", "default") != "default":
            rope_scaling = {k: v for k, v in rope_parameters.items() if k != "rope_theta"}
    return rope_scaling, rope_theta


def _normalise_dtype(value: Any) -> str | None:
    """One name per dtype; ``check_config`` has refused any name outside ``CONFIG_DTYPES``."""
    return CONFIG_DTYPES.get(value) if isinstance(value, str) else None


def _as(kind: type, value: Any) -> Any:
    if value is None:
        return None
    if kind is bool:
        return value if isinstance(value, bool) else None
    if kind is int:
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if kind is float:
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    return value if isinstance(value, kind) else None
