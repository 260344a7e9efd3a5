"""What the HTTP routers share: the server's state, request bodies and their limits, and the
way a request is handed to the engine and its results read back."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import Request
from fastapi.responses import (
    JSONResponse,
)
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.requests import ClientDisconnect

from specguard.runtime.errors import RequestError
from specguard.runtime.generate_input import (
    PRIORITY_REQUEST,
    GenerateInput,
    SamplingParams,
)
from specguard.runtime.scheduler_process import SchedulerClient
from specguard.sglang_facts.releases import NEWEST_KNOWN_SGLANG

logger = logging.getLogger("specguard.runtime")


class ClientDisconnected(Exception):
    """The client closed its connection before its answer: mid-body (an aborted upload), or
    before the result of a non-streaming request."""

VERSION = NEWEST_KNOWN_SGLANG
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
    try:
        async for chunk in request.stream():
            total += len(chunk)
            if total > MAX_REQUEST_BYTES:
                raise PayloadTooLarge(f"request body exceeds the limit of {MAX_REQUEST_BYTES} bytes")
            chunks.append(chunk)
    except ClientDisconnect:
        # An aborted upload (fewer bytes than its Content-Length, then a close): nobody is left to
        # answer, and it is no fault of the server's, so one line instead of an ASGI traceback.
        logger.info("%s %s: the client closed the connection after %d bytes of its body", request.method, request.url.path, total)
        raise ClientDisconnected() from None
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


def refuse_logprobs(body: BaseModel, fields: tuple[str, ...]) -> None:
    """The reference runtime computes no log probabilities: a request for them is refused (400)
    rather than answered without them, which a client would take for the runtime's answer."""
    extra = body.model_extra or {}
    asked = [name for name in fields if _asks(extra.get(name))]
    if asked:
        raise RequestError(f"{', '.join(asked)}: the reference runtime returns no log probabilities; drop {'them' if len(asked) > 1 else 'it'}")


def _asks(value: Any) -> bool:
    """A logprob field set to ask for them (SGLang's native fields also take one per prompt)."""
    if isinstance(value, list):
        return any(_asks(item) for item in value)
    return value not in (None, False, 0)


def stops(stop: str | list[str] | None) -> list[str]:
    if stop is None:
        return []
    return [stop] if isinstance(stop, str) else list(stop)


def sse(obj: Any) -> bytes:
    return f"data: {json.dumps(obj)}\n\n".encode()


class ServerState:
    def __init__(self, engine: SchedulerClient, info: dict[str, Any], model_info: dict[str, Any], launch_command: str) -> None:
        self.engine = engine
        self.info = info
        self.model_info = model_info
        self.launch_command = launch_command
        self.ready = False
        self.startup_time = time.time()
        self.enable_metrics = False  # set by build_app

    @property
    def served_name(self) -> str:
        return str(self.model_info["served_model_name"])


async def server_state(request: Request) -> ServerState:
    """The state of the app serving ``request`` (a route's dependency). A coroutine: FastAPI runs
    a plain function dependency in its thread pool, a thread hop per request that contends for
    the GIL with the scheduler thread."""
    return request.app.state.server  # type: ignore[no-any-return]


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
    engine: SchedulerClient,
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
        req.cancel()  # no-op once done; stops the work if the waiter gave up
        if watcher is not None:
            watcher.cancel()


async def stream_results(engine: SchedulerClient, inp: GenerateInput, request: Request) -> AsyncIterator[dict[str, Any]]:
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
        req.cancel()


def tokenize_prompt(engine: SchedulerClient, text: str | None, input_ids: list[int] | None) -> list[int]:
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
