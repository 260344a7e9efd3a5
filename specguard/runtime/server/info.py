"""Liveness, readiness, model and server information, and the Prometheus metrics (SGLang 0.5.23
``srt/entrypoints/http_server.py``: /ready 714, /health and /health_generate 721-722,
/model_info 812, /server_info 863)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import PlainTextResponse, Response

from specguard.runtime.generate_input import (
    PRIORITY_HEALTH,
    GenerateInput,
    SamplingParams,
)
from specguard.runtime.server.common import (
    HEALTH_CHECK_TIMEOUT_S,
    VERSION,
    ServerState,
    run_to_end,
    server_state,
)

logger = logging.getLogger("specguard.runtime")

router = APIRouter()
State = Annotated[ServerState, Depends(server_state)]


@router.get("/ready")
async def ready(state: State) -> Response:
    return Response(status_code=200 if state.ready else 503)


@router.get("/health")
async def health(state: State) -> Response:
    """Liveness, answered here at once: a queue of long requests must not make a busy
    server look dead (launch polls this while serving)."""
    return Response(status_code=200 if state.ready and state.engine.alive else 503)


@router.get("/health_generate")
async def health_generate(state: State) -> Response:
    """One generated token, ahead of the waiting requests: at the next step in a row kept for it
    (batched), or after the running request (queued)."""
    if not state.ready:
        return Response(status_code=503)
    inp = GenerateInput(
        input_ids=[0],
        sampling=SamplingParams(max_new_tokens=1, temperature=0.0),
        rid=f"HEALTH_CHECK_{uuid.uuid4().hex}",
    )
    try:
        await asyncio.wait_for(run_to_end(state.engine, inp, PRIORITY_HEALTH), HEALTH_CHECK_TIMEOUT_S)
    except (TimeoutError, RuntimeError):
        logger.error(
            "Health check failed. Server couldn't get a response from detokenizer for last %d seconds.",
            int(HEALTH_CHECK_TIMEOUT_S),
        )
        return Response(status_code=503)
    return Response(status_code=200)


@router.get("/model_info")
async def model_info(state: State) -> dict[str, Any]:
    return state.model_info


@router.get("/get_model_info")
async def get_model_info(state: State) -> dict[str, Any]:
    logger.warning(
        "Endpoint '/get_model_info' is deprecated and will be removed in a future version. "
        "Please use '/model_info' instead."
    )
    return state.model_info


async def server_info(state: ServerState) -> dict[str, Any]:
    engine = state.engine
    stats = await engine.call("stats")  # the scheduler process reads its counters for us
    internal = dict(state.info)
    internal.update(
        world_size=1,
        startup_time=state.startup_time,
        effective_max_running_requests_per_dp=engine.max_running_requests,
        last_gen_throughput=stats["last_gen_throughput"],
        memory_usage={},
    )
    avg = stats["avg_spec_accept_length"]
    if avg is not None:
        internal["avg_spec_accept_length"] = avg
    internal["batching_stats"] = stats["batching_stats"]
    return {
        **state.info,
        "launch_command": state.launch_command,
        "max_total_num_tokens": engine.context_length,
        "max_req_input_len": engine.context_length - 1,
        "status": "ready" if state.ready else "starting",
        "startup_time": state.startup_time,
        "kv_events": None,
        "internal_states": [internal],
        "version": VERSION,
        "frontend": "python",
    }


@router.get("/server_info")
async def get_server_info_current(state: State) -> dict[str, Any]:
    return await server_info(state)


@router.get("/get_server_info")
async def get_server_info(state: State) -> dict[str, Any]:
    logger.warning(
        "Endpoint '/get_server_info' is deprecated and will be removed in a future version. "
        "Please use '/server_info' instead."
    )
    return await server_info(state)


@router.get("/v1/models")
async def list_models(state: State) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {
                "id": state.served_name,
                "object": "model",
                "created": int(state.startup_time),
                "owned_by": "sglang",
                "root": state.served_name,
                "max_model_len": state.engine.context_length,
            }
        ],
    }


@router.get("/metrics")
async def metrics(state: State) -> Response:
    if not state.enable_metrics:
        return Response(status_code=404)
    text = await state.engine.call("metrics")
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4")
