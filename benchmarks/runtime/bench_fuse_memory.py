"""Benchmark: what the reference runtime keeps resident for its weights once loaded and fused.

The runtime fuses q/k/v and gate/up into one matrix each at load (one matmul instead of two or
three per token). The fused matrices must be the only copy: before, ``fuse()`` concatenated
copies and kept the separate weights too (1.5x the weight bytes). Each model is measured in a
fresh interpreter, against a checkout's ``specguard/runtime`` (``--code``, default this one), so
the same script measures the code before and after a change:

    git archive <commit> | tar -x -C /tmp/before
    python benchmarks/runtime/bench_fuse_memory.py --code /tmp/before   # before
    python benchmarks/runtime/bench_fuse_memory.py                      # after

Figures, per model:

* ``param MiB``: the bytes of the model's parameters (each storage counted once: tied and
  view-shared weights are one copy), what a checkpoint holds;
* ``held MiB``: the bytes of every tensor the modules hold (parameters, buffers and plain tensor
  attributes such as the fused matrices), each storage once; ``held/param`` is the ratio;
* ``RSS MiB``: growth of the process's resident set from before the model was built to after it
  was loaded and fused (``/proc/self/status`` VmRSS), after a first load of the tiny target thrown
  away (so the libraries' start-up memory is not counted); ``RSS/param`` is the ratio. Only where
  the weights are real: the meta-device model has no memory to measure. On megabyte-sized models
  the allocator's granularity dominates the RSS figure; ``held/param`` is the exact one.
  ``trimmed RSS/param``: the same after ``malloc_trim(0)``, which hands glibc's free heap back
  to the system (weights freed while fusing may otherwise stay resident, reusable, in the heap).

Models: the tiny pair (loaded from its checkpoints by ``load_model``, as the server does); a
Llama-3.1-8B-shaped model (``specguard/catalog/models/meta-llama/Llama-3.1-8B-Instruct``) at full
size on the meta device (byte counts only); and the same shape at an eighth of the width and
intermediate size (hidden 512, 4 heads of 128, 1 KV head; 32 layers and the 128256-token
vocabulary kept) in bfloat16 with random weights on the CPU, built as the loader builds a model
(meta, then ``to_empty``, then filled) and fused.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LLAMA_8B_CONFIG = REPO / "specguard/catalog/models/meta-llama/Llama-3.1-8B-Instruct/config.json"
MODELS = ("tiny-target", "tiny-draft", "llama-3.1-8b-meta", "llama-3.1-8b-width/8-bf16")
MIB = 1 << 20


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def _storage_key(tensor) -> tuple[str, int]:  # type: ignore[no-untyped-def]
    storage = tensor.untyped_storage()
    # Meta tensors have no data pointer: the storage object's identity tells them apart instead.
    return (str(tensor.device), storage._cdata if tensor.is_meta else storage.data_ptr())


def _unique_bytes(tensors) -> int:  # type: ignore[no-untyped-def]
    seen: dict[tuple[str, int], int] = {}
    for tensor in tensors:
        seen[_storage_key(tensor)] = tensor.untyped_storage().nbytes()
    return sum(seen.values())


def _held_tensors(model):  # type: ignore[no-untyped-def]
    """Every tensor the modules hold, the KV cache aside (there is none here: no setup_cache)."""
    import torch

    for module in model.modules():
        yield from module.parameters(recurse=False)
        yield from module.buffers(recurse=False)
        for value in vars(module).values():
            if isinstance(value, torch.Tensor) and value.numel() > 0:
                yield value


def _llama_8b_config(divide_width: int):  # type: ignore[no-untyped-def]
    from specguard.runtime.config import parse_config

    raw = json.loads(LLAMA_8B_CONFIG.read_text())
    if divide_width > 1:
        raw = {
            **raw,
            "hidden_size": raw["hidden_size"] // divide_width,
            "intermediate_size": raw["intermediate_size"] // divide_width,
            "num_attention_heads": raw["num_attention_heads"] // divide_width,
            "num_key_value_heads": max(1, raw["num_key_value_heads"] // divide_width),
            "head_dim": raw["hidden_size"] // raw["num_attention_heads"],
        }
    return parse_config(raw, str(LLAMA_8B_CONFIG))


def _build_random(cfg, device: str, dtype):  # type: ignore[no-untyped-def]
    import torch

    from specguard.runtime.model import CausalLM

    with torch.device("meta"):
        model = CausalLM(cfg)
    if device != "meta":
        model = model.to_empty(device=device).to(dtype)
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0.0, 0.02)
    else:
        model = model.to(dtype)
    for p in model.parameters():
        p.requires_grad_(False)
    model.fuse()
    return model


def measure_one(name: str) -> dict[str, float | None]:
    """Build ``name`` in this process and measure it (call in a fresh interpreter)."""
    import gc

    import torch

    from specguard.runtime.loader import load_model
    from specguard.runtime.tiny import ensure_tiny_pair

    torch.set_num_threads(1)
    pair = ensure_tiny_pair(Path(os.environ["BENCH_TINY_ROOT"]) if os.environ.get("BENCH_TINY_ROOT") else None)
    # A first load, thrown away: the libraries' own start-up memory (imports, torch's kernels and
    # allocator) is not the model's.
    del_me = load_model(pair.target)
    del del_me
    gc.collect()
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc_trim(0)  # the warm-up's garbage handed back too, so both RSS figures start level
    rss_before = _rss_bytes()
    if name.startswith("tiny-"):
        model = load_model(pair.target if name == "tiny-target" else pair.draft)
    elif name == "llama-3.1-8b-meta":
        model = _build_random(_llama_8b_config(1), "meta", torch.bfloat16)
    else:
        model = _build_random(_llama_8b_config(8), "cpu", torch.bfloat16)
    rss = _rss_bytes() - rss_before
    # Freed weights can stay in glibc's heap, resident but reusable: trimmed, RSS is what is held.
    libc.malloc_trim(0)
    rss_trimmed = _rss_bytes() - rss_before
    param = _unique_bytes(model.parameters())
    held = _unique_bytes(_held_tensors(model))
    real = not name.endswith("-meta")
    return {
        "param_mib": param / MIB,
        "held_mib": held / MIB,
        "held_per_param": held / param,
        "rss_mib": rss / MIB if real else None,
        "rss_per_param": rss / param if real else None,
        "rss_trimmed_per_param": rss_trimmed / param if real else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, default=REPO, help="checkout whose specguard.runtime is measured")
    parser.add_argument("--tiny-root", type=Path, help="where the tiny pair is cached (default: the runtime's own)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--one", choices=MODELS, help=argparse.SUPPRESS)  # the child's entry point
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure_one(args.one)))
        return
    env = {**os.environ, "PYTHONPATH": str(args.code.resolve())}
    if args.tiny_root:
        env["BENCH_TINY_ROOT"] = str(args.tiny_root)
    results = {}
    for name in MODELS:
        out = subprocess.run(
            [sys.executable, __file__, "--one", name], env=env, cwd=args.code, capture_output=True, text=True, check=True
        )
        results[name] = json.loads(out.stdout.strip().splitlines()[-1])
    if args.json:
        print(json.dumps({"code": str(args.code), "models": results}, indent=2))
        return
    print(f"code: {args.code}")
    header = f"{'model':28} {'param MiB':>10} {'held MiB':>10} {'held/param':>11} {'RSS MiB':>9} {'RSS/param':>10}"
    print(f"{header} {'trimmed RSS/param':>18}")
    for name, r in results.items():
        rss = "-" if r["rss_mib"] is None else f"{r['rss_mib']:.1f}"
        ratio = "-" if r["rss_per_param"] is None else f"{r['rss_per_param']:.2f}"
        trimmed = "-" if r["rss_trimmed_per_param"] is None else f"{r['rss_trimmed_per_param']:.2f}"
        held = f"{r['param_mib']:10.1f} {r['held_mib']:10.1f} {r['held_per_param']:11.2f}"
        print(f"{name:28} {held} {rss:>9} {ratio:>10} {trimmed:>18}")


if __name__ == "__main__":
    main()
