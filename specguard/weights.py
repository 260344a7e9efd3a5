"""A checkpoint's tensor names, shapes and dtypes from its safetensors headers: never the weights.

A safetensors file starts with an 8-byte little-endian header length and a JSON header that maps
each tensor name to ``{"dtype", "shape", "data_offsets"}``; that header is all this module reads.
A sharded checkpoint names its shards in ``model.safetensors.index.json`` (``weight_map``).
On the hub, ``huggingface_hub.get_safetensors_metadata`` fetches the same headers with HTTP range
requests; from the HF cache, the cached shards' headers are read like a local directory's.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from pathlib import Path

from specguard.errors import InputError
from specguard.models import WeightFacts

INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"
# A header holds names and shapes; even DeepSeek-V3's largest shard header is well under this.
MAX_HEADER_BYTES = 64 * 1024 * 1024

Header = Mapping[str, tuple[str, tuple[int, ...]]]  # tensor name -> (safetensors dtype, shape)

_FLOAT_DTYPES = frozenset({"BF16", "F16", "F32", "F64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4"})
# Tensors only quantized checkpoints carry: FP8 block scales (DeepSeek), compressed-tensors and
# ModelOpt scales, GPTQ/AWQ packed weights.
_QUANT_SUFFIXES = (".weight_scale", ".weight_scale_inv", ".weight_scale_2", ".input_scale", ".qweight", ".qzeros", ".scales", ".weight_packed")
_QUANT_WEIGHT_DTYPES = frozenset({"F8_E4M3", "F8_E5M2", "I8", "U8", "I32", "F4"})


def read_header(path: Path) -> Header:
    """The tensor table of one safetensors file (the ``__metadata__`` entry dropped)."""
    try:
        with path.open("rb") as handle:
            prefix = handle.read(8)
            if len(prefix) != 8:
                raise InputError(f"{path} is not a safetensors file (shorter than 8 bytes)", hint="re-download the shard")
            (length,) = struct.unpack("<Q", prefix)
            if length > MAX_HEADER_BYTES:
                raise InputError(f"{path} declares a {length}-byte safetensors header", hint="the file is damaged or not safetensors; re-download it")
            raw = handle.read(length)
    except OSError as error:
        raise InputError(f"cannot read {path} ({error.__class__.__name__})", hint="check the file's permissions") from None
    try:
        table = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise InputError(f"{path} has no valid safetensors header", hint="the file is damaged or not safetensors; re-download it") from None
    if not isinstance(table, dict):
        raise InputError(f"{path} has no valid safetensors header", hint="the file is damaged or not safetensors; re-download it")
    return {
        name: (str(info.get("dtype")), tuple(int(n) for n in info.get("shape", ())))
        for name, info in table.items()
        if name != "__metadata__" and isinstance(info, dict)
    }


def shard_names(directory: Path) -> list[str] | None:
    """The shard files a local checkpoint holds: those its index names, else ``*.safetensors``."""
    index = directory / INDEX_FILE
    if index.is_file():
        weight_map = _weight_map(index)
        return sorted(set(weight_map.values()))
    shards = sorted(p.name for p in directory.glob("*.safetensors"))
    return shards or None


def _weight_map(index: Path) -> dict[str, str]:
    try:
        document = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise InputError(f"{index} is not valid JSON", hint="re-download model.safetensors.index.json") from None
    weight_map = document.get("weight_map") if isinstance(document, dict) else None
    if not isinstance(weight_map, dict):
        raise InputError(f"{index} has no weight_map", hint="re-download model.safetensors.index.json")
    return {str(k): str(v) for k, v in weight_map.items()}


def local_weights(directory: Path, *, num_hidden_layers: int | None) -> WeightFacts | None:
    """Facts from a local checkpoint's shard headers; None when it holds no safetensors."""
    shards = shard_names(directory)
    if not shards:
        return None
    header: dict[str, tuple[str, tuple[int, ...]]] = {}
    for shard in shards:
        path = directory / shard
        if not path.is_file():
            raise InputError(
                f"{directory / INDEX_FILE} names shard {shard}, which is missing",
                hint="finish the download (or pass the directory that holds every shard)",
            )
        header.update(read_header(path))
    return weight_facts(header, source=str(directory), num_hidden_layers=num_hidden_layers)


def hub_weights(repo_id: str, *, revision: str | None, offline: bool, num_hidden_layers: int | None) -> WeightFacts | None:
    """Facts from the HF cache's shards when all are cached; online, from the hub's headers."""
    from huggingface_hub import constants

    cached = _cached_weights(repo_id, revision=revision, num_hidden_layers=num_hidden_layers)
    if cached is not None or offline or constants.HF_HUB_OFFLINE:
        return cached
    from huggingface_hub import get_safetensors_metadata
    from huggingface_hub.errors import (
        HfHubHTTPError,
        NotASafetensorsRepoError,
        SafetensorsParsingError,
    )

    try:
        metadata = get_safetensors_metadata(repo_id, revision=revision)
    except (NotASafetensorsRepoError, SafetensorsParsingError, HfHubHTTPError, OSError, ValueError):
        return None  # no headers to read: the weight rules stay quiet, the config rules still run
    header = {
        name: (info.dtype, tuple(info.shape))
        for file_metadata in metadata.files_metadata.values()
        for name, info in file_metadata.tensors.items()
    }
    label = f"{repo_id}@{revision}" if revision else repo_id
    return weight_facts(header, source=f"hub safetensors headers of {label}", num_hidden_layers=num_hidden_layers)


def _cached_weights(repo_id: str, *, revision: str | None, num_hidden_layers: int | None) -> WeightFacts | None:
    from huggingface_hub import try_to_load_from_cache

    index = try_to_load_from_cache(repo_id, INDEX_FILE, revision=revision)
    if isinstance(index, str):
        shards = sorted(set(_weight_map(Path(index)).values()))
    else:
        shards = [SINGLE_FILE]
    paths = [try_to_load_from_cache(repo_id, shard, revision=revision) for shard in shards]
    if not all(isinstance(p, str) for p in paths):
        return None
    header: dict[str, tuple[str, tuple[int, ...]]] = {}
    for path in paths:
        header.update(read_header(Path(path)))  # type: ignore[arg-type]
    snapshot = Path(paths[0]).parent  # type: ignore[arg-type]
    return weight_facts(header, source=f"HF cache {snapshot}", num_hidden_layers=num_hidden_layers)


def mtp_prefixes(num_hidden_layers: int | None) -> tuple[str, ...]:
    """Where each family keeps its MTP/NextN weights in the target checkpoint (SGLang 0.5.23):
    DeepSeek/GLM ``model.layers.{num_hidden_layers}.`` (``deepseek_common/deepseek_weight_loader.py:570-577``),
    Qwen3.5/Qwen3-Next ``mtp.`` (``models/qwen3_5_mtp.py:362-367``), MiMo ``model.mtp_layers.``
    (``models/mimo_mtp.py:185``)."""
    prefixes = ["mtp.", "model.mtp_layers."]
    if num_hidden_layers is not None:
        prefixes.append(f"model.layers.{num_hidden_layers}.")
    return tuple(prefixes)


def weight_facts(header: Header, *, source: str, num_hidden_layers: int | None) -> WeightFacts:
    """Normalise a tensor table into the facts the DM1xx rules read."""

    def shape_of(*names: str) -> tuple[int, ...] | None:
        for name in names:
            if name in header:
                return header[name][1]
        return None

    def shape_ending(suffix: str) -> tuple[int, ...] | None:
        return next((shape for name, (_, shape) in sorted(header.items()) if name == suffix or name.endswith("." + suffix)), None)

    stored = sorted({dtype for name, (dtype, _) in header.items() if dtype in _FLOAT_DTYPES and name.endswith(".weight") and not _is_quant_weight(name, dtype)})
    quantized = sum(1 for name, (dtype, _) in header.items() if name.endswith(_QUANT_SUFFIXES) or _is_quant_weight(name, dtype))
    prefixes = mtp_prefixes(num_hidden_layers)
    return WeightFacts(
        source=source,
        tensor_count=len(header),
        fc_shape=shape_of("fc.weight", "model.fc.weight"),
        d2t_shape=shape_of("d2t", "model.d2t"),
        t2d_shape=shape_of("t2d", "model.t2d"),
        embed_shape=shape_ending("embed_tokens.weight"),
        lm_head_shape=shape_of("lm_head.weight", "model.lm_head.weight"),
        stored_dtypes=tuple(stored),
        quantized_tensors=quantized,
        mtp_tensors=sum(1 for name in header if name.startswith(prefixes)),
    )


def _is_quant_weight(name: str, dtype: str) -> bool:
    return name.endswith(".weight") and dtype in _QUANT_WEIGHT_DTYPES and "norm" not in name

