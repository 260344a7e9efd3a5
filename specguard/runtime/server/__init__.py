"""SGLang's HTTP surface (0.5.23) on FastAPI: the app, its guard and error handlers, and three
routers (:mod:`.info`: liveness, readiness, information, metrics; :mod:`.native`: ``/generate``;
:mod:`.openai`: the OpenAI-compatible routes), which reach the engine through
:func:`.common.server_state`."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

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
    app = FastAPI(title="specguard reference runtime", version=VERSION, docs_url=None, redoc_url=None)
    state.enable_metrics = enable_metrics
    app.state.server = state

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

    add_error_handlers(app)
    for router in (info.router, native.router, openai.router):
        app.include_router(router)
    return app


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
