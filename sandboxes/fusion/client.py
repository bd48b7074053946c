"""Client for a SandboxFusion ``/run_code`` service (SandboxFusion itself or ``rewardsmith sandbox serve``).

Programs run on the remote host; this side only translates. A transport failure, an HTTP error or a
``SandboxError`` becomes ``RunStatus.SANDBOX_ERROR`` (the service failed, the program was not judged), so a reward
can tell an outage from a wrong answer. Connection errors and 5xx answers are retried with exponential backoff
(``rewardsmith.http``, which also fails over between several endpoints); a semaphore bounds the requests in flight
from this process, whatever mix of threads and asyncio calls them.
"""

from __future__ import annotations

import logging
import threading
import time

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rewardsmith import http
from rewardsmith.sandboxes.base import BatchMixin, Guarantees, RunRequest, RunResult, RunStatus
from rewardsmith.sandboxes.fusion.wire import (
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
        # One host failing costs retries, not scores: a failing endpoint rests and the request moves on to the next.
        pool = http.EndpointPool(self.config.config_urls(), cooldown_s=self.config.cooldown_s, max_cooldown_s=60.0)
        self._http = http.HTTPClient(pool, policy=fusion_policy(self.config))

    def __getstate__(self) -> dict:
        return {"config": self.config}

    def __setstate__(self, state: dict) -> None:
        type(self).__init__(self, **state["config"].model_dump())

    def __repr__(self) -> str:
        return f"RemoteSandbox({self.config.base_url!r})"

    def describe(self) -> Guarantees:
        """The service isolates; of a request's limits the SandboxFusion API carries only the run timeout and the
        memory limit (the service's own policy sets the rest), and it can express no network access."""
        return Guarantees(
            isolation="strong",
            enforces=frozenset({"wall_time_s", "memory_mb", "network"}),
            where=f"the SandboxFusion service at {self.config.base_url}",
        )

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
        exponential backoff applies only while every endpoint rests (``rewardsmith.http``'s rule)."""
        try:
            return self._http.request(
                "POST", "/run_code", content=body, headers={"Accept": "application/json"}, timeout=timeout,
                parse=http.read_bytes,
            )  # fmt: skip
        except http.HTTPFailure as failure:
            if failure.retryable:  # every try failed in a way worth another
                raise RuntimeError(f"{'; '.join(failure.failures[-3:])} (after {failure.attempts} attempts)") from None
            if failure.kind == "timeout":  # the service took far past the limits: another try would too
                raise RuntimeError(f"no answer within {timeout:.0f}s") from None
            raise RuntimeError(failure.cause) from None


def fusion_policy(config: RemoteConfig) -> http.RetryPolicy:
    """Refused or dropped connections and 5xx answers are retried; a 4xx or a timeout (a run far past its
    limits) is not, and ``Retry-After`` is not read (a SandboxFusion service does not send it)."""
    return http.RetryPolicy(
        max_retries=config.retries, backoff=config.backoff_s, max_backoff=60.0, retry_statuses=frozenset(),
        retry_on=frozenset({"connect", "dropped"}), honour_retry_after=False,
    )  # fmt: skip
