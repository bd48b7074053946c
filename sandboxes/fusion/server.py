"""A SandboxFusion-compatible HTTP server on top of any sandbox backend.

``POST /run_code`` takes SandboxFusion's request and answers its response, so existing SandboxFusion clients (and
:class:`~rewardsmith.sandboxes.fusion.client.RemoteSandbox`) can use a host running ``rewardsmith sandbox serve``.
``GET /v1/ping`` answers ``pong``. It binds 127.0.0.1 unless told otherwise: it runs arbitrary code for whoever
can reach it, so expose it only on a network you trust.
"""

from __future__ import annotations

import json
import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rewardsmith.sandboxes.base import Limits, RunResult, RunStatus, SandboxBackend
from rewardsmith.sandboxes.fusion.wire import (
    LANGUAGES,
    RunCodeRequest,
    RunCodeResponse,
    check_relative_path,
    decode_files,
    program_request,
    response_from_run_result,
)

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 << 20


class ServerPolicy(BaseModel):
    """What one request may ask of this host: limits beyond these ceilings are clamped, not refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_limits: Limits = Field(default_factory=Limits, description="limits a request does not set")
    max_run_timeout_s: float = Field(60.0, gt=0)
    max_compile_timeout_s: float = Field(60.0, gt=0)
    max_memory_mb: int = Field(4096, gt=0)


def limits_for(request: RunCodeRequest, policy: ServerPolicy) -> Limits:
    """The backend limits a SandboxFusion request asks for; ``memory_limit_MB <= 0`` keeps the server default."""
    run_timeout = min(request.run_timeout, policy.max_run_timeout_s)
    memory_mb = request.memory_limit_MB if request.memory_limit_MB > 0 else policy.base_limits.memory_mb
    update = {"wall_time_s": run_timeout, "cpu_time_s": run_timeout, "memory_mb": min(memory_mb, policy.max_memory_mb)}
    return policy.base_limits.model_copy(update=update)


def execute(backend: SandboxBackend, request: RunCodeRequest, policy: ServerPolicy | None = None) -> RunCodeResponse:
    """Run one SandboxFusion request on ``backend``; never raises."""
    policy = policy or ServerPolicy()
    try:
        run_request = program_request(
            request.code,
            request.language,
            stdin=request.stdin or "",
            files=decode_files(request.files),
            limits=limits_for(request, policy),
            compile_timeout_s=min(request.compile_timeout, policy.max_compile_timeout_s),
            fetch_files=[check_relative_path(path) for path in request.fetch_files],
        )
        result = backend.run(run_request)
    except Exception as exc:  # a backend fault is the service's failure, reported as SandboxError
        logger.warning("sandbox backend failed: %s", exc)
        result = RunResult(status=RunStatus.SANDBOX_ERROR, message=f"{type(exc).__name__}: {exc}")
    return response_from_run_result(result, request.language)


class SandboxServer(ThreadingHTTPServer):
    """Threaded HTTP server holding the backend, the request policy and a cap on programs running at once."""

    daemon_threads = True

    def __init__(self, address, backend: SandboxBackend, concurrency: int = 4, policy: ServerPolicy | None = None):
        super().__init__(address, _Handler)
        self.backend = backend
        self.policy = policy or ServerPolicy()
        self.slots = threading.BoundedSemaphore(max(1, concurrency))


class _Handler(BaseHTTPRequestHandler):
    server: SandboxServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args) -> None:  # quiet by default; the logging module decides
        logger.debug("%s %s", self.address_string(), format % args)

    def _send_json(self, status: int, payload: dict) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path in ("/v1/ping", "/health"):
            body = b'"pong"'
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self._send_json(HTTPStatus.NOT_FOUND, {"detail": "Not Found"})

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/run_code":
            self._send_json(HTTPStatus.NOT_FOUND, {"detail": "Not Found"})
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY_BYTES:
            self.close_connection = True
            self._send_json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"detail": f"body must be 0..{MAX_BODY_BYTES} bytes"})
            return
        raw = self.rfile.read(length)
        try:
            request = RunCodeRequest.model_validate_json(raw)
            if request.language not in LANGUAGES:
                raise ValueError(f"unsupported language {request.language!r}; supported: {sorted(LANGUAGES)}")
            decode_files(request.files)
            for path in request.fetch_files:
                check_relative_path(path)
        except (ValidationError, ValueError) as exc:
            self._send_json(HTTPStatus.UNPROCESSABLE_ENTITY, {"detail": str(exc)})
            return
        with self.server.slots:
            response = execute(self.server.backend, request, self.server.policy)
        self._send_json(HTTPStatus.OK, response.model_dump(mode="json"))


def make_server(
    backend: SandboxBackend | None = None,
    host: str = "127.0.0.1",
    port: int = 8080,
    concurrency: int = 4,
    policy: ServerPolicy | None = None,
) -> SandboxServer:
    """A ready (bound, not yet serving) server; ``port=0`` picks a free port (see ``server.server_address``)."""
    if backend is None:
        from rewardsmith.sandboxes.local.backend import LocalSandbox

        backend = LocalSandbox()
    return SandboxServer((host, port), backend, concurrency=concurrency, policy=policy)
