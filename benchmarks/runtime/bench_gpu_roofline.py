"""Benchmark: the reference runtime's forwards on a GPU against the memory-bandwidth limit and
against ``specguard accept``'s roofline estimate of the same forwards.

A model of Llama-3.1-8B's shape (the catalog's copy of its config.json) is built on the device
with random bf16 weights (no download: the time of a forward does not depend on the values).
For batch sizes 1, 4 and 16 at a fixed context it times

- a plain decode step (one token per sequence: ``CausalLM.forward_decode``'s path);
- a verify forward (``--draft-tokens`` tokens per sequence under a causal mask: the target's
  part of a speculative round),

each through the runtime's dynamic path (``CausalLM.run_rows``) and its CUDA-graph path
(``runtime/graphs.py``: the static forward, captured at that batch size, replayed).

For each it reports the time, the bytes the forward must read (the weights once, every
sequence's KV cache) over the time as a fraction of the card's copy bandwidth measured in the
same run (a device-to-device copy, bytes read and written), and the roofline estimate that
``specguard accept --gpu`` makes for the same forward (``specguard/roofline.py``: the datasheet
bandwidth and FLOPs of ``--gpu``) with the ratio measured / estimated.

    python benchmarks/runtime/bench_gpu_roofline.py --device cuda --gpu H100 --out OUT.json
    python benchmarks/runtime/bench_gpu_roofline.py --dry-run --out OUT.json   # CPU, tiny shape

``--dry-run`` runs the same code on the CPU with a tiny shape in seconds (CI runs it so this
script cannot rot); its figures mean nothing about a GPU, and its graph path is the static
forward run eagerly ("static"). Every forward's output is checked to be finite, and the graph
path's to equal the eager forward's on the same inputs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

LLAMA_8B_CONFIG = REPO / "specguard" / "catalog" / "models" / "meta-llama" / "Llama-3.1-8B-Instruct" / "config.json"
# The tiny target's shape (specguard/runtime/tiny.py's Recipe), for the dry run.
TINY_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 512, "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 2,
    "max_position_embeddings": 2048, "rope_theta": 10000.0, "tie_word_embeddings": False,
}


def model_config(dry_run: bool) -> tuple[dict[str, Any], str]:
    if dry_run:
        return TINY_CONFIG, "the tiny target's shape (specguard/runtime/tiny.py)"
    return json.loads(LLAMA_8B_CONFIG.read_text(encoding="utf-8")), str(LLAMA_8B_CONFIG.relative_to(REPO))


def synchronize(device: Any) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize()


def copy_bandwidth(device: Any, megabytes: int) -> float:
    """Bytes/s of a device-to-device copy (read + written), best of ten after warm-up."""
    import torch

    source = torch.empty(megabytes * 2**20, dtype=torch.uint8, device=device)
    target = torch.empty_like(source)
    for _ in range(3):
        target.copy_(source)
    best = float("inf")
    for _ in range(10):
        synchronize(device)
        began = time.perf_counter()
        target.copy_(source)
        synchronize(device)
        best = min(best, time.perf_counter() - began)
    return 2 * source.numel() / best


def timed(step: Any, device: Any, repeats: int) -> float:
    """Median seconds of ``step()`` over ``repeats`` runs after three warm-ups."""
    for _ in range(3):
        step()
    times = []
    for _ in range(repeats):
        synchronize(device)
        began = time.perf_counter()
        step()
        synchronize(device)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


class Forward:
    """One forward shape with static inputs: the runtime's dynamic path (``CausalLM.run_rows``,
    eager) and its CUDA-graph path (``runtime/graphs.py``'s ``GraphRunner`` over
    ``CausalLM.static_forward``: captured on CUDA; on a CPU the same static forward, eagerly)."""

    def __init__(self, model: Any, batch: int, tokens: int, context: int, kind: str) -> None:
        from functools import partial

        import torch

        from specguard.runtime.graphs import GraphPlan, GraphRunner
        from specguard.runtime.model import ragged_placement

        device = model.device
        self.model = model
        rows = list(range(batch))
        local = torch.ones(batch, tokens, tokens, dtype=torch.bool).tril()
        self.where = ragged_placement(rows, [context] * batch, [context] * batch, local, model.dtype, device)
        self.tokens = torch.randint(0, model.config.vocab_size, (batch, tokens), device=device)
        self.positions = self.where.slots
        # Enabled on a CPU too, where nothing is captured: a replay without a graph runs the
        # static forward eagerly (StaticShape.replay). The last cache row is the runner's scratch
        # row for padding (none is needed here: the batch is a planned size).
        plan = GraphPlan(enabled=True, batch_sizes=[batch], max_bs=batch)
        self.runner = GraphRunner(plan, partial(model.static_forward, return_hidden=False), model.max_len, model.dtype, device, model.rows - 1)
        self.runner.add_shape(kind, tokens)
        if device.type == "cuda":
            self.runner.capture()

    def eager(self) -> Any:
        return self.model.run_rows(self.tokens, self.positions, self.where)[0]

    def graph(self) -> Any:
        out = self.runner.run(self.tokens, self.positions, self.where)
        assert out is not None, "the batch size was planned: it must replay"
        return out[0]


def bytes_read(cost: Any, batch: int, tokens: int, context: int, weight_bytes: int, kv_bytes: int) -> float:
    """What a forward must read at least: the weights once, every sequence's cache (roofline.py's model)."""
    return cost.weight_params * weight_bytes + batch * (context + tokens) * cost.kv_values_per_token * kv_bytes


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from specguard.environment import gpu_by_name, gpu_throughput
    from specguard.roofline import Cost, forward_seconds
    from specguard.runtime.acceptance import forward_cost
    from specguard.runtime.config import parse_config
    from specguard.runtime.model import CausalLM

    device = torch.device("cpu" if args.dry_run else args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("bench_gpu_roofline: --device cuda but torch sees no GPU (use --dry-run on a CPU)")
    dtype = torch.float32 if device.type == "cpu" else torch.bfloat16
    raw, shape_source = model_config(args.dry_run)
    cfg = parse_config(raw, shape_source)
    torch.manual_seed(0)
    with torch.device(device):
        model = CausalLM(cfg).to(dtype)
    model.eval()
    model.fuse()
    batches = [1, 4] if args.dry_run else [1, 4, 16]
    model.setup_cache(args.context + args.draft_tokens + 1, rows=max(batches) + 1)  # + the graphs' scratch row
    weight_bytes = kv_bytes = torch.finfo(dtype).bits // 8
    cost = forward_cost(model)
    bandwidth, flops, hw_source = gpu_throughput(gpu_by_name(args.gpu))
    measured_bandwidth = copy_bandwidth(device, 16 if args.dry_run else 2048)
    rows = []
    with torch.inference_mode():
        for batch in batches:
            for kind, tokens in (("decode", 1), ("verify", args.draft_tokens)):
                forward = Forward(model, batch, tokens, args.context, kind)
                eager_out = forward.eager()
                if not torch.isfinite(eager_out).all():
                    raise SystemExit(f"bench_gpu_roofline: non-finite logits at batch {batch}, {kind}")
                # The graph path (captured on CUDA, the static forward on a CPU) gives the same logits.
                if not torch.allclose(forward.graph().float(), eager_out.float(), rtol=2e-2, atol=2e-2):
                    raise SystemExit(f"bench_gpu_roofline: the graph path differs from the eager one at batch {batch}, {kind}")
                modes = {"eager": forward.eager, "cuda_graph" if device.type == "cuda" else "static": forward.graph}
                estimate = forward_seconds(Cost(**cost.as_dict()), batch, tokens, args.context, bandwidth, flops, weight_bytes, kv_bytes)
                need = bytes_read(cost, batch, tokens, args.context, weight_bytes, kv_bytes)
                for mode, step in modes.items():
                    seconds = timed(step, device, args.repeats)
                    rows.append({
                        "kind": kind, "batch": batch, "tokens_per_sequence": tokens, "mode": mode,
                        "seconds": seconds, "tokens_per_s": batch * tokens / seconds,
                        "bytes_read": need, "share_of_copy_bandwidth": need / seconds / measured_bandwidth,
                        "roofline_seconds": estimate, "measured_over_roofline": seconds / estimate,
                    })
    return {
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "dry_run": args.dry_run,
        "torch": torch.__version__,
        "shape": shape_source,
        "dtype": str(dtype).removeprefix("torch."),
        "context": args.context,
        "roofline_gpu": args.gpu,
        "roofline_source": hw_source,
        "datasheet_bandwidth_bytes_per_s": bandwidth,
        "measured_copy_bandwidth_bytes_per_s": measured_bandwidth,
        "forward_cost": cost.as_dict(),
        "rows": rows,
    }


def summary(result: dict[str, Any]) -> str:
    lines = [
        (f"{result['device']} ({'dry run: figures mean nothing' if result['dry_run'] else 'measured'}), torch {result['torch']}, "
         f"{result['shape']} in {result['dtype']}, context {result['context']}"),
        (f"copy bandwidth measured {result['measured_copy_bandwidth_bytes_per_s'] / 1e12:.2f} TB/s; "
         f"roofline of --gpu {result['roofline_gpu']}: {result['datasheet_bandwidth_bytes_per_s'] / 1e12:.2f} TB/s"),
        f"{'forward':<8} {'batch':>5} {'mode':<10} {'ms':>8} {'tok/s':>10} {'of bw':>6} {'roofline ms':>11} {'meas/roof':>9}",
    ]
    for row in result["rows"]:
        lines.append(
            f"{row['kind']:<8} {row['batch']:>5} {row['mode']:<10} {row['seconds'] * 1e3:>8.3f} {row['tokens_per_s']:>10.0f} "
            f"{row['share_of_copy_bandwidth']:>6.0%} {row['roofline_seconds'] * 1e3:>11.3f} {row['measured_over_roofline']:>9.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--dry-run", action="store_true", help="CPU, tiny shape, seconds: checks the script, measures nothing")
    parser.add_argument("--gpu", default="H100", help="the GPU whose datasheet figures the roofline uses (as accept --gpu)")
    parser.add_argument("--context", type=int, default=1024)
    parser.add_argument("--draft-tokens", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    if args.dry_run:
        args.context, args.repeats = min(args.context, 64), min(args.repeats, 3)
    result = run(args)
    text = summary(result)
    print(text)
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        args.out.with_suffix(".txt").write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
