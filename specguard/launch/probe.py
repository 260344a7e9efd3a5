"""Talk to a running server over SGLang 0.5.23's HTTP surface (stdlib only: the core stays light).

Endpoints (design/runtime-anchors.md section 1): ``/health_generate`` for readiness (a real
1-token generation, 503 while starting), ``/server_info`` (``/get_server_info`` before it),
``/v1/chat/completions`` and ``/v1/completions`` for the smoke request.
"""

from __future__ import annotations

import errno
import json
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Reply:
    status: int  # 0 when nothing answered (refused, reset, timed out)
    body: bytes = b""
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == 200

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))


class Client:
    def __init__(self, host: str, port: int, api_key: str | None = None) -> None:
        connect_host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
        if ":" in connect_host and not connect_host.startswith("["):
            connect_host = f"[{connect_host}]"
        self.base = f"http://{connect_host}:{port}"
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def get(self, path: str, timeout: float = 10.0) -> Reply:
        return self._send(urllib.request.Request(self.base + path, headers=self.headers), timeout)

    def post_json(self, path: str, payload: dict[str, Any], timeout: float = 120.0) -> Reply:
        request = urllib.request.Request(
            self.base + path,
            data=json.dumps(payload).encode("utf-8"),
            headers={**self.headers, "Content-Type": "application/json"},
            method="POST",
        )
        return self._send(request, timeout)

    def _send(self, request: urllib.request.Request, timeout: float) -> Reply:
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return Reply(response.status, response.read())
        except urllib.error.HTTPError as error:
            return Reply(error.code, error.read() or b"", str(error))
        except (urllib.error.URLError, OSError, TimeoutError) as error:
            return Reply(0, b"", str(getattr(error, "reason", error)))

    def server_info(self) -> tuple[str, dict[str, Any]] | None:
        """(route, body) from ``/server_info``, falling back to the deprecated ``/get_server_info``."""
        for route in ("/server_info", "/get_server_info"):
            reply = self.get(route, timeout=30.0)
            if reply.ok:
                try:
                    return route, reply.json()
                except ValueError:
                    return None
        return None


def bind_problem(host: str) -> str | None:
    """Why a server could not bind ``host`` on this machine (None: it can): a name that does not
    resolve (``no.such.host.invalid``, ``999.1.1.1``), or an address of another machine. Binds port
    0, so no port is taken and nothing else is probed."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except (OSError, UnicodeError, ValueError) as error:  # gaierror is an OSError; IDNA and NUL bytes raise the others
        return f"does not resolve ({getattr(error, 'strerror', None) or error})"
    with socket.socket(family, kind, proto) as sock:
        try:
            sock.bind(address)
        except OSError as error:
            return f"is not an address of this machine ({error.strerror or error})"
    return None


def port_is_free(host: str, port: int) -> bool:
    """Whether ``host:port`` can be bound now (the server's own bind would succeed)."""
    bind_host = "" if host in ("0.0.0.0", "::") else host
    family = socket.AF_INET6 if ":" in bind_host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((bind_host, port))
        except OSError as error:
            if error.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


SMOKE_PROMPT = "List 3 countries and their capitals."


@dataclass(frozen=True)
class Smoke:
    route: str
    ok: bool
    text: str = ""
    completion_tokens: int | None = None
    seconds: float = 0.0
    spec: dict[str, Any] | None = None  # sglext.spec_tokens_details, when the server gives it
    error: str | None = None


def smoke_request(client: Client, model: str, max_tokens: int = 48, timeout: float = 300.0) -> Smoke:
    """One greedy request, as SGLang's docs send it: chat first, plain completion if chat is refused."""
    attempts = (
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": SMOKE_PROMPT}]}),
        ("/v1/completions", {"prompt": "The capital city of France is"}),
    )
    last = Smoke(route=attempts[0][0], ok=False, error="not sent")
    for route, body in attempts:
        payload = {"model": model, "temperature": 0, "max_tokens": max_tokens, "return_spec_tokens_details": True, **body}
        began = time.monotonic()
        reply = client.post_json(route, payload, timeout=timeout)
        seconds = time.monotonic() - began
        if not reply.ok:
            detail = reply.error or ""
            if reply.body:
                detail = f"{detail}: {reply.body[:300].decode('utf-8', 'replace')}"
            last = Smoke(route=route, ok=False, seconds=seconds, error=f"HTTP {reply.status} {detail}".strip())
            if reply.status in (0, 500, 502, 503):
                return last  # the server itself is in trouble: trying another route says nothing more
            continue
        try:
            document = reply.json()
            choice = document["choices"][0]
            text = choice["message"]["content"] if "message" in choice else choice.get("text", "")
        except (ValueError, KeyError, IndexError, TypeError) as error:
            return Smoke(route=route, ok=False, seconds=seconds, error=f"unexpected reply ({error.__class__.__name__})")
        usage = document.get("usage") or {}
        spec = (document.get("sglext") or {}).get("spec_tokens_details")
        return Smoke(route, True, text or "", usage.get("completion_tokens"), seconds, spec)
    return last
