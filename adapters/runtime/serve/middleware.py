"""The door of the server, as plain ASGI: count and time every request, then auth, drain and size checks.

Order matters: a request without the token is refused before its body is read; while draining, new scoring
requests get 503 (so clients fail over) while health and metrics still answer; a body over the limit is
refused with 413 from its ``Content-Length`` or, when streamed, as soon as it passes the limit. The checked
body is handed on, so the app never reads an unbounded stream.
"""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from rewardsmith.adapters.runtime.serve.service import RewardService

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Paths answered without a token (load balancers and the remote client probe them).
OPEN_PATHS = frozenset({"/healthz"})
#: Paths still answered while draining (the health check itself reports the drain with 503).
DRAIN_PATHS = frozenset({"/healthz", "/metrics", "/v1/rewards"})
KNOWN_ENDPOINTS = ("/v1/score", "/get_reward", "/healthz", "/v1/rewards", "/metrics")


def endpoint_label(path: str) -> str:
    """A bounded metrics label for a path (``/get_reward/math`` counts as ``/get_reward``)."""
    for known in KNOWN_ENDPOINTS:
        if path == known or path.startswith(known + "/"):
            return known
    return "other"


async def send_error(send: Send, status: int, message: str, headers: dict[str, str] | None = None) -> None:
    body = json.dumps({"error": message}).encode()
    raw_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw_headers += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})


class GuardMiddleware:
    def __init__(self, app: ASGIApp, service: RewardService) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        service, metrics = self.service, self.service.metrics
        endpoint = endpoint_label(scope["path"])
        status = [500]

        async def send_counted(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        started = time.perf_counter()
        service.http_in_flight += 1
        metrics.in_flight.inc()
        try:
            refusal = self._refusal(scope)
            if refusal is not None:
                why, code, message, headers = refusal
                metrics.rejected.labels(why).inc()
                await send_error(send_counted, code, message, headers)
                return
            body = await self._bounded_body(scope, receive)
            if body is None:
                metrics.rejected.labels("too_large").inc()
                limit = service.settings.max_body_bytes
                await send_error(send_counted, 413, f"request body exceeds {limit} bytes", {"connection": "close"})
                return
            await self.app(scope, _replay(body, receive), send_counted)
        finally:
            service.http_in_flight -= 1
            metrics.in_flight.dec()
            metrics.requests.labels(endpoint, str(status[0])).inc()
            metrics.latency.labels(endpoint).observe(time.perf_counter() - started)

    def _refusal(self, scope: Scope) -> tuple[str, int, str, dict[str, str]] | None:
        path = scope["path"]
        token = self.service.token
        if token is not None and path not in OPEN_PATHS:
            given = _bearer(scope)
            if given is None or not hmac.compare_digest(given.encode(), token.encode()):
                detail = "missing bearer token" if given is None else "wrong bearer token"
                return "unauthorized", 401, detail, {"www-authenticate": "Bearer"}
        if self.service.admission.draining and path not in DRAIN_PATHS:
            return "draining", 503, "server is draining (shutting down); use another server", {"connection": "close"}
        return None

    async def _bounded_body(self, scope: Scope, receive: Receive) -> bytes | None:
        """The whole body, or ``None`` once it passes the limit (declared or streamed)."""
        limit = self.service.settings.max_body_bytes
        for key, value in scope.get("headers", []):
            if key == b"content-length":
                try:
                    if int(value) > limit:
                        return None
                except ValueError:
                    pass
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


def _bearer(scope: Scope) -> str | None:
    for key, value in scope.get("headers", []):
        if key == b"authorization":
            scheme, _, credentials = value.decode("latin-1").partition(" ")
            return credentials.strip() if scheme.lower() == "bearer" else None
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields the checked body once, then defers to the real one (disconnect events)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
