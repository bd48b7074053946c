"""Client for a SandboxFusion ``/run_code`` service (SandboxFusion itself or ``rewardkit sandbox serve``).

Programs run on the remote host; this side only translates. A transport failure, an HTTP error or a
``SandboxError`` becomes ``RunStatus.SANDBOX_ERROR`` (the service failed, the program was not judged), so a reward
can tell an outage from a wrong answer. Connection errors and 5xx answers are retried with exponential backoff;
a semaphore bounds the requests in flight from this process, whatever mix of threads and asyncio calls them.
"""

from __future__ import annotations

import http.client
import json
import logging
import threading
import time
import urllib.error
import urllib.request

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rewardkit.sandboxes.base import BatchMixin, RunRequest, RunResult, RunStatus
from rewardkit.sandboxes.fusion.wire import (
    RunCodeResponse,
    UnsupportedRequest,
    fusion_request_for,
    run_result_from_response,
)

logger = logging.getLogger(__name__)


class RemoteConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(description="service root, e.g. http://127.0.0.1:8080 (``/run_code`` is appended)")
    max_concurrency: int = Field(8, gt=0, description="requests in flight at once from this client")
    retries: int = Field(3, ge=0, description="extra attempts after a connection error or a 5xx answer")
    backoff_s: float = Field(0.5, ge=0, description="first retry delay; doubles on each further retry")
    compile_timeout_s: float = Field(10.0, gt=0, description="compile limit sent for compiled languages")
    request_margin_s: float = Field(30.0, gt=0, description="HTTP timeout = run + compile limits + this margin")

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {value!r}")
        return value.rstrip("/")


class _Retryable(Exception):
    """A failure worth another attempt (connection trouble, 5xx)."""


class RemoteSandbox(BatchMixin):
    """Run programs on a SandboxFusion-compatible service.

    >>> sandbox = RemoteSandbox("http://127.0.0.1:8080")  # doctest: +SKIP
    >>> sandbox.run(RunRequest(argv=["python3", "main.py"], files={"main.py": "print(6 * 7)"})).stdout  # doctest: +SKIP
    b'42\\n'
    """

    name = "remote"

    def __init__(self, base_url: str, **options) -> None:
        self.config = RemoteConfig(base_url=base_url, **options)
        self.default_concurrency = self.config.max_concurrency
        self._slots = threading.BoundedSemaphore(self.config.max_concurrency)

    def __getstate__(self) -> dict:
        return {"config": self.config}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state["config"].model_dump())

    def __repr__(self) -> str:
        return f"RemoteSandbox({self.config.base_url!r})"

    def run(self, request: RunRequest) -> RunResult:
        try:
            payload = fusion_request_for(request, compile_timeout_s=self.config.compile_timeout_s)
        except UnsupportedRequest as exc:
            return RunResult(status=RunStatus.SANDBOX_ERROR, message=f"not expressible as SandboxFusion: {exc}")
        body = payload.model_dump_json().encode()
        timeout = payload.run_timeout + payload.compile_timeout + self.config.request_margin_s
        started = time.monotonic()
        try:
            with self._slots:
                raw = self._post_with_retries(body, timeout)
        except Exception as exc:  # every transport failure is the service's, never the program's
            return RunResult(
                status=RunStatus.SANDBOX_ERROR,
                wall_time_s=time.monotonic() - started,
                message=f"{self.config.base_url}/run_code unreachable or failing: {exc}",
            )
        try:
            return run_result_from_response(RunCodeResponse.model_validate_json(raw))
        except ValueError as exc:  # pydantic's ValidationError included
            return RunResult(status=RunStatus.SANDBOX_ERROR, message=f"malformed SandboxFusion response: {exc}")

    def _post_with_retries(self, body: bytes, timeout: float) -> bytes:
        delay = self.config.backoff_s
        for attempt in range(self.config.retries + 1):
            try:
                return self._post(body, timeout)
            except _Retryable as exc:
                if attempt == self.config.retries:
                    raise RuntimeError(f"{exc} (after {attempt + 1} attempts)") from None
                logger.info("retrying %s/run_code in %.2fs: %s", self.config.base_url, delay, exc)
                time.sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")

    def _post(self, body: bytes, timeout: float) -> bytes:
        request = urllib.request.Request(
            f"{self.config.base_url}/run_code",
            data=body,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as reply:
                return reply.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:500].decode("utf-8", "replace")
            if exc.code >= 500:
                raise _Retryable(f"HTTP {exc.code}: {detail}") from None
            raise RuntimeError(f"HTTP {exc.code}: {_detail(detail)}") from None
        except (urllib.error.URLError, ConnectionError, http.client.HTTPException, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):  # the service took far past the limits: another try would too
                raise RuntimeError(f"no answer within {timeout:.0f}s") from None
            raise _Retryable(f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}") from None


def _detail(text: str) -> str:
    try:
        return str(json.loads(text).get("detail", text))
    except (ValueError, AttributeError):
        return text
