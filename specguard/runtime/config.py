"""Model configuration read from a Hugging Face ``config.json`` (Llama, Qwen2, Qwen3)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specguard.runtime.errors import CheckpointError

#: architecture name -> (qkv bias, q/k RMSNorm)
SUPPORTED_ARCHITECTURES: dict[str, tuple[bool, bool]] = {
    "LlamaForCausalLM": (False, False),
    "MistralForCausalLM": (False, False),
    "Qwen2ForCausalLM": (True, False),
    "Qwen3ForCausalLM": (False, True),
}


@dataclass(frozen=True)
class RopeConfig:
    theta: float
    rope_type: str
    factor: float = 1.0
    low_freq_factor: float = 1.0
    high_freq_factor: float = 4.0
    original_max_position_embeddings: int = 8192


@dataclass(frozen=True)
class ModelConfig:
    architecture: str
    model_type: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rms_norm_eps: float
    max_position_embeddings: int
    tie_word_embeddings: bool
    rope: RopeConfig
    qkv_bias: bool
    qk_norm: bool
    dtype: str | None
    bos_token_id: int | None
    eos_token_ids: tuple[int, ...]


def _rope_from_config(raw: dict[str, Any]) -> RopeConfig:
    """Both spellings: transformers 5's ``rope_parameters`` and v4's ``rope_theta``/``rope_scaling``."""
    params = raw.get("rope_parameters")
    if isinstance(params, dict):
        scaling: dict[str, Any] = dict(params)
        theta = float(params.get("rope_theta", raw.get("rope_theta", 10000.0)))
    else:
        scaling = dict(raw.get("rope_scaling") or {})
        theta = float(raw.get("rope_theta", 10000.0))
    rope_type = str(scaling.get("rope_type", scaling.get("type", "default")))
    if rope_type not in ("default", "llama3", "linear"):
        raise CheckpointError(
            f"rope type {rope_type!r} is not supported by the reference runtime "
            "(supported: default, linear, llama3); serve this model with SGLang"
        )
    return RopeConfig(
        theta=theta,
        rope_type=rope_type,
        factor=float(scaling.get("factor", 1.0)),
        low_freq_factor=float(scaling.get("low_freq_factor", 1.0)),
        high_freq_factor=float(scaling.get("high_freq_factor", 4.0)),
        original_max_position_embeddings=int(scaling.get("original_max_position_embeddings", 8192)),
    )


def parse_config(raw: dict[str, Any], source: str = "config.json") -> ModelConfig:
    architectures = raw.get("architectures") or []
    arch = next((a for a in architectures if a in SUPPORTED_ARCHITECTURES), None)
    if arch is None:
        raise CheckpointError(
            f"{source}: unsupported architecture {architectures or raw.get('model_type')!r}; "
            f"the reference runtime supports {', '.join(sorted(SUPPORTED_ARCHITECTURES))}"
        )
    try:
        hidden = int(raw["hidden_size"])
        heads = int(raw["num_attention_heads"])
        cfg_eos = raw.get("eos_token_id")
        eos = tuple(cfg_eos) if isinstance(cfg_eos, list) else (() if cfg_eos is None else (int(cfg_eos),))
        qkv_bias, qk_norm = SUPPORTED_ARCHITECTURES[arch]
        return ModelConfig(
            architecture=arch,
            model_type=str(raw.get("model_type", "llama")),
            vocab_size=int(raw["vocab_size"]),
            hidden_size=hidden,
            intermediate_size=int(raw["intermediate_size"]),
            num_hidden_layers=int(raw["num_hidden_layers"]),
            num_attention_heads=heads,
            num_key_value_heads=int(raw.get("num_key_value_heads") or heads),
            head_dim=int(raw.get("head_dim") or hidden // heads),
            rms_norm_eps=float(raw.get("rms_norm_eps", 1e-6)),
            max_position_embeddings=int(raw.get("max_position_embeddings", 2048)),
            tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)),
            rope=_rope_from_config(raw),
            qkv_bias=bool(raw.get("attention_bias", qkv_bias)),
            qk_norm=qk_norm,
            dtype=raw.get("dtype") or raw.get("torch_dtype"),
            bos_token_id=raw.get("bos_token_id"),
            eos_token_ids=eos,
        )
    except KeyError as exc:
        raise CheckpointError(f"{source}: required key {exc.args[0]!r} is missing") from None


def load_config(model_dir: Path) -> ModelConfig:
    path = Path(model_dir) / "config.json"
    if not Path(model_dir).is_dir():
        raise CheckpointError(f"model directory {model_dir} does not exist")
    if not path.is_file():
        raise CheckpointError(f"{path} is missing; expected a Hugging Face checkpoint directory")
    try:
        raw = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"{path} is not valid JSON ({exc})") from None
    return parse_config(raw, str(path))


def rope_inv_freq(cfg: ModelConfig) -> list[float]:
    """Inverse frequencies, with linear or llama3 scaling applied (as transformers computes them)."""
    dim = cfg.head_dim
    rope = cfg.rope
    inv = [1.0 / (rope.theta ** (i / dim)) for i in range(0, dim, 2)]
    if rope.rope_type == "linear":
        return [f / rope.factor for f in inv]
    if rope.rope_type == "llama3":
        old_ctx = rope.original_max_position_embeddings
        low_wavelen = old_ctx / rope.low_freq_factor
        high_wavelen = old_ctx / rope.high_freq_factor
        out = []
        for f in inv:
            wavelen = 2 * math.pi / f
            if wavelen < high_wavelen:
                out.append(f)
            elif wavelen > low_wavelen:
                out.append(f / rope.factor)
            else:
                smooth = (old_ctx / wavelen - rope.low_freq_factor) / (rope.high_freq_factor - rope.low_freq_factor)
                out.append((1 - smooth) * f / rope.factor + smooth * f)
        return out
    return inv
