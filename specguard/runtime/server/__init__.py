"""SGLang's HTTP surface (0.5.23) on FastAPI: the app, its guard and error handlers, and three
routers (:mod:`.info`: liveness, readiness, information, metrics; :mod:`.native`: ``/generate``;
:mod:`.openai`: the OpenAI-compatible routes), which reach the engine through
:func:`.common.server_state`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from specguard.runtime.errors import RequestError
from specguard.runtime.server import info, native, openai
from specguard.runtime.server.common import (
    MAX_REQUEST_BYTES,
    VERSION,
    ClientDisconnected,
    PayloadTooLarge,
    ServerState,
    error_response,
)

__all__ = ["ServerState", "build_app"]


def build_app(state: ServerState, api_key: str | None, enable_metrics: bool) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state.engine.attach()  # read the scheduler's pipe on this loop from the start: its death is seen at once
        yield
        # Every answer is out: stop the scheduler now, before uvicorn re-raises the stop signal
        # it caught (SIGTERM would end this process with the scheduler still running).
        state.engine.stop()

    app = FastAPI(
        title="specguard reference runtime", version=VERSION, docs_url=None, redoc_url=None, lifespan=lifespan
    )
    state.enable_metrics = enable_metrics
    app.state.server = state
    app.add_middleware(Guard, api_key=api_key)
    add_error_handlers(app)
    for router in (info.router, native.router, openai.router):
        app.include_router(router)
    return app


class Guard:
    """The API key and the declared body size, checked before a route runs. Plain ASGI, not
    ``@app.middleware("http")``: Starlette's BaseHTTPMiddleware runs every request through a task
    and a memory stream of its own, Python work that shares the GIL with the scheduler thread."""

    def __init__(self, app: ASGIApp, api_key: str | None) -> None:
        self.app = app
        self.authorization = f"Bearer {api_key}".encode() if api_key else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> Response | None:
        headers = dict(scope["headers"])
        if (
            self.authorization is not None
            and scope["method"] != "OPTIONS"
            and not scope["path"].startswith(("/health", "/metrics"))
            and headers.get(b"authorization") != self.authorization
        ):
            return JSONResponse({"error": "Unauthorized"}, status_code=401)
        length = headers.get(b"content-length", b"").decode("latin-1")
        if length.isdigit() and int(length) > MAX_REQUEST_BYTES:
            return error_response(
                f"request body of {length} bytes exceeds the limit of {MAX_REQUEST_BYTES} bytes",
                413,
                "Payload Too Large",
            )
        return None


def add_error_handlers(app: FastAPI) -> None:
    """Every failure a route can raise, as SGLang answers it (JSON errors; 499 for a gone client)."""

    @app.exception_handler(RequestValidationError)
    async def on_validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(str(exc.errors()))

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
