"""SGLang's OpenAI-compatible ``/v1/completions`` and ``/v1/chat/completions`` (0.5.23
``entrypoints/openai/``; ``sglext.spec_tokens_details``: ``protocol.py:456-467``)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from specguard.runtime.errors import RequestError
from specguard.runtime.generate_input import GenerateInput
from specguard.runtime.server.common import (
    ChatCompletionRequest,
    CompletionRequest,
    ServerState,
    read_body,
    refuse_logprobs,
    run_to_end,
    sampling,
    server_state,
    sse,
    stops,
    stream_results,
)

router = APIRouter()
State = Annotated[ServerState, Depends(server_state)]


def spec_details(meta: dict[str, Any]) -> dict[str, Any] | None:
    if "spec_verify_ct" not in meta:
        return None
    return {
        "spec_accept_rate": meta["spec_accept_rate"],
        "spec_accept_length": meta["spec_accept_length"],
        "spec_cap_length": None,
        "spec_block_accept_length": None,
        "spec_num_correct_drafts": meta["spec_num_correct_drafts"],
        "spec_num_proposed_drafts": meta["spec_num_proposed_drafts"],
        "spec_verify_ct": meta["spec_verify_ct"],
        "spec_correct_drafts_histogram": meta["spec_correct_drafts_histogram"],
        "spec_cap_lens_histogram": None,
    }

def usage(meta: dict[str, Any]) -> dict[str, Any]:
    return {
        "prompt_tokens": meta["prompt_tokens"],
        "completion_tokens": meta["completion_tokens"],
        "total_tokens": meta["prompt_tokens"] + meta["completion_tokens"],
        "prompt_tokens_details": None,
        "reasoning_tokens": 0,
    }

async def openai_route(
    request: Request,
    state: ServerState,
    body: CompletionRequest | ChatCompletionRequest,
    prompt_ids: list[int],
    chat: bool,
) -> Response:
    """The answer to a completion or chat completion, whole or streamed (SGLang's OpenAI serving)."""
    engine = state.engine
    if body.n != 1:
        raise RequestError("n other than 1 is not supported by the reference runtime")
    refuse_logprobs(body, ("logprobs", "top_logprobs"))
    max_new = body.max_tokens if not chat else (body.max_completion_tokens or body.max_tokens)  # type: ignore[union-attr]
    if max_new is None:
        max_new = engine.context_length - len(prompt_ids)
    inp = GenerateInput(
        input_ids=prompt_ids,
        sampling=sampling(max_new, body.temperature, body.top_p, body.top_k, body.min_p, body.seed),
        stop=stops(body.stop),
        stop_token_ids=list(body.stop_token_ids or []),
        ignore_eos=body.ignore_eos,
        min_new_tokens=body.min_tokens,
        stream=body.stream,
    )
    created = int(time.time())
    model_name = body.model or state.served_name
    obj = "chat.completion" if chat else "text_completion"
    if not body.stream:
        result = await run_to_end(engine, inp, request=request)
        meta = result["meta_info"]
        finish = meta["finish_reason"] or {}
        matched = finish.get("matched") if finish.get("type") == "stop" else None
        choice: dict[str, Any] = {
            "index": 0,
            "logprobs": None,
            "finish_reason": finish.get("type"),
            "matched_stop": matched,
        }
        if chat:
            choice["message"] = {
                "role": "assistant",
                "content": result["text"],
                "reasoning_content": None,
                "tool_calls": None,
            }
        else:
            choice["text"] = result["text"]
        response: dict[str, Any] = {
            "id": meta["id"],
            "object": obj,
            "created": created,
            "model": model_name,
            "choices": [choice],
            "usage": usage(meta),
        }
        if body.return_spec_tokens_details:
            response["sglext"] = {"spec_tokens_details": spec_details(meta)}
        return JSONResponse(response)

    include_usage = bool((body.stream_options or {}).get("include_usage"))

    async def events() -> AsyncIterator[bytes]:
        sent = ""
        first = True
        rid = None
        try:
            async for payload in stream_results(engine, inp, request):
                meta = payload["meta_info"]
                rid = meta["id"]
                delta_text = payload["text"].removeprefix(sent)
                sent = payload["text"]
                finish = meta["finish_reason"]
                if chat:
                    delta: dict[str, Any] = {"content": delta_text}
                    if first:
                        delta["role"] = "assistant"
                    choice = {
                        "index": 0,
                        "delta": delta,
                        "logprobs": None,
                        "finish_reason": finish and finish["type"],
                    }
                else:
                    choice = {
                        "index": 0,
                        "text": delta_text,
                        "logprobs": None,
                        "finish_reason": finish and finish["type"],
                    }
                if finish and finish.get("type") == "stop":
                    choice["matched_stop"] = finish.get("matched")
                first = False
                chunk: dict[str, Any] = {
                    "id": rid,
                    "object": "chat.completion.chunk" if chat else "text_completion",
                    "created": created,
                    "model": model_name,
                    "choices": [choice],
                }
                if finish and body.return_spec_tokens_details:
                    chunk["sglext"] = {"spec_tokens_details": spec_details(meta)}
                yield sse(chunk)
                if finish and include_usage:
                    yield sse(
                        {
                            "id": rid,
                            "object": chunk["object"],
                            "created": created,
                            "model": model_name,
                            "choices": [],
                            "usage": usage(meta),
                        }
                    )
        except RuntimeError as exc:
            yield sse(
                {
                    "object": "error",
                    "message": str(exc),
                    "type": "Internal Server Error",
                    "param": None,
                    "code": 500,
                }
            )
        yield b"data: [DONE]\n\n"

    engine.validate(inp)
    return StreamingResponse(events(), media_type="text/event-stream")

@router.post("/v1/completions")
async def completions(request: Request, state: State) -> Response:
    engine = state.engine
    body = await read_body(request, CompletionRequest, require_json=True)
    assert isinstance(body, CompletionRequest)
    prompt = body.prompt
    if isinstance(prompt, list) and prompt and isinstance(prompt[0], (str, list)):
        if len(prompt) != 1:
            raise RequestError(
                "a list of several prompts is not supported by the reference runtime; send one prompt"
            )
        prompt = prompt[0]
    if isinstance(prompt, str):
        ids = engine.tokenizer.encode(prompt)
    else:
        ids = [int(t) for t in prompt]  # type: ignore[union-attr, arg-type]
    return await openai_route(request, state, body, ids, chat=False)

@router.post("/v1/chat/completions")
async def chat_completions(request: Request, state: State) -> Response:
    engine = state.engine
    body = await read_body(request, ChatCompletionRequest, require_json=True)
    assert isinstance(body, ChatCompletionRequest)
    if not body.messages:
        raise RequestError("messages must not be empty")
    messages = []
    for m in body.messages:
        content = m.content
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if part.get("type") == "text")
        messages.append({"role": m.role, "content": content or ""})
    text = engine.tokenizer.apply_chat_template(messages)
    return await openai_route(request, state, body, engine.tokenizer.encode(text), chat=True)
