"""Write safetensors checkpoints with real headers (real tensor names, shapes and dtypes).

The data section is a sparse hole of the declared size, so a 4096 x 12288 ``fc.weight`` costs no
disk: the file is a valid safetensors file (``safetensors.safe_open`` reads it), and specguard
reads only the header. Names follow what SGLang loads (``models/llama_eagle3.py:325-378``: the
``midlayer.`` prefix, ``fc``, ``d2t``, ``t2d``, ``lm_head``) and SpecForge's EAGLE3 head.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

_BYTES = {"BF16": 2, "F16": 2, "F32": 4, "I64": 8, "BOOL": 1, "F8_E4M3": 1, "I8": 1, "U8": 1, "I32": 4}

Tensors = dict[str, tuple[str, tuple[int, ...]]]


def write_safetensors(path: Path, tensors: Tensors) -> Path:
    header: dict[str, object] = {}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = _BYTES[dtype]
        for n in shape:
            size *= n
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    with path.open("wb") as handle:
        handle.write(struct.pack("<Q", len(raw)))
        handle.write(raw)
        handle.truncate(8 + len(raw) + offset)
    return path


def write_checkpoint(directory: Path, config: dict, shards: list[Tensors]) -> Path:
    """config.json plus one or more shards (with model.safetensors.index.json when sharded)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config), encoding="utf-8")
    if len(shards) == 1:
        write_safetensors(directory / "model.safetensors", shards[0])
        return directory
    weight_map = {}
    for number, tensors in enumerate(shards, start=1):
        name = f"model-{number:05d}-of-{len(shards):05d}.safetensors"
        write_safetensors(directory / name, tensors)
        weight_map.update({tensor: name for tensor in tensors})
    (directory / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}), encoding="utf-8")
    return directory


def eagle3_head(*, hidden: int, target_hidden: int, aux: int, intermediate: int, heads: int, kv_heads: int,
                vocab: int, draft_vocab: int, dtype: str = "BF16", d2t: bool = True, lm_head: bool = True) -> Tensors:
    """An EAGLE3 head's tensors as SpecForge exports them: one decoder layer under ``midlayer.``
    whose attention reads [embedding, hidden] (2 x hidden wide), ``fc`` over the aux states."""
    head_dim = hidden // heads
    tensors: Tensors = {
        "fc.weight": (dtype, (hidden, target_hidden * aux)),
        "midlayer.hidden_norm.weight": (dtype, (hidden,)),
        "midlayer.input_layernorm.weight": (dtype, (hidden,)),
        "midlayer.self_attn.q_proj.weight": (dtype, (heads * head_dim, 2 * hidden)),
        "midlayer.self_attn.k_proj.weight": (dtype, (kv_heads * head_dim, 2 * hidden)),
        "midlayer.self_attn.v_proj.weight": (dtype, (kv_heads * head_dim, 2 * hidden)),
        "midlayer.self_attn.o_proj.weight": (dtype, (hidden, heads * head_dim)),
        "midlayer.post_attention_layernorm.weight": (dtype, (hidden,)),
        "midlayer.mlp.gate_proj.weight": (dtype, (intermediate, hidden)),
        "midlayer.mlp.up_proj.weight": (dtype, (intermediate, hidden)),
        "midlayer.mlp.down_proj.weight": (dtype, (hidden, intermediate)),
        "norm.weight": (dtype, (hidden,)),
    }
    if lm_head:
        tensors["lm_head.weight"] = (dtype, (draft_vocab, hidden))
    if d2t:
        tensors["d2t"] = ("I64", (draft_vocab,))
        tensors["t2d"] = ("BOOL", (vocab,))
    return tensors


def eagle2_head(*, hidden: int, intermediate: int, heads: int, kv_heads: int, dtype: str = "F16") -> Tensors:
    """An EAGLE-1/EAGLE-2 head: ``fc`` over [embedding, hidden] and one plain decoder layer (``llama_eagle.py:91``)."""
    head_dim = hidden // heads
    return {
        "fc.weight": (dtype, (hidden, 2 * hidden)),
        "layers.0.self_attn.q_proj.weight": (dtype, (heads * head_dim, hidden)),
        "layers.0.self_attn.k_proj.weight": (dtype, (kv_heads * head_dim, hidden)),
        "layers.0.self_attn.v_proj.weight": (dtype, (kv_heads * head_dim, hidden)),
        "layers.0.self_attn.o_proj.weight": (dtype, (hidden, heads * head_dim)),
        "layers.0.post_attention_layernorm.weight": (dtype, (hidden,)),
        "layers.0.mlp.gate_proj.weight": (dtype, (intermediate, hidden)),
        "layers.0.mlp.up_proj.weight": (dtype, (intermediate, hidden)),
        "layers.0.mlp.down_proj.weight": (dtype, (hidden, intermediate)),
    }
