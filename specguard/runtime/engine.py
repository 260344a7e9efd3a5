"""The scheduler: one worker thread serves queued requests one at a time (batch size 1).

Requests are *queued*, not batched: the worker takes them first-in first-out and runs each to
completion with the speculative decoder, pushing cumulative results to the request's asyncio
queue. An error in one request is reported to that request only; the worker keeps serving.
The engine also keeps SGLang's accounting (per-request ``spec_*`` keys, the decode-log
roll-ups behind ``avg_spec_accept_length``) and the Prometheus metrics.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import queue
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from typing import Any

import torch

from specguard.runtime.errors import RequestError
from specguard.runtime.flags import ServerArgs
from specguard.runtime.metrics import Metrics
from specguard.runtime.speculative import Decoder, SamplingParams
from specguard.runtime.tokenizer import Tokenizer

logger = logging.getLogger("specguard.runtime")


@dataclass
class GenerateInput:
    input_ids: list[int]
    sampling: SamplingParams
    stop: list[str] = field(default_factory=list)
    stop_token_ids: list[int] = field(default_factory=list)
    ignore_eos: bool = False
    min_new_tokens: int = 0
    stream: bool = False
    rid: str | None = None


PRIORITY_HEALTH, PRIORITY_REQUEST, PRIORITY_STOP = 0, 1, 2


@dataclass
class _Request:
    rid: str
    inp: GenerateInput
    loop: asyncio.AbstractEventLoop
    events: asyncio.Queue
    created: float = field(default_factory=time.perf_counter)
    cancelled: bool = False


@dataclass
class _Interval:
    rounds: int = 0
    accept_tokens: int = 0
    correct_drafts: int = 0
    tokens: int = 0
    started: float = field(default_factory=time.perf_counter)


class Engine:
    def __init__(
        self,
        args: ServerArgs,
        decoder: Decoder,
        tokenizer: Tokenizer,
        eos_token_ids: set[int],
        context_length: int,
        metrics: Metrics,
    ) -> None:
        self.args = args
        self.decoder = decoder
        self.tokenizer = tokenizer
        self.eos_token_ids = eos_token_ids
        self.context_length = context_length
        self.metrics = metrics
        # (priority, arrival, request): health checks go ahead of queued work, so a busy server
        # never looks dead to whoever supervises it; requests keep their arrival order.
        self._queue: queue.PriorityQueue[tuple[int, int, _Request | None]] = queue.PriorityQueue()
        self._running = 0
        self._arrival = itertools.count()
        self._interval = _Interval()
        self.spec_total_accept_tokens = 0
        self.spec_total_forward_ct = 0
        self.last_gen_throughput = 0.0
        self._thread = threading.Thread(target=self._worker, name="specguard-scheduler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._queue.put((PRIORITY_STOP, next(self._arrival), None))

    @property
    def alive(self) -> bool:
        """The scheduler thread is running (it only ends on stop())."""
        return self._thread.is_alive()

    @property
    def num_queued(self) -> int:
        return self._queue.qsize()

    @property
    def avg_spec_accept_length(self) -> float | None:
        if not self.decoder.speculative or self.spec_total_forward_ct == 0:
            return None
        return self.spec_total_accept_tokens / self.spec_total_forward_ct

    def validate(self, inp: GenerateInput) -> None:
        n = len(inp.input_ids)
        if n == 0:
            raise RequestError("the prompt is empty")
        if n >= self.context_length:
            raise RequestError(
                f"The input ({n} tokens) is longer than the model's context length ({self.context_length} tokens)."
            )
        vocab = self.decoder.target.config.vocab_size
        bad = next((t for t in inp.input_ids if not 0 <= t < vocab), None)
        if bad is not None:
            raise RequestError(f"input_ids contains token id {bad}, outside the vocabulary (0..{vocab - 1})")
        if inp.sampling.max_new_tokens < 0:
            raise RequestError("max_new_tokens must be non-negative")
        # The bounds SGLang's SamplingParams.verify enforces (0.5.23 sampling/sampling_params.py:255-311).
        sampling = inp.sampling
        if not math.isfinite(sampling.temperature) or sampling.temperature < 0:
            raise RequestError("temperature must be a non-negative number")
        if not (math.isfinite(sampling.top_p) and 0 < sampling.top_p <= 1):
            raise RequestError("top_p must be in (0, 1]")
        if not (math.isfinite(sampling.min_p) and 0 <= sampling.min_p <= 1):
            raise RequestError("min_p must be in [0, 1]")
        if sampling.top_k == 0 or sampling.top_k < -1:
            raise RequestError("top_k must be -1 (off) or at least 1")
        if sampling.seed is not None and not -(1 << 63) <= sampling.seed < 1 << 63:
            raise RequestError("seed must be in [-2**63, 2**63 - 1]")

    def submit(self, inp: GenerateInput, priority: int = PRIORITY_REQUEST) -> _Request:
        """Queue a request (call from the event loop); results arrive on ``request.events``."""
        self.validate(inp)
        rid = inp.rid or uuid.uuid4().hex
        req = _Request(rid=rid, inp=inp, loop=asyncio.get_running_loop(), events=asyncio.Queue())
        self._queue.put((priority, next(self._arrival), req))
        self.metrics.num_queue_reqs = self._queue.qsize()
        return req

    def _emit(self, req: _Request, kind: str, payload: Any) -> None:
        try:
            req.loop.call_soon_threadsafe(req.events.put_nowait, (kind, payload))
        except RuntimeError:  # the event loop has closed (server shutting down): nobody is waiting
            req.cancelled = True

    def _worker(self) -> None:
        torch.set_grad_enabled(False)
        while True:
            _, _, req = self._queue.get()
            if req is None:
                return
            self.metrics.num_queue_reqs = self._queue.qsize()
            if req.cancelled:
                continue
            self._running = 1
            self.metrics.num_running_reqs = 1
            try:
                self._serve(req)
            except Exception as exc:  # noqa: BLE001 - one request's failure must not stop the server
                logger.error("request %s failed: %s\n%s", req.rid, exc, traceback.format_exc())
                self._emit(req, "error", f"internal error: {exc}")
            finally:
                self._running = 0
                self.metrics.num_running_reqs = 0

    def _serve(self, req: _Request) -> None:
        inp = req.inp
        spec = self.decoder.spec
        prompt_len = len(inp.input_ids)
        max_new = min(inp.sampling.max_new_tokens, self.context_length - prompt_len)
        stop_ids = set(inp.stop_token_ids) | (set() if inp.ignore_eos else self.eos_token_ids)
        output: list[int] = []
        text = ""
        finish: dict[str, Any] | None = None
        verify_ct = correct = 0
        histogram = [0] * max(1, spec.num_draft_tokens)
        first_token_at: float | None = None
        prefill_logged = False
        if max_new == 0:
            finish = {"type": "length", "length": 0}
        rounds = self.decoder.decode(inp.input_ids, inp.sampling) if finish is None else iter(())
        for result in rounds:
            if req.cancelled:
                finish = {"type": "abort", "message": "client disconnected", "status_code": 499, "err_type": None}
                break
            if not prefill_logged:
                prefill_logged = True
                self._log_prefill(prompt_len, time.perf_counter() - req.created)
                first_token_at = time.perf_counter()
                self.metrics.observe_ttft(first_token_at - req.created)
            if result.accepted_drafts is not None:
                verify_ct += 1
                correct += result.accepted_drafts
                histogram[min(result.accepted_drafts, len(histogram) - 1)] += 1
            for token in result.tokens:
                output.append(token)
                if token in stop_ids and len(output) > inp.min_new_tokens:
                    finish = {"type": "stop", "matched": token}
                    break
                if len(output) >= max_new:
                    finish = {"type": "length", "length": len(output)}
                    break
            if not result.prefill:
                self._count_round(result.accepted_drafts, len(result.tokens))
            text = self.tokenizer.decode(output)
            if inp.stop and not (finish is not None and finish["type"] == "stop"):
                for s in inp.stop:
                    pos = text.find(s) if s else -1
                    if pos >= 0:
                        text = text[:pos]
                        finish = {"type": "stop", "matched": s}
                        break
            if finish is not None:
                break
            if inp.stream:
                self._emit(req, "chunk", self._result(req, output, text, None, verify_ct, correct, histogram))
        if finish is None:
            finish = {"type": "length", "length": len(output)}
        final = self._result(req, output, text, finish, verify_ct, correct, histogram)
        self.metrics.observe_request(prompt_len, len(output), time.perf_counter() - req.created, inp.stream)
        self._emit(req, "done", final)

    def _result(
        self,
        req: _Request,
        output: list[int],
        text: str,
        finish: dict[str, Any] | None,
        verify_ct: int,
        correct: int,
        histogram: list[int],
    ) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "id": req.rid,
            "finish_reason": finish,
            "prompt_tokens": len(req.inp.input_ids),
            "weight_version": "default",
            "num_retractions": 0,
            "completion_tokens": len(output),
            "cached_tokens": 0,
            "reasoning_tokens": 0,
            "e2e_latency": time.perf_counter() - req.created,
        }
        spec = self.decoder.spec
        if spec.algorithm is not None:
            proposed = verify_ct * (spec.num_draft_tokens - 1)
            meta.update(
                spec_verify_ct=verify_ct,
                spec_num_proposed_drafts=proposed,
                spec_num_correct_drafts=correct,
                spec_accept_rate=correct / proposed if proposed else 0.0,
                spec_accept_length=len(output) / verify_ct if verify_ct else 0.0,
                spec_correct_drafts_histogram=list(histogram),
            )
        return {"text": text, "output_ids": list(output), "meta_info": meta}

    def _log_prefill(self, new_tokens: int, elapsed: float) -> None:
        logger.info(
            "Prefill batch, #new-seq: 1, #new-token: %d, #cached-token: 0, token usage: %.2f, "
            "#running-req: %d, #queue-req: %d, #pending-token: 0, %s: False, input throughput (token/s): %.2f",
            new_tokens,
            new_tokens / self.context_length,
            self._running - 1 if self._running else 0,
            self._queue.qsize(),
            self._graph_label,
            new_tokens / max(elapsed, 1e-9),
        )

    @property
    def _graph_label(self) -> str:
        return "cuda graph" if self.args.device == "cuda" else "cpu graph"

    def _count_round(self, accepted: int | None, produced: int) -> None:
        """Roll up one decode iteration; log and publish every ``decode_log_interval`` iterations."""
        iv = self._interval
        iv.rounds += 1
        iv.tokens += produced
        if accepted is not None:
            iv.accept_tokens += accepted + 1
            iv.correct_drafts += accepted
            self.metrics.spec_verify_calls_total += 1
        if iv.rounds < max(1, self.args.decode_log_interval):
            return
        elapsed = max(time.perf_counter() - iv.started, 1e-9)
        self.last_gen_throughput = iv.tokens / elapsed
        spec_part = ""
        spec = self.decoder.spec
        if spec.algorithm is not None:
            accept_len = iv.accept_tokens / iv.rounds
            accept_rate = iv.correct_drafts / (iv.rounds * max(1, spec.num_draft_tokens - 1))
            self.spec_total_accept_tokens += iv.accept_tokens
            self.spec_total_forward_ct += iv.rounds
            self.metrics.spec_accept_length = accept_len
            self.metrics.spec_accept_rate = accept_rate
            spec_part = f"accept len: {accept_len:.2f}, accept rate: {accept_rate:.2f}, "
        self.metrics.gen_throughput = self.last_gen_throughput
        logger.info(
            "Decode batch, #running-req: %d, #token: %d, token usage: %.2f, %s%s: False, "
            "gen throughput (token/s): %.2f, #queue-req: %d",
            self._running,
            iv.tokens,
            0.0,
            spec_part,
            self._graph_label,
            self.last_gen_throughput,
            self._queue.qsize(),
        )
        self._interval = _Interval()
