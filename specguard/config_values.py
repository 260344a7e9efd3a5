"""Read a config.json strictly and type-check every fact specguard takes from it.

A fact of the wrong type is not quietly "unknown": a ``max_position_embeddings`` of ``"2048"``,
``2048.0``, ``[2048]``, ``true``, ``-1`` or ``0``, a zero ``hidden_size`` or head count,
``architectures`` as a string, ``torch_dtype: "banana16"``, a ``rope_scaling`` that is not an
object, NaN or Infinity (which Python's json module accepts but JSON does not), absurd nesting or
a 5000-digit integer: each is one line naming the file and the key. SGLang reads these keys
through transformers' ``PretrainedConfig`` and uses them as Python ints/strings
(``sglang/srt/configs/model_config.py``), so any other type fails there, after the weights start
loading, or computes nonsense. Every key ``facts.facts_from_config`` reads is in the table below:
a key read but not checked would be a fact guessed.
"""

from __future__ import annotations

import math
from enum import Enum
from pathlib import Path
from typing import Any

from specguard.errors import InputError
from specguard.json_input import parse_json, shown

# The largest integer a tensor size or count can be (torch and safetensors sizes are 64-bit):
# a larger one is no model's, and would overflow the float arithmetic of the memory estimate.
MAX_CONFIG_INT = 2**63 - 1


class Kind(Enum):
    POSITIVE_INT = "a whole number 1 or more"
    COUNT = "a whole number 0 or more"
    POSITIVE_NUMBER = "a positive finite number"
    STRING = "a string"
    BOOLEAN = "true or false"
    DTYPE = "a floating-point torch dtype name (bfloat16, float16, float32)"
    CLASS_NAMES = "a list of class names"
    NAMES = "a list of strings"
    INT_LIST = "a list of whole numbers"
    OBJECT = "an object"


# The config dtype names transformers turns into a torch dtype (``getattr(torch, name)`` in
# ``PretrainedConfig.__post_init__``, 5.x) whose width specguard knows; SGLang serves what
# float32 checkpoints hold in 16 bits (``_get_and_verify_dtype``). ``torch.`` prefixed and short
# spellings (``bf16``) fail in transformers; other torch attributes are no model dtype.
# Each name -> the one name specguard's facts use for it.
CONFIG_DTYPES = {
    "bfloat16": "bfloat16",
    "float16": "float16",
    "half": "float16",
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
}

# Keys read at the top level and, for multimodal wrappers, under ``text_config``.
MODEL_KEYS: dict[str, Kind] = {
    "model_type": Kind.STRING,
    "architectures": Kind.CLASS_NAMES,
    "torch_dtype": Kind.DTYPE,
    "dtype": Kind.DTYPE,
    "max_position_embeddings": Kind.POSITIVE_INT,
    "vocab_size": Kind.POSITIVE_INT,
    "padded_vocab_size": Kind.POSITIVE_INT,
    "draft_vocab_size": Kind.POSITIVE_INT,
    "hidden_size": Kind.POSITIVE_INT,
    "intermediate_size": Kind.POSITIVE_INT,
    "intermediate_size_mlp": Kind.POSITIVE_INT,
    "num_hidden_layers": Kind.POSITIVE_INT,
    "num_attention_heads": Kind.POSITIVE_INT,
    "num_key_value_heads": Kind.POSITIVE_INT,
    "head_dim": Kind.POSITIVE_INT,
    "num_nextn_predict_layers": Kind.COUNT,
    # Inkling's banded MTP depths (text_config.mtp_local_layer_ids, configs/inkling.py).
    "mtp_local_layer_ids": Kind.INT_LIST,
    "tie_word_embeddings": Kind.BOOLEAN,
    # A dense model may state 0 experts; 0 dense layers and 0 shared experts are real configs.
    "num_experts": Kind.COUNT,
    "n_routed_experts": Kind.COUNT,
    "num_local_experts": Kind.COUNT,
    "num_experts_per_tok": Kind.POSITIVE_INT,
    "moe_intermediate_size": Kind.POSITIVE_INT,
    "first_k_dense_replace": Kind.COUNT,
    "n_shared_experts": Kind.COUNT,
    "kv_lora_rank": Kind.POSITIVE_INT,
    "q_lora_rank": Kind.POSITIVE_INT,
    "qk_rope_head_dim": Kind.POSITIVE_INT,
    "qk_nope_head_dim": Kind.COUNT,
    "v_head_dim": Kind.POSITIVE_INT,
    "index_topk": Kind.POSITIVE_INT,
    "index_kpool": Kind.POSITIVE_INT,
    "index_share_for_mtp_iteration": Kind.BOOLEAN,
    # Not here: the QSA indexer keys, learnable_sink and sparse_attention_config, which SGLang
    # reads through int(), a truth test or arithmetic (facts._cast_attention_facts, _sparse_attention_facts), and
    # indexer_types, which it only tests with `in` and indexing (facts._indexer_types).
    "use_ngram_embedding": Kind.BOOLEAN,
    "ngram_vocab_size_ratio": Kind.POSITIVE_NUMBER,
    "rope_theta": Kind.POSITIVE_NUMBER,
    "block_size": Kind.POSITIVE_INT,
    "rope_scaling": Kind.OBJECT,
    "rope_parameters": Kind.OBJECT,
    # A DFLASH draft's attention layout, norms and MLP (DM176, DM177, DM179).
    "layer_types": Kind.NAMES,
    "is_causal": Kind.BOOLEAN,
    "use_gemma_norm": Kind.BOOLEAN,
    "hidden_act": Kind.STRING,
    # Whether transformers' Qwen3Config keeps a DFLASH draft's sliding window (DM440).
    "use_sliding_window": Kind.BOOLEAN,
    # A config that opts into SGLang's hybrid sliding-window pools (MM491).
    "is_hybrid_swa": Kind.BOOLEAN,
    # Gemma 4 layers that reuse an earlier layer's K/V (AB471).
    "num_kv_shared_layers": Kind.COUNT,
    # A DSpark draft's mask token id, which parse_dspark_draft_config reads from the text config first (DM450).
    "mask_token_id": Kind.COUNT,
    # A DSpark draft's Markov head, which parse_dspark_draft_config compares as a string (DM451).
    "markov_head_type": Kind.STRING,
}
# Keys read at the top level only (EAGLE3 and DFLASH heads, remote code, quantization).
TOP_KEYS: dict[str, Kind] = {
    "target_hidden_size": Kind.POSITIVE_INT,
    "num_aux_hidden_states": Kind.POSITIVE_INT,
    "text_config": Kind.OBJECT,
    "eagle_config": Kind.OBJECT,
    "dflash_config": Kind.OBJECT,
    "target_layer_ids": Kind.INT_LIST,
    "num_target_layers": Kind.POSITIVE_INT,
    # EAGLE3 heads' norms (DM341) and a DFLASH draft's partial RoPE (DM342), read as SGLang's getattr does.
    "fc_norm": Kind.BOOLEAN,
    "use_aux_norm": Kind.BOOLEAN,
    "norm_before_fc": Kind.BOOLEAN,
    "norm_output": Kind.BOOLEAN,
    "partial_rotary_factor": Kind.POSITIVE_NUMBER,
    # A DSpark draft's prefixed mask token id and its dspark_config, which parse_dspark_draft_config refuses below 0 (DM450).
    "dspark_noise_token_id": Kind.COUNT,
    "dspark_markov_head_type": Kind.STRING,
    "dspark_config": Kind.OBJECT,
    "quantization_config": Kind.OBJECT,
    "auto_map": Kind.OBJECT,
    # A multimodal checkpoint's encoder sections (DM464 reads whether they are there).
    "vision_config": Kind.OBJECT,
    "audio_config": Kind.OBJECT,
    # Inkling's MTP section, whose local_layer_ids override text_config.mtp_local_layer_ids.
    "mtp_config": Kind.OBJECT,
}
# Keys read inside an object-valued key (rope scaling is read as transformers 4 and 5 spell it).
_ROPE_KEYS = {
    "factor": Kind.POSITIVE_NUMBER,
    "original_max_position_embeddings": Kind.POSITIVE_INT,
    "rope_type": Kind.STRING,
    "type": Kind.STRING,
}
NESTED_KEYS: dict[str, dict[str, Kind]] = {
    "rope_scaling": _ROPE_KEYS,
    "rope_parameters": {**_ROPE_KEYS, "rope_theta": Kind.POSITIVE_NUMBER},
    # DM013 judges each id against the target's layers, negative ones included.
    "eagle_config": {
        "eagle_aux_hidden_state_layer_ids": Kind.INT_LIST,
        "use_aux_hidden_state": Kind.BOOLEAN,
        "norm_before_fc": Kind.BOOLEAN,
    },
    "dflash_config": {
        "block_size": Kind.POSITIVE_INT,
        "target_layer_ids": Kind.INT_LIST,
        "num_target_layers": Kind.POSITIVE_INT,
        "attention_sink_bias": Kind.BOOLEAN,
        "attention_value_scale": Kind.POSITIVE_NUMBER,
        "selector_rank": Kind.COUNT,
        "projector_type": Kind.STRING,
        "mask_token_id": Kind.COUNT,
        "swa_window_size": Kind.COUNT,
        "markov_head_type": Kind.STRING,
    },
    "dspark_config": {"mask_token_id": Kind.COUNT, "markov_head_type": Kind.STRING},
    "mtp_config": {"local_layer_ids": Kind.INT_LIST},
    # Not here: scale_fmt, which SGLang only compares with "ue8m0" (0.5.16 arg_groups/overrides.py:1404,
    # configs/model_config.py:1454), so any value loads; facts reads a non-string one as not ue8m0, as that comparison does.
    "quantization_config": {"quant_method": Kind.STRING, "exclude": Kind.NAMES, "quant_algo": Kind.STRING, "quantized_layers": Kind.OBJECT},
}

_HINT = "fix the config.json (or re-download it)"


def parse_config_text(text: str | bytes, path: Path) -> Any:
    """The parsed config.json, or ``InputError`` naming ``path`` (see ``json_input.parse_json``)."""
    return parse_json(text, str(path), hint=_HINT)


def check_config(config: dict[str, Any], where: Path | str) -> None:
    """Raise ``InputError`` naming ``where`` and the key on the first fact of the wrong type."""
    sections: list[tuple[str, dict[str, Any], dict[str, Kind]]] = [("", config, {**MODEL_KEYS, **TOP_KEYS})]
    if isinstance(config.get("text_config"), dict):
        sections.append(("text_config.", config["text_config"], MODEL_KEYS))
    for prefix, section, kinds in sections:
        for key, kind in kinds.items():
            value = section.get(key)
            if value is None:
                continue
            _refuse(where, prefix + key, value, kind)
            for inner, inner_kind in NESTED_KEYS.get(key, {}).items():
                if value.get(inner) is not None:
                    _refuse(where, f"{prefix}{key}.{inner}", value[inner], inner_kind)


def _refuse(where: Path | str, key: str, value: Any, kind: Kind) -> None:
    problem = _problem(value, kind)
    if problem:
        raise InputError(f"{where}: {key} is {shown(value)}, {problem}", hint=_HINT)


def _problem(value: Any, kind: Kind) -> str | None:
    if kind in (Kind.POSITIVE_INT, Kind.COUNT):
        if not _is_int(value):
            return f"not {kind.value}"
        low = 1 if kind is Kind.POSITIVE_INT else 0
        if value < low:
            return f"below {low}"
        return "larger than a 64-bit integer" if value > MAX_CONFIG_INT else None
    if kind is Kind.POSITIVE_NUMBER:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value) or value <= 0:
            return f"not {kind.value}"
        # A rope factor multiplies max_position_embeddings into a context length, an integer.
        return "larger than a 64-bit integer" if value > MAX_CONFIG_INT else None
    if kind is Kind.STRING:
        return None if isinstance(value, str) else f"not {kind.value}"
    if kind is Kind.BOOLEAN:
        return None if isinstance(value, bool) else f"not {kind.value}"
    if kind is Kind.DTYPE:
        if not isinstance(value, str):
            return "not a string"
        return None if value in CONFIG_DTYPES else f"not {kind.value}"
    if kind in (Kind.CLASS_NAMES, Kind.NAMES):
        return None if isinstance(value, list) and all(isinstance(name, str) for name in value) else f"not {kind.value}"
    if kind is Kind.INT_LIST:
        ok = isinstance(value, list) and all(_is_int(i) and abs(i) <= MAX_CONFIG_INT for i in value)
        return None if ok else f"not {kind.value}"
    return None if isinstance(value, dict) else f"not {kind.value}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False
