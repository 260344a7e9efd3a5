"""A roofline estimate of speculative decoding throughput on a GPU, from measured acceptance.

Pure arithmetic (no torch): each forward takes the longer of its memory time (weights read once
per forward, plus every sequence's KV cache) and its compute time (2 FLOPs per matmul parameter
per token, plus attention over the context), at the GPU's peak bandwidth and dense BF16 FLOPs.
A speculative round is one target verify over ``num_draft_tokens`` tokens per sequence, one draft
extend over the tokens committed last round, and ``num_steps - 1`` draft steps (``topk`` tokens
each for a tree): the reference runtime's procedure. NGRAM drafts on the CPU and costs nothing here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ASSUMPTIONS = (
    "peak bandwidth and dense BF16 FLOPs, no kernel launch or scheduling overhead, no CUDA-graph or overlap effects",
    "weights read once per forward and shared by the batch; every sequence reads its own KV cache",
    "acceptance measured here holds on the GPU (same models, prompts and sampling; it does not depend on the hardware)",
    "every sequence in the batch accepts the measured mean; no prefill, one GPU (no tensor parallelism)",
)


@dataclass(frozen=True)
class Cost:
    weight_params: int
    matmul_params: int
    kv_values_per_token: int
    layers: int
    attention_width: int


def forward_seconds(
    cost: Cost, batch: int, tokens: float, context: float, bandwidth: float, flops: float, weight_bytes: float, kv_bytes: float
) -> float:
    """One forward over ``tokens`` new tokens per sequence, for ``batch`` sequences of ``context`` tokens."""
    memory = cost.weight_params * weight_bytes + batch * (context + tokens) * cost.kv_values_per_token * kv_bytes
    compute = batch * tokens * (2 * cost.matmul_params + 4 * cost.layers * cost.attention_width * context)
    return max(memory / bandwidth, compute / flops)


def round_seconds(
    algorithm: str, setting: Any, accept_length: float, target: Cost, draft: Cost | None, batch: int, context: float, hw: dict
) -> float:
    args = (hw["bandwidth"], hw["flops"], hw["weight_bytes"], hw["kv_bytes"])
    total = forward_seconds(target, batch, setting.num_draft_tokens, context, *args)
    if draft is not None and algorithm != "NGRAM":
        total += forward_seconds(draft, batch, accept_length, context, *args)  # the draft extend
        total += (setting.num_steps - 1) * forward_seconds(draft, batch, setting.topk, context, *args)
    return total


def estimate(
    algorithm: str,
    measurements: list[Any],
    target: Cost,
    draft: Cost | None,
    batch_sizes: list[int],
    context: float,
    hw: dict,
) -> dict:
    """Tokens/s per setting and batch size, the best setting per batch size, and where speculation stops paying."""
    rows = []
    pays_up_to: int | None = None
    stops_at: int | None = None
    for batch in batch_sizes:
        plain = batch / forward_seconds(target, batch, 1, context, hw["bandwidth"], hw["flops"], hw["weight_bytes"], hw["kv_bytes"])
        per_setting = []
        for m in measurements:
            if not m.verify_ct:
                continue
            seconds = round_seconds(algorithm, m.setting, m.accept_length, target, draft, batch, context, hw)
            per_setting.append({"setting": m.setting.label, "tokens_per_s": batch * m.accept_length / seconds})
        best = max(per_setting, key=lambda r: r["tokens_per_s"], default=None)
        speedup = best["tokens_per_s"] / plain if best else 0.0
        if speedup > 1.0 and stops_at is None:
            pays_up_to = batch
        elif stops_at is None:
            stops_at = batch
        rows.append({"batch": batch, "plain_tokens_per_s": plain, "settings": per_setting, "best": best, "speedup": speedup})
    return {"rows": rows, "pays_up_to_batch": pays_up_to, "stops_paying_at_batch": stops_at, "assumptions": list(ASSUMPTIONS)}
