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

    base_url: str = Field(
        description="service root, e.g. http://127.0.0.1:8080 (``/run_code`` is appended); several roots, "
        "comma-separated, share the load and stand in for each other"
    )
    concurrency: int = Field(8, gt=0, description="requests in flight at once from this client")
    retries: int = Field(3, ge=0, description="extra attempts after a connection error or a 5xx answer")
    backoff_s: float = Field(0.5, ge=0, description="first retry delay; doubles on each further retry")
    compile_timeout_s: float = Field(10.0, gt=0, description="compile limit sent for compiled languages")
    request_margin_s: float = Field(30.0, gt=0, description="HTTP timeout = run + compile limits + this margin")

    cooldown_s: float = Field(2.0, gt=0, description="a failing endpoint rests this long (doubling, up to 60 s)")

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        urls = [url.strip().rstrip("/") for url in value.split(",") if url.strip()]
        if not urls:
            raise ValueError("base_url names no endpoint")
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"base_url must start with http:// or https://, got {url!r}")
        return ",".join(urls)

    def config_urls(self) -> list[str]:
        return self.base_url.split(",")


class _Endpoints:
    """Round-robin over the endpoints that are up; one that fails rests (a passive health check) and the
    request moves on to the next, so one sandbox host failing costs retries, not scores."""

    def __init__(self, urls: list[str], cooldown_s: float) -> None:
        self.urls = urls
        self.cooldown_s = cooldown_s
        self._lock = threading.Lock()
        self._next = 0
        self._down_until = dict.fromkeys(urls, 0.0)
        self._failures = dict.fromkeys(urls, 0)

    def pick(self) -> tuple[str, float]:
        """The next endpoint that is up (or, when all rest, the one back soonest) and how long to wait for it."""
        with self._lock:
            now = time.monotonic()
            for offset in range(len(self.urls)):
                url = self.urls[(self._next + offset) % len(self.urls)]
                if self._down_until[url] <= now:
                    self._next = (self._next + offset + 1) % len(self.urls)
                    return url, 0.0
            url = min(self.urls, key=self._down_until.__getitem__)
            return url, self._down_until[url] - now

    def failed(self, url: str) -> None:
        with self._lock:
            self._failures[url] += 1
            rest = min(60.0, self.cooldown_s * 2 ** (self._failures[url] - 1))
            self._down_until[url] = time.monotonic() + rest

    def succeeded(self, url: str) -> None:
        with self._lock:
            self._failures[url] = 0
            self._down_until[url] = 0.0


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
        self.default_concurrency = self.config.concurrency
        self._slots = threading.BoundedSemaphore(self.config.concurrency)
        self._endpoints = _Endpoints(self.config.config_urls(), self.config.cooldown_s)

    def __getstate__(self) -> dict:
        return {"config": self.config}

    def __setstate__(self, state: dict) -> None:
        type(self).__init__(self, **state["config"].model_dump())

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
        """Each endpoint gets at least one try; a failure fails over to the next endpoint at once, and the
        exponential backoff applies only while every endpoint rests."""
        delay = self.config.backoff_s
        attempts = max(self.config.retries + 1, len(self._endpoints.urls))
        errors: list[str] = []
        for attempt in range(attempts):
            url, wait = self._endpoints.pick()
            if wait > 0:
                time.sleep(min(wait, delay))
                delay *= 2
            try:
                reply = self._post(url, body, timeout)
            except _Retryable as exc:
                self._endpoints.failed(url)
                errors.append(f"{url}: {exc}")
                logger.info("%s/run_code failed (attempt %d of %d): %s", url, attempt + 1, attempts, exc)
                continue
            self._endpoints.succeeded(url)
            return reply
        raise RuntimeError(f"{'; '.join(errors[-3:])} (after {attempts} attempts)")

    def _post(self, url: str, body: bytes, timeout: float) -> bytes:
        request = urllib.request.Request(
            f"{url}/run_code",
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
