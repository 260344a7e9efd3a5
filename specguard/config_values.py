"""Read a config.json strictly and type-check the facts specguard takes from it.

A fact of the wrong type is not quietly "unknown": a ``max_position_embeddings`` of ``"2048"``,
``2048.0``, ``[2048]``, ``true``, ``-1`` or ``0``, a zero ``hidden_size`` or head count,
``architectures`` as a string, ``torch_dtype: 16``, NaN or Infinity (which Python's json module
accepts but JSON does not), absurd nesting or a 5000-digit integer: each is one line naming the
file and the key. SGLang reads these keys through transformers' ``PretrainedConfig`` and uses them
as Python ints/strings (``sglang/srt/configs/model_config.py``), so any other type fails there,
after the weights start loading, or computes nonsense.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from specguard.errors import InputError

# Keys whose value must be a positive integer where present (None means "not set").
POSITIVE_INTEGER_KEYS = (
    "max_position_embeddings",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "vocab_size",
    "draft_vocab_size",
    "head_dim",
)
NON_NEGATIVE_INTEGER_KEYS = ("num_nextn_predict_layers",)
STRING_KEYS = ("model_type", "torch_dtype", "dtype")
BOOLEAN_KEYS = ("tie_word_embeddings",)
POSITIVE_NUMBER_KEYS = ("rope_theta",)


def parse_config_text(text: str, path: Path) -> Any:
    """``json.loads`` without Python's extensions (NaN, Infinity) and without its crashes."""

    def reject_constant(name: str) -> None:
        raise InputError(f"{path} holds {name}, which is not JSON", hint="replace it with a number, or re-download the file")

    try:
        return json.loads(text, parse_constant=reject_constant)
    except RecursionError:
        raise InputError(f"{path} is nested too deeply to be a config.json", hint="check the file") from None
    except ValueError as error:
        if isinstance(error, json.JSONDecodeError):
            raise
        # Python refuses to convert integers of more than 4300 digits (int_max_str_digits).
        raise InputError(f"{path} holds a number too long to be a config value", hint="check the file") from None


def check_config(config: dict[str, Any], path: Path) -> None:
    """Raise ``InputError`` naming ``path`` and the key on the first fact of the wrong type."""
    sections = [("", config)]
    if isinstance(config.get("text_config"), dict):
        sections.append(("text_config.", config["text_config"]))
    for prefix, section in sections:
        for key, value in section.items():
            if value is None:
                continue
            problem = _problem(key, value)
            if problem:
                raise InputError(f"{path}: {prefix}{key} is {_show(value)}, {problem}", hint="fix the config.json (or re-download it)")


def _problem(key: str, value: Any) -> str | None:
    if key in POSITIVE_INTEGER_KEYS or key in NON_NEGATIVE_INTEGER_KEYS:
        if isinstance(value, bool) or not isinstance(value, int):
            return "not an integer"
        low = 1 if key in POSITIVE_INTEGER_KEYS else 0
        return f"below {low}" if value < low else None
    if key in STRING_KEYS and not isinstance(value, str):
        return "not a string"
    if key in BOOLEAN_KEYS and not isinstance(value, bool):
        return "not true or false"
    if key in POSITIVE_NUMBER_KEYS:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "not a number"
        return None if math.isfinite(value) and value > 0 else "not a positive number"
    if key == "architectures":
        if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
            return "not a list of class names"
    return None


def _show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."
