"""CUDA graphs for the decode, draft and verify shapes, captured at a list of batch sizes the way
SGLang 0.5.23 chooses them, replayed when a batch fits and run eagerly otherwise.

What SGLang does (``model_executor/runner/base_cuda_graph_runner.py``, ``cuda_graph_hook.py``;
``shared/design/sglang-spec-checks.md`` P28-P31) and what the runtime reads from the same flags:

* ``--disable-cuda-graph``: nothing is captured.
* the largest batch size: ``--cuda-graph-max-bs-decode`` (0.5.23's spelling) or
  ``--cuda-graph-max-bs`` (the spelling of earlier releases, which 0.5.23's parser refuses as
  ambiguous), else SGLang's default by GPU memory (``specguard.resolution.cuda_graph``), lowered
  to ``--max-running-requests`` when the user gave it (P28).
* the list: speculative decoding's schedule (1-8, 10-32 step 2, 40-64 step 4, 72-256 step 8,
  then step 16, plus the max) or plain decoding's (1, 2, 4, 8, 12, 16-256 step 8, then step 16),
  every size ``1..max`` with ``--disable-cuda-graph-padding`` (P29, P30); sizes above the
  request rows are dropped and the row count captured instead (P31, ``get_batch_sizes_to_capture``).
* a batch of ``b`` requests replays the smallest captured size ``>= b`` (its extra rows padded
  into a scratch cache row), or runs eagerly when none is large enough; with
  ``--disable-cuda-graph-padding`` only an exact size replays.

Shapes: for the target, ``decode`` (one token per request) and ``verify`` (``num_draft_tokens``
per request, the trees padded to it); for the drafter, ``draft`` (one token per request per draft
step: a STANDALONE model's or an EAGLE head's). A captured forward reads every slot of its rows
(``span`` = the cache length) under an additive mask, so its shapes do not depend on how far each
request has got; the same static forward runs eagerly on CPU (the tests compare it with the
dynamic path) where capture is skipped: CUDA graphs need CUDA, and on a CPU a replay would save
nothing of a tiny model's per-op overhead that a CUDA launch costs.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from specguard.resolution.cuda_graph import (
    captured_graph_bs,
    default_graph_max_bs,
    spec_graph_schedule,
)
from specguard.runtime.model import TokensPerRow

logger = logging.getLogger("specguard.runtime")

CPU_NOTE = "CUDA graphs are skipped on CPU (capture needs CUDA); every batch runs the eager path"


def plain_graph_schedule(max_bs: int, disable_padding: bool = False) -> list[int]:
    """SGLang 0.5.23's decode capture list without speculative decoding (P29: 1, 2, 4, 8, 12,
    16-256 step 8, then step 16, plus the max)."""
    if disable_padding:
        sizes = list(range(1, max_bs + 1))
    else:
        sizes = [1, 2, 4, 8, 12, *range(16, 257, 8), *range(272, max_bs + 1, 16)]
    sizes = [s for s in sizes if s <= max_bs]
    if max_bs not in sizes:
        sizes.append(max_bs)
    return sizes


@dataclass
class GraphPlan:
    """Which batch sizes are captured, and the bookkeeping of every batch that ran."""

    enabled: bool
    batch_sizes: list[int]
    max_bs: int
    disable_padding: bool = False
    note: str = ""
    #: (shape, captured batch size) -> replays
    replays: Counter[str] = field(default_factory=Counter)
    #: shape -> batches that ran eagerly (too large, or padding off and no exact size)
    eager: Counter[str] = field(default_factory=Counter)
    capture_seconds: float = 0.0

    @classmethod
    def from_args(
        cls,
        *,
        device: str,
        speculative: bool,
        request_rows: int,
        disable_cuda_graph: bool = False,
        cuda_graph_max_bs: int | None = None,
        disable_cuda_graph_padding: bool = False,
        user_max_running_requests: int | None = None,
        gpu_mib: float | None = None,
    ) -> GraphPlan:
        """The plan SGLang's flags describe, for ``request_rows`` cache rows of requests."""
        max_bs = cuda_graph_max_bs
        if max_bs is None:
            max_bs = default_graph_max_bs(gpu_mib, 1)
            if user_max_running_requests is not None and max_bs > user_max_running_requests:
                max_bs = user_max_running_requests  # P28: only a max the user set lowers it
        schedule = spec_graph_schedule if speculative else plain_graph_schedule
        sizes = captured_graph_bs(schedule(max_bs, disable_cuda_graph_padding), request_rows)
        if disable_cuda_graph:
            return cls(False, [], max_bs, disable_cuda_graph_padding, "--disable-cuda-graph: nothing is captured")
        if device != "cuda":
            return cls(False, sizes, max_bs, disable_cuda_graph_padding, CPU_NOTE)
        return cls(True, sizes, max_bs, disable_cuda_graph_padding)

    def pick(self, batch: int) -> int | None:
        """The captured size a batch of ``batch`` requests replays (None: it runs eagerly)."""
        if not self.batch_sizes:
            return None
        if self.disable_padding:
            return batch if batch in self.batch_sizes else None
        return next((s for s in self.batch_sizes if s >= batch), None)

    def stats(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "note": self.note,
            "batch_sizes": list(self.batch_sizes),
            "max_bs": self.max_bs,
            "disable_padding": self.disable_padding,
            "replays": dict(self.replays),
            "eager_batches": dict(self.eager),
            "capture_seconds": round(self.capture_seconds, 3),
        }


#: a module's static forward: (tokens [B, T], positions [B, T], where, hidden [B, T, H] or None)
#: -> (logits [B, T, V], hidden [B, T, *] or None)
StaticFn = Callable[[torch.Tensor, torch.Tensor, TokensPerRow, torch.Tensor | None], tuple[torch.Tensor, torch.Tensor | None]]


class StaticShape:
    """One shape at one batch size: static input buffers, the forward over them (captured into a
    CUDA graph on CUDA), and its static outputs."""

    def __init__(
        self, fn: StaticFn, bs: int, t: int, max_len: int, hidden_size: int | None, dtype: torch.dtype, device: torch.device, pad_row: int
    ) -> None:
        self.fn, self.bs, self.t, self.max_len, self.pad_row = fn, bs, t, max_len, pad_row
        self.tokens = torch.zeros((bs, t), dtype=torch.long, device=device)
        self.positions = torch.zeros((bs, t), dtype=torch.long, device=device)
        self.rows = torch.full((bs,), pad_row, dtype=torch.long, device=device)
        self.slots = torch.arange(t, device=device).repeat(bs, 1)
        self.bias = torch.zeros((bs, t, max_len), dtype=dtype, device=device)
        self.hidden = None if hidden_size is None else torch.zeros((bs, t, hidden_size), dtype=dtype, device=device)
        self.graph: Any = None
        self.out: tuple[torch.Tensor, torch.Tensor | None] | None = None
        self._pad_padding()

    def _pad_padding(self, from_row: int = 0) -> None:
        """Rows past the batch: the scratch row's first slots, each token seeing slot 0 only."""
        self.tokens[from_row:] = 0
        self.positions[from_row:] = 0
        self.rows[from_row:] = self.pad_row
        self.slots[from_row:] = torch.arange(self.t, device=self.slots.device)
        self.bias[from_row:] = float("-inf")
        self.bias[from_row:, :, 0] = 0.0
        if self.hidden is not None:
            self.hidden[from_row:] = 0

    def fill(self, tokens: torch.Tensor, positions: torch.Tensor, where: TokensPerRow, hidden: torch.Tensor | None) -> None:
        b = tokens.shape[0]
        span = where.span
        self.tokens[:b].copy_(tokens)
        self.positions[:b].copy_(positions)
        self.rows[:b].copy_(where.rows)
        self.slots[:b].copy_(where.slots)
        self.bias[:b, :, :span].copy_(where.bias)
        self.bias[:b, :, span:] = float("-inf")
        if self.hidden is not None and hidden is not None:
            self.hidden[:b].copy_(hidden)
        self._pad_padding(b)

    def _forward(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        where = TokensPerRow(self.rows, self.slots, self.max_len, self.bias, None)
        return self.fn(self.tokens, self.positions, where, self.hidden)

    def run_eager(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The static forward without a graph (what capture records; CPU tests run it)."""
        self.out = self._forward()
        return self.out

    def capture(self, pool: Any, stream: Any) -> None:
        """Warm up on a side stream, then record the forward (CUDA only)."""
        with torch.cuda.stream(stream):
            for _ in range(2):
                self._forward()
        torch.cuda.synchronize()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph, pool=pool, stream=stream):
            self.out = self._forward()

    def replay(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The graph's replay; without a captured graph (a plan enabled on CPU, as the tests do)
        the same static forward, eagerly."""
        if self.graph is None:
            return self.run_eager()
        assert self.out is not None
        self.graph.replay()
        return self.out


class GraphRunner:
    """A module's captured shapes, by tokens per request (each named: decode, verify, draft) and batch size."""

    def __init__(self, plan: GraphPlan, fn: StaticFn, max_len: int, dtype: torch.dtype, device: torch.device, pad_row: int) -> None:
        self.plan, self.fn, self.max_len, self.dtype, self.device, self.pad_row = plan, fn, max_len, dtype, device, pad_row
        self.shapes: dict[int, tuple[str, dict[int, StaticShape]]] = {}

    def add_shape(self, name: str, t: int, hidden_size: int | None = None) -> None:
        """Capture ``t`` tokens per request (``name`` in the bookkeeping) at every planned batch size."""
        self.shapes[t] = (
            name,
            {
                bs: StaticShape(self.fn, bs, t, self.max_len, hidden_size, self.dtype, self.device, self.pad_row)
                for bs in self.plan.batch_sizes
            },
        )

    def capture(self) -> None:
        """Capture every shape at every batch size, largest first (SGLang's order, so the smaller
        graphs reuse the memory pool of the larger). No-op unless the plan is enabled."""
        if not self.plan.enabled:
            return
        began = time.perf_counter()
        pool = torch.cuda.graph_pool_handle()
        stream = torch.cuda.Stream()
        with torch.inference_mode():
            for _, by_bs in self.shapes.values():
                for bs in sorted(by_bs, reverse=True):
                    by_bs[bs].capture(pool, stream)
        torch.cuda.synchronize()
        self.plan.capture_seconds += time.perf_counter() - began

    def run(
        self, tokens: torch.Tensor, positions: torch.Tensor, where: TokensPerRow, hidden: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None] | None:
        """The captured forward's outputs for this batch (its first rows), or None: run it eagerly
        (no shape of ``T`` tokens per request captured, or no batch size large enough)."""
        b, t = tokens.shape
        entry = self.shapes.get(t)
        if entry is None or not self.plan.enabled:
            return None
        name, by_bs = entry
        bs = self.plan.pick(b)
        if bs is None or bs not in by_bs:
            self.plan.eager[name] += 1
            return None
        shape = by_bs[bs]
        shape.fill(tokens, positions, where, hidden)
        logits, out_hidden = shape.replay()
        self.plan.replays[f"{name}@{bs}"] += 1
        return logits[:b], (None if out_hidden is None else out_hidden[:b])


def attach_graphs(plan: GraphPlan, target: Any, draft: Any, spec: Any, pad_row: int, capture: bool = True) -> None:
    """Give the target (``decode`` for plain decoding, ``verify`` of ``num_draft_tokens`` per request
    for speculative) and the drafter (``draft``: one token per request per chain step, ``topk``
    per tree depth) their graph runners, padding into cache row ``pad_row``; capture them when
    ``capture`` and the plan is enabled (CUDA)."""
    from functools import partial

    from specguard.runtime.eagle import EagleHead

    eagle = isinstance(draft, EagleHead)
    runner = GraphRunner(plan, partial(target.static_forward, return_hidden=eagle), target.max_len, target.dtype, target.device, pad_row)
    if spec.algorithm is None:
        runner.add_shape("decode", 1)
    else:
        runner.add_shape("verify", spec.num_draft_tokens)
    target.graphs = runner
    runners = [runner]
    if draft is not None:
        fn = draft.static_forward if eagle else partial(draft.static_forward, return_hidden=False)
        hidden = draft.cfg.model.hidden_size if eagle else None
        draft_runner = GraphRunner(plan, fn, draft.max_len, draft.dtype, draft.device, pad_row)
        draft_runner.add_shape("draft", spec.topk, hidden)
        draft.graphs = draft_runner
        runners.append(draft_runner)
    if capture and plan.enabled:
        logger.info("Capture cuda graph begin. This can take up to several minutes. batch sizes: %s", plan.batch_sizes)
        for r in runners:
            r.capture()
        logger.info("Capture cuda graph end. Time elapsed: %.2f s.", plan.capture_seconds)
