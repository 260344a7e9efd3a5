"""SGLang's native ``POST|PUT /generate`` (0.5.23 ``http_server.py:928-990``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from specguard.runtime.errors import RequestError
from specguard.runtime.generate_input import GenerateInput
from specguard.runtime.server.common import (
    GenerateRequest,
    ServerState,
    read_body,
    refuse_logprobs,
    run_to_end,
    sampling,
    server_state,
    sse,
    stops,
    stream_results,
    tokenize_prompt,
)

router = APIRouter()


@router.api_route("/generate", methods=["POST", "PUT"])
async def generate(request: Request, state: Annotated[ServerState, Depends(server_state)]) -> Response:
    engine = state.engine
    body = await read_body(request, GenerateRequest, require_json=False)
    assert isinstance(body, GenerateRequest)
    sp = body.sampling_params
    if sp.n != 1:
        raise RequestError("sampling_params.n other than 1 is not supported by the reference runtime")
    refuse_logprobs(body, ("return_logprob", "top_logprobs_num"))
    inp = GenerateInput(
        input_ids=tokenize_prompt(engine, body.text, body.input_ids),
        sampling=sampling(sp.max_new_tokens, sp.temperature, sp.top_p, sp.top_k, sp.min_p, sp.seed),
        stop=stops(sp.stop),
        stop_token_ids=list(sp.stop_token_ids or []),
        ignore_eos=sp.ignore_eos,
        min_new_tokens=sp.min_new_tokens,
        stream=body.stream,
        rid=body.rid,
    )
    if not body.stream:
        return JSONResponse(await run_to_end(engine, inp, request=request))

    async def events() -> AsyncIterator[bytes]:
        try:
            async for payload in stream_results(engine, inp, request):
                yield sse(payload)
        except RuntimeError as exc:
            yield sse({"error": {"message": str(exc)}})
        yield b"data: [DONE]\n\n"

    engine.validate(inp)
    return StreamingResponse(events(), media_type="text/event-stream")
