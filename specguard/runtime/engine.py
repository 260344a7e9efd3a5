"""The scheduler: one worker thread serves the requests, handing each request's cumulative
results to the callback it was submitted with (``deliver``). The server runs it in a process of
its own (:mod:`specguard.runtime.scheduler_process`), as SGLang runs its Scheduler.

Two schedulers (``--scheduler``):

* ``batched`` (default), iteration-level scheduling: every step admits waiting requests into
  free cache rows (up to ``--max-running-requests``; one more row is kept for health checks),
  prefills the new ones together, then advances every running request (the new ones included)
  by one batched iteration: a decode step (one target forward for all) or a speculative round
  (one batched draft, one batched verify, per-request acceptance), so a short request is never
  stuck behind a long one. Finished and cancelled requests free their row at once. The batch size of every
  iteration and the accept lengths are counted (:meth:`Engine.batching_stats`).
* ``queued``: first-in first-out, each request run to completion at batch size 1 on row 0
  (the scheduler before batching; kept as the benchmark's peer).

An error in one request is reported to that request only; the worker keeps serving. The
engine also keeps SGLang's accounting (per-request ``spec_*`` keys, the decode-log roll-ups
behind ``avg_spec_accept_length``) and the Prometheus metrics.
"""

from __future__ import annotations

import collections
import heapq
import itertools
import logging
import queue
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import torch

from specguard.runtime.flags import ServerArgs
from specguard.runtime.generate_input import (
    PRIORITY_HEALTH,
    PRIORITY_REQUEST,
    PRIORITY_STOP,
    GenerateInput,
    validate_input,
)
from specguard.runtime.metrics import Metrics
from specguard.runtime.speculative import Decoder, RoundResult, Sequence
from specguard.runtime.tokenizer import Tokenizer

logger = logging.getLogger("specguard.runtime")


SCHEDULERS = ("batched", "queued")


#: where a request's results go: ``deliver(kind, payload)`` with kind "chunk", "done" or "error"
Deliver = Callable[[str, Any], None]


@dataclass
class _Request:
    rid: str
    inp: GenerateInput
    deliver: Deliver
    created: float = field(default_factory=time.perf_counter)
    cancelled: bool = False


def _text_each_round(inp: GenerateInput) -> bool:
    """The text so far is needed after every round (to find a stop string, or to stream it);
    otherwise it is decoded once, when the request completes."""
    return bool(inp.stop) or inp.stream


def _row_of(act: _Active) -> int:
    return act.row


def _first(step: Callable[[list[Sequence]], list[RoundResult]], seq: Sequence) -> RoundResult:
    return step([seq])[0]


@dataclass
class _Active:
    """A request being served: its cache row, decoding state and output so far."""

    req: _Request
    row: int
    max_new: int
    stop_ids: set[int]
    histogram: list[int]
    seq: Sequence | None = None
    output: list[int] = field(default_factory=list)
    text: str = ""
    finish: dict[str, Any] | None = None
    failed: bool = False
    verify_ct: int = 0
    correct: int = 0


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
        scheduler: str = "batched",
        spare_rows: int = 0,
        graph_plan: Any = None,
    ) -> None:
        if scheduler not in SCHEDULERS:
            raise ValueError(f"scheduler must be one of {SCHEDULERS}, not {scheduler!r}")
        self.args = args
        self.scheduler = scheduler
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
        #: scheduler iterations by the number of requests they advanced together
        self.batch_size_counts: collections.Counter[int] = collections.Counter()
        self.recent_batch_sizes: collections.deque[int] = collections.deque(maxlen=64)
        #: the last finished speculative requests' accept lengths (SGLang's per-request spec_accept_length)
        self.recent_request_accept: collections.deque[dict[str, Any]] = collections.deque(maxlen=32)
        # Cache rows (the models' setup_cache(rows=...)): the last one is kept for health checks
        # when there are several, so a full server still answers /health_generate at once.
        #: the CUDA-graph plan and its bookkeeping (graphs.GraphPlan; None: not planned)
        self.graph_plan = graph_plan
        # ``spare_rows`` at the end are no request's (a CUDA-graph replay pads into them).
        rows = decoder.target.rows - spare_rows
        self._health_row = rows - 1 if rows > 1 else None
        self._health_row_free = self._health_row is not None
        self._request_rows = range(max(1, rows - 1))
        self._free_rows = list(self._request_rows)  # a heap: the lowest free row first, so
        # running requests keep a contiguous run of rows (read as a view, not gathered)
        worker = self._worker_batched if scheduler == "batched" else self._worker_queued
        self._thread = threading.Thread(target=worker, name="specguard-scheduler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._queue.put((PRIORITY_STOP, next(self._arrival), None))

    def join(self, timeout: float | None = None) -> None:
        """Wait for the scheduler thread to end (after stop())."""
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        """The scheduler thread is running (it only ends on stop())."""
        return self._thread.is_alive()

    @property
    def max_running_requests(self) -> int:
        """Requests served at once (health checks have a row of their own when batched)."""
        return len(self._request_rows) if self.scheduler == "batched" else 1

    @property
    def num_queued(self) -> int:
        return self._queue.qsize()

    @property
    def avg_spec_accept_length(self) -> float | None:
        if not self.decoder.speculative or self.spec_total_forward_ct == 0:
            return None
        return self.spec_total_accept_tokens / self.spec_total_forward_ct

    def validate(self, inp: GenerateInput) -> None:
        validate_input(inp, self.context_length, self.decoder.target.config.vocab_size)

    def submit(
        self, inp: GenerateInput, deliver: Deliver, priority: int = PRIORITY_REQUEST, created: float | None = None
    ) -> _Request:
        """Queue a request (from any thread); its results go to ``deliver``, called from the
        scheduler thread. Setting the returned request's ``cancelled`` stops it at the next
        iteration. ``created``: when the request arrived (``time.perf_counter()``, a system-wide
        clock on Linux, so the server's process may stamp it), for its latency."""
        self.validate(inp)
        rid = inp.rid or uuid.uuid4().hex
        req = _Request(rid=rid, inp=inp, deliver=deliver)
        if created is not None:
            req.created = created
        self._queue.put((priority, next(self._arrival), req))
        self.metrics.num_queue_reqs = self._queue.qsize()
        return req

    def _emit(self, req: _Request, kind: str, payload: Any) -> None:
        try:
            req.deliver(kind, payload)
        except (RuntimeError, OSError):  # nobody is listening any more (the server is shutting down)
            req.cancelled = True

    # ---- per-request bookkeeping, shared by both schedulers ----------------------------

    def _begin(self, req: _Request, row: int) -> _Active:
        inp = req.inp
        max_new = min(inp.sampling.max_new_tokens, self.context_length - len(inp.input_ids))
        stop_ids = set(inp.stop_token_ids) | (set() if inp.ignore_eos else self.eos_token_ids)
        act = _Active(req, row, max_new, stop_ids, [0] * max(1, self.decoder.spec.num_draft_tokens))
        if max_new == 0:
            act.finish = {"type": "length", "length": 0}
        else:
            act.seq = self.decoder.start(inp.input_ids, inp.sampling, row)
        return act

    def _consume(self, act: _Active, result: RoundResult) -> None:
        """Fold one round's tokens into the request; set ``act.finish`` when it is done."""
        req, inp, output = act.req, act.req.inp, act.output
        if result.prefill:
            self._log_prefill(len(inp.input_ids), time.perf_counter() - req.created)
            self.metrics.observe_ttft(time.perf_counter() - req.created)
        if result.accepted_drafts is not None:
            act.verify_ct += 1
            act.correct += result.accepted_drafts
            act.histogram[min(result.accepted_drafts, len(act.histogram) - 1)] += 1
        finish = None
        for token in result.tokens:
            output.append(token)
            if token in act.stop_ids and len(output) > inp.min_new_tokens:
                finish = {"type": "stop", "matched": token}
                break
            if len(output) >= act.max_new:
                finish = {"type": "length", "length": len(output)}
                break
        if not result.prefill:
            self._count_round(result.accepted_drafts, len(result.tokens))
        if _text_each_round(inp):
            act.text = self.tokenizer.decode(output)
        if inp.stop and not (finish is not None and finish["type"] == "stop"):
            for s in inp.stop:
                pos = act.text.find(s) if s else -1
                if pos >= 0:
                    act.text = act.text[:pos]
                    finish = {"type": "stop", "matched": s}
                    break
        act.finish = finish
        if finish is None and inp.stream:
            self._emit(req, "chunk", self._result(act))

    def _run_round(self, act: _Active, round_: Callable[[], RoundResult]) -> None:
        """One round of one request; its failure ends that request only."""
        try:
            self._consume(act, round_())
        except Exception as exc:  # noqa: BLE001 - one request's failure must not stop the server
            self._fail(act, exc)

    def _fail(self, act: _Active, exc: Exception) -> None:
        logger.error("request %s failed: %s\n%s", act.req.rid, exc, traceback.format_exc())
        self._emit(act.req, "error", f"internal error: {exc}")
        act.finish, act.failed = {"type": "abort", "message": str(exc)}, True

    def _check_cancelled(self, act: _Active) -> bool:
        if act.req.cancelled and act.finish is None:
            act.finish = {"type": "abort", "message": "client disconnected", "status_code": 499, "err_type": None}
            logger.info(
                "request %s cancelled (client disconnected) after %d of %d new tokens",
                act.req.rid,
                len(act.output),
                act.max_new,
            )
        return act.finish is not None

    def _complete(self, act: _Active) -> None:
        if act.failed:
            return
        if act.finish is None:
            act.finish = {"type": "length", "length": len(act.output)}
        inp = act.req.inp
        if not _text_each_round(inp):
            act.text = self.tokenizer.decode(act.output)
        if self.decoder.speculative and act.verify_ct:
            accept_length = len(act.output) / act.verify_ct
            self.metrics.observe_accept_length(accept_length)
            self.recent_request_accept.append(
                {"rid": act.req.rid, "spec_accept_length": accept_length, "spec_verify_ct": act.verify_ct}
            )
        self.metrics.observe_request(
            len(inp.input_ids), len(act.output), time.perf_counter() - act.req.created, inp.stream
        )
        self._emit(act.req, "done", self._result(act))

    def _record_batch(self, size: int) -> None:
        self.batch_size_counts[size] += 1
        self.recent_batch_sizes.append(size)
        self.metrics.observe_batch(size)

    def batching_stats(self) -> dict[str, Any]:
        """The counters /server_info reports: batch sizes each iteration ran at, and accept lengths
        (aggregate since start, and per finished request)."""
        counts = dict(sorted(self.batch_size_counts.items()))
        iterations = sum(counts.values())
        stats: dict[str, Any] = {
            "decode_iterations": iterations,
            "batch_size_histogram": {str(k): v for k, v in counts.items()},
            "avg_batch_size": sum(k * v for k, v in counts.items()) / iterations if iterations else 0.0,
            "recent_batch_sizes": list(self.recent_batch_sizes),
        }
        if self.decoder.speculative:
            rounds = self.metrics.spec_rounds_total
            stats["spec_accept_length_since_start"] = self.metrics.spec_accept_tokens_total / rounds if rounds else None
            stats["spec_verify_rounds_total"] = rounds
            stats["recent_request_accept_lengths"] = list(self.recent_request_accept)
        if self.graph_plan is not None:
            stats["cuda_graph"] = self.graph_plan.stats()
        return stats

    def _set_running(self, n: int) -> None:
        self._running = n
        self.metrics.num_running_reqs = n

    # ---- queued: one request at a time --------------------------------------------------

    def _worker_queued(self) -> None:
        torch.set_grad_enabled(False)
        while True:
            _, _, req = self._queue.get()
            if req is None:
                return
            self.metrics.num_queue_reqs = self._queue.qsize()
            if req.cancelled:
                continue
            self._set_running(1)
            act = self._begin(req, 0)
            try:
                if act.finish is None:
                    for result in self.decoder.decode(req.inp.input_ids, req.inp.sampling, 0):
                        if self._check_cancelled(act):
                            break
                        if not result.prefill:
                            self._record_batch(1)
                        self._consume(act, result)
                        if act.finish is not None:
                            break
            except Exception as exc:  # noqa: BLE001 - one request's failure must not stop the server
                self._fail(act, exc)
            finally:
                # the gauge drops before the client has its answer, which may read /metrics next
                self._set_running(0)
                self._complete(act)

    # ---- batched: every active request advances every step -------------------------------

    def _worker_batched(self) -> None:
        torch.set_grad_enabled(False)
        active: list[_Active] = []
        stopping = False
        while True:
            if not stopping:
                stopping = not self._admit(active, block=not active)
            if not active:
                if stopping:
                    return
                continue
            self._set_running(len(active))
            self._step(active)
            finished = [a for a in active if a.finish is not None]
            for act in finished:
                active.remove(act)
                self._release_row(act.row)
            # the gauge drops before any of them has its answer: a client may read /metrics next
            self._set_running(len(active))
            for act in finished:
                self._complete(act)

    def _admit(self, active: list[_Active], block: bool) -> bool:
        """Move waiting requests into free rows; False once stop() was called."""
        while True:
            try:
                priority, arrival, req = self._queue.get(block=block)
            except queue.Empty:
                return True
            block = False
            self.metrics.num_queue_reqs = self._queue.qsize()
            if req is None:
                return False
            if req.cancelled:
                continue
            row = self._take_row(priority)
            if row is None:  # every row busy: it waits, in its place, for the next step
                self._queue.put((priority, arrival, req))
                return True
            active.append(self._begin(req, row))

    def _take_row(self, priority: int) -> int | None:
        if priority == PRIORITY_HEALTH and self._health_row_free:
            self._health_row_free = False
            return self._health_row  # type: ignore[return-value]
        return heapq.heappop(self._free_rows) if self._free_rows else None

    def _release_row(self, row: int) -> None:
        if self._health_row is not None and row == self._health_row:
            self._health_row_free = True
        else:
            heapq.heappush(self._free_rows, row)

    def _step(self, active: list[_Active]) -> None:
        """Prefill the new requests, then one round for every running one, the new ones included
        (a request's first round is in the step of its prefill, not the next)."""
        # In row order: a request admitted into a finished one's row would otherwise come last,
        # and rows that form one contiguous run out of order are gathered from the cache in
        # every layer instead of read as a view (model.row_range_of).
        active.sort(key=_row_of)
        running = [a for a in active if a.seq is not None and a.seq.committed and not self._check_cancelled(a)]
        new = [a for a in active if a.seq is not None and not a.seq.committed and not self._check_cancelled(a)]
        if new:
            self._batched_step(new, self.decoder.prefill_many, self.decoder.prefill, "prefill")
            # a failed prefill or a first token that ends the request set ``finish``
            running = sorted(running + [a for a in new if a.finish is None], key=_row_of)
        if not running:
            return
        self._record_batch(len(running))
        if self.decoder.speculative:
            self._batched_step(running, self.decoder.spec_step, self.decoder.spec_round, "speculative round")
        else:
            self._batched_step(running, self.decoder.plain_step, partial(_first, self.decoder.plain_step), "decode step")

    def _batched_step(
        self,
        running: list[_Active],
        step: Callable[[list[Sequence]], list[RoundResult]],
        alone: Callable[[Sequence], RoundResult],
        what: str,
    ) -> None:
        """One batched iteration (a decode step, or a speculative round: one batched draft and
        one batched verify for all); if the batch fails, each request alone (errors stay its own)."""
        try:
            results = step([a.seq for a in running if a.seq is not None])
        except Exception:  # noqa: BLE001 - any failure of the batch falls back to one request at a time
            logger.warning("batched %s failed; retrying its %d requests one by one", what, len(running))
            for act in running:
                assert act.seq is not None
                self._run_round(act, partial(alone, act.seq))
            return
        for act, result in zip(running, results):
            try:
                self._consume(act, result)
            except Exception as exc:  # noqa: BLE001 - the failure stays with its own request
                self._fail(act, exc)

    def _result(self, act: _Active) -> dict[str, Any]:
        req, output, finish = act.req, act.output, act.finish
        verify_ct, correct, histogram = act.verify_ct, act.correct, act.histogram
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
        return {"text": act.text, "output_ids": list(output), "meta_info": meta}

    def _log_prefill(self, new_tokens: int, elapsed: float) -> None:
        logger.info(
            "Prefill batch, #new-seq: 1, #new-token: %d, #cached-token: 0, token usage: %.2f, "
            "#running-req: %d, #queue-req: %d, #pending-token: 0, %s: %s, input throughput (token/s): %.2f",
            new_tokens,
            new_tokens / self.context_length,
            self._running - 1 if self._running else 0,
            self._queue.qsize(),
            self._graph_label,
            self._graph_on,
            new_tokens / max(elapsed, 1e-9),
        )

    @property
    def _graph_label(self) -> str:
        return "cuda graph" if self.args.device == "cuda" else "cpu graph"

    @property
    def _graph_on(self) -> bool:
        """SGLang's ``cuda graph: True`` in the batch logs: graphs were captured (never on CPU)."""
        return bool(self.graph_plan is not None and self.graph_plan.enabled)

    def _count_round(self, accepted: int | None, produced: int) -> None:
        """Roll up one decode iteration; log and publish every ``decode_log_interval`` iterations."""
        iv = self._interval
        iv.rounds += 1
        iv.tokens += produced
        if accepted is not None:
            self.metrics.observe_round(accepted)
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
            "Decode batch, #running-req: %d, #token: %d, token usage: %.2f, %s%s: %s, "
            "gen throughput (token/s): %.2f, #queue-req: %d",
            self._running,
            iv.tokens,
            0.0,
            spec_part,
            self._graph_label,
            self._graph_on,
            self.last_gen_throughput,
            self._queue.qsize(),
        )
        self._interval = _Interval()
