"""A checkpoint's tensor names, shapes and dtypes from its safetensors headers: never the weights.

A safetensors file starts with an 8-byte little-endian header length and a JSON header that maps
each tensor name to ``{"dtype", "shape", "data_offsets"}``; that header is all this module reads.
A sharded checkpoint names its shards in ``model.safetensors.index.json`` (``weight_map``).
On the hub, ``huggingface_hub.get_safetensors_metadata`` fetches the same headers with HTTP range
requests; from the HF cache, the cached shards' headers are read like a local directory's.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specguard.errors import InputError
from specguard.folders import escape
from specguard.json_input import parse_json, shown
from specguard.models import WeightFacts
from specguard.text_input import open_regular, read_bytes_bounded

INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"
# A header holds names and shapes; even DeepSeek-V3's largest shard header is well under this.
MAX_HEADER_BYTES = 64 * 1024 * 1024
# DeepSeek-V3's index (~90k tensors) is about 9 MB.
MAX_INDEX_BYTES = 64 * 1024 * 1024
# safetensors sizes are usize (64-bit); anything larger is no tensor.
MAX_TENSOR_SIZE = 2**63 - 1

Header = Mapping[str, tuple[str, tuple[int, ...]]]  # tensor name -> (safetensors dtype, shape)

_FLOAT_DTYPES = frozenset({"BF16", "F16", "F32", "F64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4"})
# Tensors only quantized checkpoints carry: FP8 block scales (DeepSeek), compressed-tensors and
# ModelOpt scales, GPTQ/AWQ packed weights.
_QUANT_SUFFIXES = (".weight_scale", ".weight_scale_inv", ".weight_scale_2", ".input_scale", ".qweight", ".qzeros", ".scales", ".weight_packed")
_QUANT_WEIGHT_DTYPES = frozenset({"F8_E4M3", "F8_E5M2", "I8", "U8", "I32", "F4"})


def read_header(path: Path) -> Header:
    """The tensor table of one safetensors file (the ``__metadata__`` entry dropped)."""
    hint = "the file is damaged or not safetensors; re-download it"
    try:
        # A FIFO named like a shard would otherwise hang the check, and /dev/zero would pass for a
        # header of zeros.
        descriptor = open_regular(path, str(path), noun="a safetensors file", hint="point at the checkpoint's real shard files")
    except OSError as error:
        raise InputError(f"cannot read {path} ({error.strerror or error.__class__.__name__})", hint="check the file's permissions") from None
    try:
        prefix = _read_exactly(descriptor, 8)
        if len(prefix) != 8:
            raise InputError(f"{path} is not a safetensors file (shorter than 8 bytes)", hint="re-download the shard")
        (length,) = struct.unpack("<Q", prefix)
        if length > MAX_HEADER_BYTES:
            raise InputError(f"{path} declares a {length}-byte safetensors header", hint=hint)
        raw = _read_exactly(descriptor, length)
    except OSError as error:
        raise InputError(f"cannot read {path} ({error.strerror or error.__class__.__name__})", hint="check the file's permissions") from None
    finally:
        os.close(descriptor)
    if len(raw) != length:
        raise InputError(f"{path} ends inside its {length}-byte safetensors header", hint=hint)
    table = parse_json(raw, f"{path}'s safetensors header", hint=hint)
    if not isinstance(table, dict):
        raise InputError(f"{path} has no valid safetensors header (a JSON {type(table).__name__}, not an object)", hint=hint)
    return tensor_table(table, str(path))


def _read_exactly(descriptor: int, count: int) -> bytes:
    chunks: list[bytes] = []
    while count > 0:
        chunk = os.read(descriptor, min(count, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def tensor_table(table: Mapping[str, Any], where: str) -> Header:
    """Each tensor's (dtype, shape), checked: a dtype is a name, a shape a list of sizes.

    safetensors itself refuses anything else (``safetensors/src/tensor.rs``: ``shape: Vec<usize>``),
    so SGLang would fail loading the checkpoint; a float, negative, NaN or string size is not a
    size to reason about."""
    hint = "the header is damaged; re-download the checkpoint"
    header: dict[str, tuple[str, tuple[int, ...]]] = {}
    for name, info in table.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict):
            raise InputError(f"{where}: tensor {shown(name)} is {shown(info)}, not an object with dtype and shape", hint=hint)
        dtype, shape = info.get("dtype"), info.get("shape")
        if not isinstance(dtype, str):
            raise InputError(f"{where}: tensor {shown(name)} has dtype {shown(dtype)}, not a dtype name", hint=hint)
        if not isinstance(shape, list) or not all(_is_size(n) for n in shape):
            raise InputError(f"{where}: tensor {shown(name)} has shape {shown(shape)}, not a list of sizes (whole numbers 0 or more)", hint=hint)
        header[name] = (dtype, tuple(shape))
    return header


def _is_size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TENSOR_SIZE


def shard_names(directory: Path) -> list[str] | None:
    """The shard files a local checkpoint holds: those its index names, else ``*.safetensors``;
    each one inside ``directory`` (or the HF cache its symlinks lead to)."""
    index = directory / INDEX_FILE
    if index.exists() or index.is_symlink():  # a FIFO or a link out is refused, not skipped
        return sorted(set(_weight_map(index, directory).values()))
    shards = sorted(p.name for p in directory.glob("*.safetensors"))
    for shard in shards:
        problem = escape(directory, shard, also_inside=_hub_cache())
        if problem is not None:
            raise InputError(f"{directory / shard} {problem}", hint="copy the shard into the model folder, or pass the folder that holds it")
    return shards or None


def _hub_cache() -> tuple[Path, ...]:
    """Where a symlinked shard may lead: the Hugging Face cache (a snapshot's files, and folders
    written by ``hf download --local-dir`` before huggingface_hub 0.23, link into its blobs)."""
    from specguard.hub import hub_cache_dir

    return (hub_cache_dir(),)


def _weight_map(index: Path, folder: Path) -> dict[str, str]:
    """``weight_map`` of ``index``: tensor name -> shard file, every shard inside ``folder``."""
    hint = "re-download model.safetensors.index.json"
    problem = escape(folder, index.name, also_inside=_hub_cache())
    if problem is not None:
        raise InputError(f"{index} {problem}", hint="copy the file into the model folder")
    text = read_bytes_bounded(index, str(index), limit=MAX_INDEX_BYTES, hint=hint)
    document = parse_json(text, str(index), hint=hint)
    weight_map = document.get("weight_map") if isinstance(document, dict) else None
    if not isinstance(weight_map, dict):
        raise InputError(f"{index} has no weight_map", hint=hint)
    for tensor, shard in weight_map.items():
        if not isinstance(shard, str):
            raise InputError(f"{index}: weight_map entry {shown(tensor)} is {shown(shard)}, not a file name", hint=hint)
        problem = escape(folder, shard, also_inside=_hub_cache())
        if problem is not None:
            raise InputError(
                f"{index}: weight_map entry {shown(tensor)} names {shown(shard)}, which {problem}; specguard reads only the model folder's own files",
                hint="re-download model.safetensors.index.json (shard names are plain file names beside it)",
            )
    return weight_map


def local_weights(directory: Path, *, num_hidden_layers: int | None) -> WeightFacts | None:
    """Facts from a local checkpoint's shard headers; None when it holds no safetensors."""
    shards = shard_names(directory)
    if not shards:
        return None
    header: dict[str, tuple[str, tuple[int, ...]]] = {}
    for shard in shards:
        path = directory / shard
        if not path.exists():
            raise InputError(
                f"{directory / INDEX_FILE} names shard {shard}, which is missing",
                hint="finish the download (or pass the directory that holds every shard)",
            )
        header.update(read_header(path))
    return weight_facts(header, source=str(directory), num_hidden_layers=num_hidden_layers)


def hub_weights(repo_id: str, *, revision: str | None, offline: bool, num_hidden_layers: int | None) -> WeightFacts | None:
    """Facts from the HF cache's shards when all are cached; online, from the hub's headers."""
    from huggingface_hub import constants

    from specguard.hub import reach_hub

    cached = _cached_weights(repo_id, revision=revision, num_hidden_layers=num_hidden_layers)
    if cached is not None or offline or constants.HF_HUB_OFFLINE or reach_hub() is not None:
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
    label = f"{repo_id}@{revision}" if revision else repo_id
    header = tensor_table(
        {
            name: {"dtype": info.dtype, "shape": list(info.shape)}
            for file_metadata in metadata.files_metadata.values()
            for name, info in file_metadata.tensors.items()
        },
        f"hub safetensors headers of {label}",
    )
    return weight_facts(header, source=f"hub safetensors headers of {label}", num_hidden_layers=num_hidden_layers)


def _cached_weights(repo_id: str, *, revision: str | None, num_hidden_layers: int | None) -> WeightFacts | None:
    from huggingface_hub import try_to_load_from_cache

    index = try_to_load_from_cache(repo_id, INDEX_FILE, revision=revision)
    if isinstance(index, str):
        # The snapshot folder: its files are symlinks into the repo's blobs, inside the HF cache.
        shards = sorted(set(_weight_map(Path(index), Path(index).parent).values()))
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

    def shape_containing(part: str) -> tuple[int, ...] | None:
        return next((shape for name, (_, shape) in sorted(header.items()) if part in name), None)

    def shape_ending(suffix: str) -> tuple[int, ...] | None:
        return next((shape for name, (_, shape) in sorted(header.items()) if name == suffix or name.endswith("." + suffix)), None)

    stored = sorted({dtype for name, (dtype, _) in header.items() if dtype in _FLOAT_DTYPES and name.endswith(".weight") and not _is_quant_weight(name, dtype)})
    quantized = sum(1 for name, (dtype, _) in header.items() if name.endswith(_QUANT_SUFFIXES) or _is_quant_weight(name, dtype))
    prefixes = mtp_prefixes(num_hidden_layers)
    return WeightFacts(
        source=source,
        tensor_count=len(header),
        fc_shape=shape_of("fc.weight", "model.fc.weight"),
        # SGLang's EAGLE3 loader takes any tensor whose name contains "d2t" (0.5.23 llama_eagle3.py:350)
        d2t_shape=shape_containing("d2t"),
        t2d_shape=shape_of("t2d", "model.t2d"),
        embed_shape=shape_ending("embed_tokens.weight"),
        lm_head_shape=shape_of("lm_head.weight", "model.lm_head.weight"),
        stored_dtypes=tuple(stored),
        quantized_tensors=quantized,
        mtp_tensors=sum(1 for name in header if name.startswith(prefixes)),
        name_roots=tuple(sorted({name.split(".", 1)[0] for name in header})),
    )


def _is_quant_weight(name: str, dtype: str) -> bool:
    return name.endswith(".weight") and dtype in _QUANT_WEIGHT_DTYPES and "norm" not in name

