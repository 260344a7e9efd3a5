"""``python -m specguard.runtime [SGLang-style flags]``: start the reference runtime's server."""

from __future__ import annotations

import json
import logging
import os
import shlex
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from specguard.redact import redact_argv
from specguard.runtime.errors import RuntimeInputError
from specguard.runtime.flags import SPEC_MAX_RUNNING_REQUESTS, ServerArgs, parse_flags
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS

logger = logging.getLogger("specguard.runtime")

WARMUP_PROMPT = "The capital city of France is"
TINY_MODEL_PARAMS = 50_000_000


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="[%(asctime)s] %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
        stream=sys.stderr,
        force=True,
    )


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


def _warmup(args: ServerArgs, state, headers: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Like SGLang's _execute_server_warmup: poll /model_info, send one /generate, log readiness."""
    base = f"http://{'127.0.0.1' if args.host in ('0.0.0.0', '::') else args.host}:{args.port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(urllib.request.Request(base + "/model_info", headers=headers), timeout=5):
                break
        except (urllib.error.URLError, OSError):
            if time.monotonic() > deadline:
                logger.error("warm-up failed: /model_info did not answer within 120 s")
                os._exit(1)
            time.sleep(0.1)
    if not args.skip_server_warmup:
        body = json.dumps({"text": WARMUP_PROMPT, "sampling_params": {"temperature": 0, "max_new_tokens": 8}}).encode()
        request = urllib.request.Request(
            base + "/generate", data=body, headers={**headers, "Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=300) as resp:
                resp.read()
        except (urllib.error.URLError, OSError) as exc:
            logger.error("warm-up request failed: %s", exc)
            os._exit(1)
    state.ready = True
    logger.info("The server is fired up and ready to roll!")


def serve(argv: list[str]) -> int:
    parsed = parse_flags(argv)
    args = parsed.args
    _configure_logging(args.log_level)
    for warning in parsed.warnings:
        logger.warning(warning)

    import torch
    import uvicorn

    from specguard.runtime.config import load_config
    from specguard.runtime.engine import Engine
    from specguard.runtime.loader import load_model, resolve_dtype
    from specguard.runtime.metrics import Metrics
    from specguard.runtime.server import ServerState, build_app
    from specguard.runtime.speculative import Decoder, SpecConfig
    from specguard.runtime.tokenizer import Tokenizer

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
    launch_command = "python -m specguard.runtime " + shlex.join(redact_argv(argv))
    state = ServerState(engine, info, model_info, launch_command)
    app = build_app(state, args.api_key, args.enable_metrics)
    engine.start()
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    threading.Thread(target=_warmup, args=(args, state, headers), name="specguard-warmup", daemon=True).start()
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level.lower(), access_log=False)
    server = uvicorn.Server(config)
    server.run()
    engine.stop()
    return 0 if server.started else 1


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return serve(argv)
    except RuntimeInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
