"""The scheduler in a process of its own, as SGLang runs its Scheduler apart from the HTTP server.
SGLang 0.5.23: ``srt/entrypoints/engine.py`` ``_launch_subprocesses`` starts each scheduler with
``mp.Process`` (line 956) under the ``spawn`` start method (line 1995); the scheduler sends its
start-up information back over a pipe (``managers/scheduler.py:6365``); the tokenizer manager
stays in the server's process and exchanges requests with it over ZMQ sockets; a scheduler that
fails sends its parent SIGQUIT (``scheduler.py:6373``), whose handler kills the whole process tree
(``managers/tokenizer_manager.py:4074-4082``). Here one ``spawn``-ed process loads the models,
builds the :class:`Engine` and runs its scheduler thread; the server's process keeps the HTTP
stack and the tokenizer and talks to it over a ``multiprocessing`` pipe.

Why a process and not a thread: the server's request path (routing, validation, tokenising, the
JSON answer) and the forwards would otherwise share one interpreter lock. A batched speculative
round spends less time per request than a plain decode step, so a per-request cost paid on the
scheduler's interpreter dilutes exactly the gain speculation brings (``README.md``, "Under
concurrency").

Messages (tuples; the pipe pickles them):

* server -> scheduler: ``("submit", GenerateInput, priority, created)`` (the input carries its
  ``rid``), ``("abort", rid)``, ``("call", call_id, name)`` with ``name`` one of
  :data:`CALLS`, ``("stop",)``;
* scheduler -> server: ``("ready", SchedulerReady)`` or ``("error", message)`` once at start-up,
  then ``("result", rid, kind, payload)`` (kind ``chunk``, ``done`` or ``error``, as the engine
  delivers them) and ``("reply", call_id, value)``.

The scheduler stays in the server's process group but ignores SIGINT and SIGTERM (a terminal's
Ctrl-C and a supervisor's stop reach the whole group; the server finishes its answers, then stops
it), and exits when the server's end of the pipe closes or the server dies
(``PR_SET_PDEATHSIG``), so it never outlives the server.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specguard.launch.parent_death import ask_for_death_signal
from specguard.runtime.errors import RuntimeInputError, SchedulerExited
from specguard.runtime.flags import SPEC_MAX_RUNNING_REQUESTS, ServerArgs
from specguard.runtime.generate_input import (
    PRIORITY_REQUEST,
    GenerateInput,
    validate_input,
)
from specguard.runtime.tokenizer import Tokenizer
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS

if TYPE_CHECKING:  # the engine loads torch, which the server's process does without
    from specguard.runtime.engine import Engine

logger = logging.getLogger("specguard.runtime")

TINY_MODEL_PARAMS = 50_000_000
#: what the server may ask the scheduler process for (``SchedulerClient.call``; its pipe reader answers)
CALLS = ("stats", "metrics")
#: how long a call waits for its reply before the route fails (HTTP 500)
CALL_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class SchedulerReady:
    """What the server needs from the scheduler's start-up: the resolved flags and model facts it
    reports, and the limits it checks requests against before queueing them."""

    info: dict[str, Any]
    model_info: dict[str, Any]
    context_length: int
    vocab_size: int
    max_running_requests: int


def configure_logging(level: str) -> None:
    """SGLang's log format, on stderr (the scheduler's lines and the server's go to the same stream)."""
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="[%(asctime)s] %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
        stream=sys.stderr,
        force=True,
    )


# ---- start-up: the models, the cache and the engine (in the scheduler's process) ------------


def build_engine(args: ServerArgs) -> tuple[Engine, SchedulerReady]:
    """Load the target and the draft, size and allocate the KV cache, plan the CUDA graphs and
    build the engine (not started). Refusals are RuntimeInputError."""
    import torch

    from specguard.runtime.config import load_config
    from specguard.runtime.engine import Engine
    from specguard.runtime.loader import load_model, resolve_dtype
    from specguard.runtime.metrics import Metrics
    from specguard.runtime.speculative import Decoder, SpecConfig

    if args.device == "cuda" and not torch.cuda.is_available():
        raise RuntimeInputError("--device cuda: no CUDA device is available to torch on this machine; use --device cpu")
    if args.random_seed is not None:
        torch.manual_seed(args.random_seed)

    began = time.monotonic()
    target_dir = Path(args.model_path)
    cfg = load_config(target_dir)
    tokenizer = Tokenizer(Path(args.tokenizer_path) if args.tokenizer_path else target_dir)
    target = load_model(target_dir, args.dtype, args.device)
    draft: Any = None  # CausalLM (STANDALONE) or EagleHead (EAGLE, EAGLE3)
    if args.speculative_algorithm == "STANDALONE":
        draft_dir = Path(str(args.speculative_draft_model_path))
        draft_cfg = load_config(draft_dir)
        if draft_cfg.vocab_size != cfg.vocab_size:
            raise RuntimeInputError(
                f"draft vocabulary differs from the target's: {draft_dir} has vocab_size {draft_cfg.vocab_size}, "
                f"{target_dir} has {cfg.vocab_size}; STANDALONE needs the same tokenizer"
            )
        if (draft_dir / "tokenizer.json").is_file():
            if Tokenizer(draft_dir).vocab_fingerprint() != tokenizer.vocab_fingerprint():
                raise RuntimeInputError(
                    f"draft vocabulary differs from the target's: {draft_dir}/tokenizer.json maps tokens to other ids; "
                    "STANDALONE needs the same tokenizer"
                )
        draft = load_model(draft_dir, args.dtype, args.device)
    elif args.speculative_algorithm in EAGLE_HEAD_ALGORITHMS:
        from specguard.runtime.eagle import load_eagle_head

        # parse_flags has checked that the head's architecture matches the algorithm.
        draft = load_eagle_head(Path(str(args.speculative_draft_model_path)), target)
    if args.device == "cpu":
        # A small model's decode step is per-op overhead: extra threads only add synchronisation
        # (and collapse on a shared machine); a large one is matmul-bound and gains from them.
        small = sum(p.numel() for p in target.parameters()) < TINY_MODEL_PARAMS
        torch.set_num_threads(1 if small else max(1, min(torch.get_num_threads(), 8)))
    dtype = resolve_dtype(args.dtype, cfg, args.device)
    args.dtype = str(dtype).removeprefix("torch.") if args.dtype == "auto" else args.dtype
    mem = _available_mem_gb()
    logger.info(
        "Load weight end. elapsed=%.2f s, type=%s, avail mem=%.2f GB, mem usage=%.2f GB.",
        time.monotonic() - began,
        cfg.architecture,
        mem,
        sum(p.numel() * p.element_size() for p in target.parameters()) / (1 << 30),
    )

    context_length = args.context_length or cfg.max_position_embeddings
    if context_length > cfg.max_position_embeddings:
        logger.warning(
            "--context-length %d exceeds max_position_embeddings %d of the model",
            context_length,
            cfg.max_position_embeddings,
        )
    spec = SpecConfig(
        algorithm=args.speculative_algorithm,
        num_steps=args.speculative_num_steps or 0,
        topk=args.speculative_eagle_topk or 1,
        num_draft_tokens=args.speculative_num_draft_tokens or 1,
        ngram_min_bfs_breadth=args.speculative_ngram_min_bfs_breadth,
        ngram_max_bfs_breadth=args.speculative_ngram_max_bfs_breadth,
        ngram_match_type=args.speculative_ngram_match_type,
        ngram_max_trie_depth=args.speculative_ngram_max_trie_depth,
        ngram_capacity=args.speculative_ngram_capacity,
    )
    target_slots = context_length + spec.num_draft_tokens + 1
    draft_slots = context_length + spec.num_steps * spec.topk + 2
    _check_cache_fits(args, context_length, target, target_slots, draft, draft_slots, _available_cache_bytes(args.device, mem))
    rows = _cache_rows(args, target, target_slots, draft, draft_slots, mem)
    plan = _graph_plan(args, spec, rows)
    # A replay pads its batch into a row of its own (never a request's or the health check's).
    spare_rows = 1 if plan.enabled else 0
    target.setup_cache(target_slots, rows + spare_rows)
    if draft is not None:
        draft.setup_cache(draft_slots, rows + spare_rows)
    if plan.enabled:
        from specguard.runtime.graphs import attach_graphs

        attach_graphs(plan, target, draft, spec, pad_row=rows)
    else:
        logger.info("cuda graph: %s", plan.note)
    decoder = Decoder(target, spec, draft, seed=args.random_seed)
    eos = set(cfg.eos_token_ids)
    if tokenizer.eos_token_id is not None:
        eos.add(tokenizer.eos_token_id)
    served = args.served_model_name or args.model_path
    args.served_model_name = served
    args.tokenizer_path = args.tokenizer_path or args.model_path
    metrics = Metrics(served, spec.num_steps, spec.num_draft_tokens)
    engine = Engine(
        args, decoder, tokenizer, eos, context_length, metrics, scheduler=args.scheduler, spare_rows=spare_rows, graph_plan=plan
    )
    logger.info(
        "max_total_num_tokens=%d, chunked_prefill_size=%d, max_prefill_tokens=%d, max_running_requests=%d, "
        "context_len=%d, available_cpu_mem=%.2f GB",
        context_length,
        context_length,
        context_length,
        engine.max_running_requests,
        context_length,
        mem,
    )
    info = {
        **args.public_dict(),
        "reference_runtime": True,
        "draft_mode": (args.speculative_algorithm or "").lower() or None,
        "batching": args.scheduler,
        "ignored_flags": list(args.ignored_flags),
    }
    model_info = {
        "model_path": args.model_path,
        "served_model_name": served,
        "tokenizer_path": args.tokenizer_path,
        "is_generation": True,
        "preferred_sampling_params": None,
        "weight_version": "default",
        "load_format": "auto",
        "reasoning_parser": None,
        "tool_call_parser": None,
        "disaggregation_mode": "null",
        "has_image_understanding": False,
        "has_audio_understanding": False,
        "model_type": cfg.model_type,
        "architectures": [cfg.architecture],
    }
    ready = SchedulerReady(
        info=info,
        model_info=model_info,
        context_length=context_length,
        vocab_size=cfg.vocab_size,
        max_running_requests=engine.max_running_requests,
    )
    return engine, ready


def _cache_rows(args: ServerArgs, target: Any, target_slots: int, draft: Any, draft_slots: int, mem_gb: float) -> int:
    """KV-cache rows to allocate: one per running request plus one kept for health checks
    (batched), or one (queued); fewer if they would take more than half the available memory."""
    if args.scheduler == "queued":
        return 1
    # Plain decoding: SGLang sizes max_running_requests from GPU memory; here the speculative default.
    wanted = (args.max_running_requests or SPEC_MAX_RUNNING_REQUESTS) + 1
    row_bytes = _row_bytes(target, target_slots) + (_row_bytes(draft, draft_slots) if draft is not None else 0)
    budget = int(mem_gb * (1 << 30) / 2) if mem_gb > 0 else wanted * row_bytes
    rows = max(2, min(wanted, budget // max(row_bytes, 1)))
    if rows < wanted:
        logger.warning(
            "KV cache for %d running requests would need %.2f GB; serving %d at a time (lower --context-length for more)",
            wanted - 1,
            wanted * row_bytes / (1 << 30),
            rows - 1,
        )
    return rows


def _check_cache_fits(
    args: ServerArgs, context_length: int, target: Any, target_slots: int, draft: Any, draft_slots: int, available: int
) -> None:
    """The smallest KV cache the server runs with (two rows batched: a request and the health
    check's; one queued) must fit the memory left after the weights, or torch fails allocating it
    with a traceback: refuse the context length instead, naming the largest that fits."""
    if available <= 0:  # unknown: the allocation itself is the test
        return
    rows = 1 if args.scheduler == "queued" else 2
    needed = rows * (_row_bytes(target, target_slots) + (_row_bytes(draft, draft_slots) if draft is not None else 0))
    if needed <= available:
        return
    per_slot = _row_bytes(target, 1) + (_row_bytes(draft, 1) if draft is not None else 0)
    round_bytes = needed // rows - context_length * per_slot  # the draft round's slots past the context
    largest = max(0, (available // rows - round_bytes) // per_slot)
    given = "" if args.context_length else " (the model's max_position_embeddings)"
    raise RuntimeInputError(
        f"--context-length {context_length}{given}: the KV cache for {rows} request(s) of that length needs "
        f"{needed / (1 << 30):.1f} GB, more than the {available / (1 << 30):.1f} GB available; at most {largest} tokens fit here"
    )


def _available_cache_bytes(device: str, host_mem_gb: float) -> int:
    """Memory free for the KV cache where it lives: the GPU's free memory, or the host's available memory (0: unknown)."""
    if device == "cuda":
        import torch

        return int(torch.cuda.mem_get_info()[0])
    return int(host_mem_gb * (1 << 30))


def _row_bytes(model: Any, slots: int) -> int:
    """Bytes of one request's KV cache: keys and values of every attention layer."""
    return sum(
        2 * layer.self_attn.n_kv * slots * layer.self_attn.head_dim * model.dtype.itemsize for layer in _layers(model)
    )


def _layers(model: Any) -> Any:
    return model.model.layers if hasattr(model, "model") else model.layers


def _available_mem_gb() -> float:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / (1 << 20)
    except OSError:
        pass
    return 0.0


def _graph_plan(args: ServerArgs, spec: Any, rows: int) -> Any:
    """The CUDA-graph plan of the flags (graphs.GraphPlan) for the request rows (the health
    check's row included: a batch may hold it)."""
    from specguard.runtime.graphs import GraphPlan

    gpu_mib = None
    if args.device == "cuda":
        import torch

        gpu_mib = torch.cuda.get_device_properties(0).total_memory / (1 << 20)
    return GraphPlan.from_args(
        device=args.device,
        speculative=spec.algorithm is not None,
        request_rows=rows,
        disable_cuda_graph=args.disable_cuda_graph,
        cuda_graph_max_bs=args.cuda_graph_max_bs_decode or args.cuda_graph_max_bs,
        disable_cuda_graph_padding=args.disable_cuda_graph_padding,
        user_max_running_requests=args.max_running_requests,
        gpu_mib=gpu_mib,
    )


# ---- the scheduler's process ----------------------------------------------------------------


def run_scheduler(args: ServerArgs, conn: Connection, server_pid: int) -> None:
    """The scheduler process's entry point (``spawn``): build the engine, say ready (or why not),
    then serve the pipe until the server says stop or goes away."""
    # In the server's process group (a supervisor's SIGKILL to the group ends both, and "no
    # process left in the group" means what it says), but deaf to the stop signals a terminal or
    # a supervisor sends the whole group: the server finishes its answers and then stops the
    # scheduler itself. Should the server die without doing so, the kernel ends the scheduler.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ask_for_death_signal(signal.SIGKILL)
    if os.getppid() != server_pid:  # the server died before the request above was made
        sys.exit(1)
    configure_logging(args.log_level)
    try:
        engine, ready = build_engine(args)
    except RuntimeInputError as exc:
        conn.send(("error", str(exc)))
        conn.close()
        sys.exit(2)
    bridge = _Bridge(engine, conn)
    conn.send(("ready", ready))
    engine.start()
    bridge.serve()


class _Bridge:
    """The scheduler's end of the pipe: requests in (the process's main thread, blocked on the
    pipe while idle), results out (from the scheduler thread, through each request's ``deliver``)."""

    def __init__(self, engine: Engine, conn: Connection) -> None:
        self.engine = engine
        self.conn = conn
        self._send_lock = threading.Lock()  # the scheduler thread and this one both send
        # the requests not yet finished, for aborts; the scheduler thread removes a request the
        # moment it finishes, possibly before engine.submit has returned it here
        self._requests: dict[str, Any] = {}
        self._requests_lock = threading.Lock()

    @property
    def open_requests(self) -> int:
        """Requests submitted and not finished (each one an abort could still reach)."""
        with self._requests_lock:
            return len(self._requests)

    def send(self, message: tuple[Any, ...]) -> None:
        with self._send_lock:
            self.conn.send(message)

    def serve(self) -> None:
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError):  # the server is gone: nobody to serve
                break
            kind = message[0]
            if kind == "submit":
                self._submit(*message[1:])
            elif kind == "abort":
                with self._requests_lock:
                    req = self._requests.get(message[1])
                if req is not None:
                    req.cancelled = True
            elif kind == "call":
                _, call_id, name = message
                self.send(("reply", call_id, self._answer(name)))
            elif kind == "stop":
                break
        self.engine.stop()
        self.engine.join(timeout=10.0)

    def _submit(self, inp: GenerateInput, priority: int, created: float) -> None:
        rid = inp.rid
        assert rid is not None  # the server names every request before sending it

        finished = False

        def deliver(kind: str, payload: Any) -> None:
            nonlocal finished
            if kind != "chunk":
                with self._requests_lock:
                    finished = True
                    self._requests.pop(rid, None)
            self.send(("result", rid, kind, payload))

        try:
            req = self.engine.submit(inp, deliver, priority, created=created)
        except Exception as exc:  # noqa: BLE001 - the server validated it; whatever is left is this request's
            self.send(("result", rid, "error", str(exc)))
            return
        with self._requests_lock:
            if not finished:
                self._requests[rid] = req

    def _answer(self, name: str) -> Any:
        engine = self.engine
        if name == "stats":
            return {
                "last_gen_throughput": engine.last_gen_throughput,
                "avg_spec_accept_length": engine.avg_spec_accept_length,
                "batching_stats": engine.batching_stats(),
                "alive": engine.alive,
            }
        if name == "metrics":
            engine.metrics.num_queue_reqs = engine.num_queued
            return engine.metrics.render()
        return None


# ---- the server's process -------------------------------------------------------------------


class PendingRequest:
    """A submitted request as the server sees it: its results arrive on ``events`` (an asyncio
    queue of ``(kind, payload)``), and :meth:`cancel` stops it at the scheduler's next iteration."""

    def __init__(self, client: SchedulerClient, rid: str) -> None:
        self.client = client
        self.rid = rid
        self.events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.finished = False

    def cancel(self) -> None:
        """Stop generating (a no-op once the request has finished)."""
        if not self.finished:
            self.finished = True
            self.client._forget(self.rid, abort=True)


class SchedulerClient:
    """The server's handle on the scheduler process: start it, hand it requests, read results,
    ask it for its counters, stop it. Lives on the server's event loop (``submit`` and ``call``
    are made from it, and the pipe is read by a reader callback on it: no thread)."""

    def __init__(self, args: ServerArgs, on_exit: Callable[[], None] = lambda: None) -> None:
        self.args = args
        self.on_exit = on_exit
        self._tokenizer: Tokenizer | None = None  # loaded once the scheduler has checked the checkpoint
        self._pending: dict[str, PendingRequest] = {}
        self._calls: dict[int, asyncio.Future[Any]] = {}
        self._call_ids = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._process: Any = None
        self._conn: Connection | None = None
        self._gone = False
        self._stopping = False
        self.ready: SchedulerReady | None = None

    # start and stop (from the server's main thread)

    def start(self) -> SchedulerReady:
        """Start the scheduler process and wait until it has loaded the models; its refusal is
        raised here as RuntimeInputError, its crash as SchedulerExited."""
        context = multiprocessing.get_context("spawn")  # CUDA cannot be used in a forked child
        conn, child_conn = context.Pipe()
        self._process = context.Process(
            target=run_scheduler, args=(self.args, child_conn, os.getpid()), name="specguard-scheduler", daemon=True
        )
        self._process.start()
        child_conn.close()
        self._conn = conn
        while not conn.poll(0.1):
            if not self._process.is_alive() and not conn.poll(0):
                raise SchedulerExited(self._exit_message("before it was ready"))
        try:
            message = conn.recv()
        except (EOFError, OSError):
            self._process.join(timeout=5.0)
            raise SchedulerExited(self._exit_message("before it was ready")) from None
        if message[0] == "error":
            self._process.join(timeout=5.0)
            raise RuntimeInputError(message[1])
        self.ready = message[1]
        self._tokenizer = Tokenizer(Path(self.args.tokenizer_path or self.args.model_path))
        return message[1]

    def stop(self) -> None:
        """Ask the scheduler to stop, and make sure it has: one still loading the models (Ctrl-C
        during start-up), or one that does not stop within 10 s, is killed (it ignores SIGTERM)."""
        if self._process is None or not self._process.is_alive():
            return
        self._stopping = True  # the pipe's end is expected now, not a crash
        if self.ready is not None and self._conn is not None and not self._gone:
            try:
                self._conn.send(("stop",))
            except OSError:
                pass
            self._process.join(timeout=10.0)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(timeout=5.0)

    def _exit_message(self, when: str) -> str:
        code = self._process.exitcode if self._process is not None else None
        return f"the scheduler process exited {when} (exit code {code}); its error is in the log above"

    # what the routes read

    @property
    def alive(self) -> bool:
        return not self._gone and self._process is not None and self._process.is_alive()

    @property
    def tokenizer(self) -> Tokenizer:
        assert self._tokenizer is not None, "start() first"
        return self._tokenizer

    @property
    def context_length(self) -> int:
        assert self.ready is not None
        return self.ready.context_length

    @property
    def max_running_requests(self) -> int:
        assert self.ready is not None
        return self.ready.max_running_requests

    def validate(self, inp: GenerateInput) -> None:
        assert self.ready is not None
        validate_input(inp, self.ready.context_length, self.ready.vocab_size)

    def submit(self, inp: GenerateInput, priority: int = PRIORITY_REQUEST) -> PendingRequest:
        """Validate and queue a request (from the event loop); RequestError if it is refused."""
        self.validate(inp)
        if inp.rid is None:
            inp.rid = uuid.uuid4().hex
        pending = PendingRequest(self, inp.rid)
        if self._gone:
            pending.finished = True
            pending.events.put_nowait(("error", "the scheduler process has exited"))
            return pending
        self.attach()
        self._pending[inp.rid] = pending
        self._send(("submit", inp, priority, time.perf_counter()))
        return pending

    async def call(self, name: str) -> Any:
        """Ask the scheduler for ``name`` (one of CALLS); SchedulerExited if it cannot answer."""
        if self._gone:
            raise SchedulerExited("the scheduler process has exited")
        self.attach()
        call_id = next(self._call_ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._calls[call_id] = future
        self._send(("call", call_id, name))
        try:
            return await asyncio.wait_for(future, CALL_TIMEOUT_S)
        except TimeoutError:
            raise RuntimeError(f"the scheduler did not answer {name!r} within {CALL_TIMEOUT_S:.0f} s") from None
        finally:
            self._calls.pop(call_id, None)

    # the pipe

    def _send(self, message: tuple[Any, ...]) -> None:
        assert self._conn is not None
        try:
            self._conn.send(message)
        except OSError:
            self._lost()

    def _forget(self, rid: str, abort: bool) -> None:
        if self._pending.pop(rid, None) is not None and abort and not self._gone:
            self._send(("abort", rid))

    def attach(self) -> None:
        """Read the pipe from the running event loop (once; the app's start-up calls it)."""
        if self._loop is None:
            assert self._conn is not None
            self._loop = asyncio.get_running_loop()
            self._loop.add_reader(self._conn.fileno(), self._drain)

    def _drain(self) -> None:
        """Every message waiting on the pipe, dispatched to its request or call."""
        conn = self._conn
        assert conn is not None
        try:
            while conn.poll(0):
                message = conn.recv()
                if message[0] == "result":
                    _, rid, kind, payload = message
                    pending = self._pending.get(rid)
                    if pending is None:
                        continue  # cancelled: its client has gone
                    if kind != "chunk":
                        pending.finished = True
                        self._pending.pop(rid, None)
                    pending.events.put_nowait((kind, payload))
                elif message[0] == "reply":
                    future = self._calls.get(message[1])
                    if future is not None and not future.done():
                        future.set_result(message[2])
        except (EOFError, OSError):
            self._lost()

    def _lost(self) -> None:
        """The scheduler process has gone: fail what waits on it and, unless it was asked to stop,
        tell the server (which shuts down: a crash, exit code 1)."""
        if self._gone:
            return
        self._gone = True
        if self._loop is not None and self._conn is not None:
            self._loop.remove_reader(self._conn.fileno())
        for pending in list(self._pending.values()):
            pending.finished = True
            pending.events.put_nowait(("error", "the scheduler process has exited"))
        self._pending.clear()
        for future in self._calls.values():
            if not future.done():
                future.set_exception(SchedulerExited("the scheduler process has exited"))
        if self._stopping:  # asked to stop: the end of the pipe is expected, not a crash
            return
        if self._process is not None:
            self._process.join(timeout=1.0)
        logger.error("%s", self._exit_message("while serving"))
        self.on_exit()
