"""Load a Hugging Face checkpoint directory (config.json + safetensors) into :class:`CausalLM`."""

from __future__ import annotations

import ctypes
import json
import pickle
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open

from specguard.runtime.config import ModelConfig, load_config
from specguard.runtime.errors import CheckpointError
from specguard.runtime.model import CausalLM

DTYPES = {
    "float32": torch.float32,
    "float": torch.float32,
    "float16": torch.float16,
    "half": torch.float16,
    "bfloat16": torch.bfloat16,
}


def resolve_dtype(requested: str | None, cfg: ModelConfig, device: str) -> torch.dtype:
    """``--dtype auto`` takes the checkpoint's dtype, except float16 on CPU (slow there) -> float32."""
    if requested and requested != "auto":
        if requested not in DTYPES:
            raise CheckpointError(f"--dtype {requested!r} is not supported; use auto, float32, float16 or bfloat16")
        return DTYPES[requested]
    dtype = DTYPES.get(str(cfg.dtype), torch.float32)
    if device == "cpu" and dtype == torch.float16:
        return torch.float32
    return dtype


def _weight_files(model_dir: Path) -> list[Path]:
    index = model_dir / "model.safetensors.index.json"
    if index.is_file():
        weight_map = json.loads(index.read_text()).get("weight_map", {})
        files = sorted({model_dir / name for name in weight_map.values()})
        missing = [f.name for f in files if not f.is_file()]
        if missing:
            raise CheckpointError(f"{model_dir}: shard(s) listed in the index are missing: {', '.join(missing)}")
        return files
    single = model_dir / "model.safetensors"
    if single.is_file():
        return [single]
    others = sorted(model_dir.glob("*.safetensors"))
    if others:
        return others
    raise CheckpointError(f"{model_dir}: no model.safetensors or model.safetensors.index.json found")


def read_safetensors(path: Path, keep: Callable[[str], bool] = lambda key: True) -> dict[str, torch.Tensor]:
    """The tensors of one safetensors file; a truncated or corrupt file is a CheckpointError naming it."""
    try:
        with safe_open(str(path), framework="pt", device="cpu") as handle:
            return {key: handle.get_tensor(key) for key in handle.keys() if keep(key)}  # noqa: SIM118 - safe_open is not iterable
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"{path}: not a readable safetensors file ({error}); it may be truncated: download it again") from None


def read_torch_bin(path: Path) -> dict[str, torch.Tensor]:
    """A ``pytorch_model*.bin`` state dict (weights only); a truncated or corrupt file names itself."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, EOFError, RuntimeError, ValueError, pickle.UnpicklingError) as error:
        raise CheckpointError(f"{path}: not a readable PyTorch checkpoint ({error}); it may be truncated: download it again") from None
    if not isinstance(state, dict):
        raise CheckpointError(f"{path}: holds a {type(state).__name__}, not a state dict of tensors")
    return state


def load_model(model_dir: Path | str, dtype: str | None = None, device: str = "cpu") -> CausalLM:
    model_dir = Path(model_dir)
    cfg = load_config(model_dir)
    torch_dtype = resolve_dtype(dtype, cfg, device)
    with torch.device("meta"):
        model = CausalLM(cfg)
    expected = set(model.state_dict().keys())
    if cfg.tie_word_embeddings:
        expected.discard("lm_head.weight")
    tensors: dict[str, torch.Tensor] = {}
    for path in _weight_files(model_dir):
        tensors.update(read_safetensors(path, keep=lambda key: key in expected or key == "lm_head.weight"))
    missing = sorted(expected - tensors.keys())
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise CheckpointError(f"{model_dir}: checkpoint is partial, tensor {missing[0]!r} is missing{more}")
    state = model.state_dict()
    for key, tensor in tensors.items():
        if key in state and tuple(state[key].shape) != tuple(tensor.shape):
            raise CheckpointError(
                f"{model_dir}: tensor {key!r} has shape {tuple(tensor.shape)}, config implies {tuple(state[key].shape)}"
            )
    model = model.to_empty(device=device)
    model.load_state_dict({k: v.to(torch_dtype) for k, v in tensors.items() if k in state}, strict=False, assign=True)
    if cfg.tie_word_embeddings:
        model.lm_head.weight = model.model.embed_tokens.weight
    elif "lm_head.weight" not in tensors:
        raise CheckpointError(f"{model_dir}: checkpoint is partial, tensor 'lm_head.weight' is missing")
    model = model.to(device=device, dtype=torch_dtype).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    model.fuse()
    release_freed_heap()
    return model


def release_freed_heap() -> None:
    """Hand the heap freed while loading (the separate q/k/v and gate/up weights, now fused) back
    to the system: glibc otherwise keeps it resident for reuse (about 0.2x the weights measured
    by benchmarks/runtime/bench_fuse_memory.py). A no-op where there is no glibc."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
