"""SGLang's HTTP surface (0.5.23) on FastAPI: native, OpenAI-compatible and observability routes."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import (
    JSONResponse,
    PlainTextResponse,
    Response,
    StreamingResponse,
)
from pydantic import BaseModel, ConfigDict, ValidationError

from specguard.runtime.engine import (
    PRIORITY_HEALTH,
    PRIORITY_REQUEST,
    Engine,
    GenerateInput,
)
from specguard.runtime.errors import RequestError
from specguard.runtime.speculative import SamplingParams

logger = logging.getLogger("specguard.runtime")


class ClientDisconnected(Exception):
    """The client of a non-streaming request closed its connection before the result."""

VERSION = "0.5.23"
MAX_REQUEST_BYTES = 1 << 20
HEALTH_CHECK_TIMEOUT_S = 20.0



def error_response(message: str, status: int = 400, err_type: str = "Bad Request") -> JSONResponse:
    return JSONResponse(
        {"object": "error", "message": message, "type": err_type, "param": None, "code": status}, status_code=status
    )


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class NativeSamplingParams(_Lenient):
    max_new_tokens: int = 128
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    min_p: float = 0.0
    stop: str | list[str] | None = None
    stop_token_ids: list[int] | None = None
    ignore_eos: bool = False
    min_new_tokens: int = 0
    n: int = 1
    seed: int | None = None


class GenerateRequest(_Lenient):
    text: str | None = None
    input_ids: list[int] | None = None
    sampling_params: NativeSamplingParams = NativeSamplingParams()
    stream: bool = False
    rid: str | None = None


class _OpenAISampling(_Lenient):
    """The sampling fields both OpenAI routes share."""

    model: str | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    min_p: float = 0.0
    n: int = 1
    stop: str | list[str] | None = None
    stop_token_ids: list[int] | None = None
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    seed: int | None = None
    ignore_eos: bool = False
    min_tokens: int = 0
    return_spec_tokens_details: bool = False


class CompletionRequest(_OpenAISampling):
    prompt: str | list[int] | list[str] | list[list[int]]
    max_tokens: int = 16


class ChatMessage(_Lenient):
    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatCompletionRequest(_OpenAISampling):
    messages: list[ChatMessage]
    max_tokens: int | None = None
    max_completion_tokens: int | None = None


class PayloadTooLarge(Exception):
    """A body over MAX_REQUEST_BYTES: answered 413 before more of it is read."""


async def read_bounded(request: Request) -> bytes:
    """The body, read chunk by chunk and refused (413) as soon as it passes the limit: a chunked
    upload has no Content-Length for the middleware to check."""
    chunks, total = [], 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > MAX_REQUEST_BYTES:
            raise PayloadTooLarge(f"request body exceeds the limit of {MAX_REQUEST_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _client_gone(request: Request) -> None:
    """Returns when the client closes its connection (the body has been read: all the server can
    still receive is the disconnect). Starlette's ``is_disconnected`` only peeks and misses it."""
    try:
        while (await request.receive())["type"] != "http.disconnect":
            pass
    except RuntimeError:  # a receive chain that cannot tell (unexpected message): never call it gone
        await asyncio.Event().wait()


def _no_constants(name: str) -> Any:
    raise RequestError(f"request body is not valid JSON: {name} is not a JSON number")


def parse_json_body(body: bytes) -> dict[str, Any]:
    """JSON as the OpenAI and SGLang routes take it; every malformed body is a 400, never a 500."""
    try:
        text = body.decode("utf-8") if body else "{}"
    except UnicodeDecodeError as exc:
        raise RequestError(f"request body is not UTF-8: byte {exc.start}") from None
    try:
        raw = json.loads(text, parse_constant=_no_constants)
    except RecursionError:
        raise RequestError("request body is nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, and integers past Python's 4300-digit limit
        raise RequestError(f"request body is not valid JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise RequestError("request body must be a JSON object")
    return raw


def _stops(stop: str | list[str] | None) -> list[str]:
    if stop is None:
        return []
    return [stop] if isinstance(stop, str) else list(stop)


def _sse(obj: Any) -> bytes:
    return f"data: {json.dumps(obj)}\n\n".encode()


class ServerState:
    def __init__(self, engine: Engine, info: dict[str, Any], model_info: dict[str, Any], launch_command: str) -> None:
        self.engine = engine
        self.info = info
        self.model_info = model_info
        self.launch_command = launch_command
        self.ready = False
        self.startup_time = time.time()


def build_app(state: ServerState, api_key: str | None, enable_metrics: bool) -> FastAPI:
    app = FastAPI(title="specguard reference runtime", version=VERSION, docs_url=None, redoc_url=None)
    engine = state.engine
    served_name = state.model_info["served_model_name"]

    @app.middleware("http")
    async def guard(request: Request, call_next):  # type: ignore[no-untyped-def]
        path = request.url.path
        if api_key and request.method != "OPTIONS" and not path.startswith(("/health", "/metrics")):
            if request.headers.get("Authorization") != f"Bearer {api_key}":
                return JSONResponse({"error": "Unauthorized"}, status_code=401)
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_REQUEST_BYTES:
            return error_response(
                f"request body of {length} bytes exceeds the limit of {MAX_REQUEST_BYTES} bytes",
                413,
                "Payload Too Large",
            )
        return await call_next(request)

    @app.exception_handler(RequestValidationError)
    async def on_validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(str(exc.errors()))

    async def read_body(request: Request, model: type[BaseModel], require_json: bool) -> BaseModel:
        content_type = request.headers.get("content-type", "")
        if require_json and "application/json" not in content_type:
            raise RequestError("Unsupported Media Type: Only 'application/json' is allowed")
        raw = parse_json_body(await read_bounded(request))
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            raise RequestError(f"{where}: {first['msg']}") from None

    async def run_to_end(
        inp: GenerateInput, priority: int = PRIORITY_REQUEST, request: Request | None = None
    ) -> dict[str, Any]:
        """The final result; with ``request``, the engine stops generating once its client has gone
        (a non-streaming client that closes its socket would otherwise hold a row to the end)."""
        req = engine.submit(inp, priority)
        watcher = asyncio.ensure_future(_client_gone(request)) if request is not None else None
        try:
            while True:
                getter = asyncio.ensure_future(req.events.get())
                waiting = {getter} if watcher is None else {getter, watcher}
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()
                    logger.info("request %s abandoned by its client: cancelled", req.rid)
                    raise ClientDisconnected()
                kind, payload = getter.result()
                if kind == "error":
                    raise RuntimeError(payload)
                if kind == "done":
                    return payload  # type: ignore[no-any-return]
        finally:
            req.cancelled = True  # no-op once done; stops the work if the waiter gave up
            if watcher is not None:
                watcher.cancel()

    async def stream_results(inp: GenerateInput, request: Request) -> AsyncIterator[dict[str, Any]]:
        req = engine.submit(inp)
        try:
            while True:
                kind, payload = await req.events.get()
                if kind == "error":
                    raise RuntimeError(payload)
                yield payload
                if kind == "done":
                    return
        finally:
            req.cancelled = True

    def tokenize_prompt(text: str | None, input_ids: list[int] | None) -> list[int]:
        if input_ids is not None:
            return list(input_ids)
        if text is None:
            raise RequestError("either text or input_ids must be given")
        return engine.tokenizer.encode(text)

    def sampling(
        max_new: int, temperature: float, top_p: float, top_k: int, min_p: float, seed: int | None
    ) -> SamplingParams:
        return SamplingParams(
            max_new_tokens=max_new, temperature=temperature, top_p=top_p, top_k=top_k, min_p=min_p, seed=seed
        )

    @app.exception_handler(RequestError)
    async def on_request_error(request: Request, exc: RequestError) -> JSONResponse:
        return error_response(str(exc))

    @app.exception_handler(ClientDisconnected)
    async def on_client_disconnected(request: Request, exc: ClientDisconnected) -> Response:
        return Response(status_code=499)  # nginx's "client closed request": nobody reads it

    @app.exception_handler(PayloadTooLarge)
    async def on_too_large(request: Request, exc: PayloadTooLarge) -> JSONResponse:
        return error_response(str(exc), 413, "Payload Too Large")

    @app.exception_handler(RuntimeError)
    async def on_runtime_error(request: Request, exc: RuntimeError) -> JSONResponse:
        return error_response(str(exc), 500, "Internal Server Error")

    # ---- liveness, readiness, info -------------------------------------------------------

    @app.get("/ready")
    async def ready() -> Response:
        return Response(status_code=200 if state.ready else 503)

    @app.get("/health")
    async def health() -> Response:
        """Liveness, answered here at once: a queue of long requests must not make a busy
        server look dead (launch polls this while serving)."""
        return Response(status_code=200 if state.ready and engine.alive else 503)

    @app.get("/health_generate")
    async def health_generate() -> Response:
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
            await asyncio.wait_for(run_to_end(inp, PRIORITY_HEALTH), HEALTH_CHECK_TIMEOUT_S)
        except (TimeoutError, RuntimeError):
            logger.error(
                "Health check failed. Server couldn't get a response from detokenizer for last %d seconds.",
                int(HEALTH_CHECK_TIMEOUT_S),
            )
            return Response(status_code=503)
        return Response(status_code=200)

    @app.get("/model_info")
    async def model_info() -> dict[str, Any]:
        return state.model_info

    @app.get("/get_model_info")
    async def get_model_info() -> dict[str, Any]:
        logger.warning(
            "Endpoint '/get_model_info' is deprecated and will be removed in a future version. "
            "Please use '/model_info' instead."
        )
        return state.model_info

    def server_info() -> dict[str, Any]:
        internal = dict(state.info)
        internal.update(
            world_size=1,
            startup_time=state.startup_time,
            effective_max_running_requests_per_dp=engine.max_running_requests,
            last_gen_throughput=engine.last_gen_throughput,
            memory_usage={},
        )
        avg = engine.avg_spec_accept_length
        if avg is not None:
            internal["avg_spec_accept_length"] = avg
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

    @app.get("/server_info")
    async def get_server_info_current() -> dict[str, Any]:
        return server_info()

    @app.get("/get_server_info")
    async def get_server_info() -> dict[str, Any]:
        logger.warning(
            "Endpoint '/get_server_info' is deprecated and will be removed in a future version. "
            "Please use '/server_info' instead."
        )
        return server_info()

    @app.get("/v1/models")
    async def list_models() -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {
                    "id": served_name,
                    "object": "model",
                    "created": int(state.startup_time),
                    "owned_by": "sglang",
                    "root": served_name,
                    "max_model_len": engine.context_length,
                }
            ],
        }

    @app.get("/metrics")
    async def metrics() -> Response:
        if not enable_metrics:
            return Response(status_code=404)
        engine.metrics.num_queue_reqs = engine.num_queued
        return PlainTextResponse(engine.metrics.render(), media_type="text/plain; version=0.0.4")

    # ---- native /generate --------------------------------------------------------------

    @app.api_route("/generate", methods=["POST", "PUT"])
    async def generate(request: Request) -> Response:
        body = await read_body(request, GenerateRequest, require_json=False)
        assert isinstance(body, GenerateRequest)
        sp = body.sampling_params
        if sp.n != 1:
            raise RequestError("sampling_params.n other than 1 is not supported by the reference runtime")
        inp = GenerateInput(
            input_ids=tokenize_prompt(body.text, body.input_ids),
            sampling=sampling(sp.max_new_tokens, sp.temperature, sp.top_p, sp.top_k, sp.min_p, sp.seed),
            stop=_stops(sp.stop),
            stop_token_ids=list(sp.stop_token_ids or []),
            ignore_eos=sp.ignore_eos,
            min_new_tokens=sp.min_new_tokens,
            stream=body.stream,
            rid=body.rid,
        )
        if not body.stream:
            return JSONResponse(await run_to_end(inp, request=request))

        async def events() -> AsyncIterator[bytes]:
            try:
                async for payload in stream_results(inp, request):
                    yield _sse(payload)
            except RuntimeError as exc:
                yield _sse({"error": {"message": str(exc)}})
            yield b"data: [DONE]\n\n"

        engine.validate(inp)
        return StreamingResponse(events(), media_type="text/event-stream")

    # ---- OpenAI-compatible -------------------------------------------------------------

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
        request: Request, body: CompletionRequest | ChatCompletionRequest, prompt_ids: list[int], chat: bool
    ) -> Response:
        if body.n != 1:
            raise RequestError("n other than 1 is not supported by the reference runtime")
        max_new = body.max_tokens if not chat else (body.max_completion_tokens or body.max_tokens)  # type: ignore[union-attr]
        if max_new is None:
            max_new = engine.context_length - len(prompt_ids)
        inp = GenerateInput(
            input_ids=prompt_ids,
            sampling=sampling(max_new, body.temperature, body.top_p, body.top_k, body.min_p, body.seed),
            stop=_stops(body.stop),
            stop_token_ids=list(body.stop_token_ids or []),
            ignore_eos=body.ignore_eos,
            min_new_tokens=body.min_tokens,
            stream=body.stream,
        )
        created = int(time.time())
        model_name = body.model or served_name
        obj = "chat.completion" if chat else "text_completion"
        if not body.stream:
            result = await run_to_end(inp, request=request)
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
                async for payload in stream_results(inp, request):
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
                    yield _sse(chunk)
                    if finish and include_usage:
                        yield _sse(
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
                yield _sse(
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

    @app.post("/v1/completions")
    async def completions(request: Request) -> Response:
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
        return await openai_route(request, body, ids, chat=False)

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
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
        return await openai_route(request, body, engine.tokenizer.encode(text), chat=True)

    return app
