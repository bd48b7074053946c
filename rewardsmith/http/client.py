"""Requests with retries and failover: the policy decides whether to try again, the pool decides where.

The rule, the same for one URL and for several: each endpoint gets at least one try, so a request makes
``max(policy.attempts, len(pool))`` tries at most. A failure the policy retries rests its endpoint (see
``endpoints.py``) and the next try goes at once to another endpoint that is up; the policy's delay (``Retry-After``
honoured) is waited only when the next try goes to the endpoint that just failed or to one still resting — and
never longer than that endpoint's rest. A failure the policy does not retry ends the request at once.

>>> client = HTTPClient(["http://10.0.0.5:8000", "http://10.0.0.6:8000"], policy=RetryPolicy(max_retries=3))
>>> client.post_json("/v1/score", {"reward": "math"})  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import httpx

from rewardsmith.http.endpoints import EndpointPool
from rewardsmith.http.errors import HTTPFailure
from rewardsmith.http.policy import RetryPolicy
from rewardsmith.http.send import Parse, asend_once, read_json, send_once
from rewardsmith.http.transport import Timeout, Transport, shared_transport

T = TypeVar("T")
logger = logging.getLogger(__name__)


class _Tries:
    """The bookkeeping of one request's tries (shared by the sync and the async loop)."""

    def __init__(self, pool: EndpointPool, policy: RetryPolicy) -> None:
        self.pool, self.policy = pool, policy
        self.total = max(policy.attempts, len(pool))
        self.failures: list[str] = []
        self.last: str | None = None  # the endpoint of the last failed try
        self.retry_after: float | None = None
        self.waits = 0

    def next(self, attempt: int) -> tuple[str, float]:
        """The endpoint of this try and the seconds to wait before it."""
        url, resting = self.pool.pick()
        if attempt == 0 or self.last is None or (resting <= 0 and url != self.last):
            return url, 0.0
        wait = self.policy.delay(self.waits, self.retry_after)
        self.waits += 1
        return url, min(wait, resting) if resting > 0 else wait

    def failed(self, base: str, failure: HTTPFailure, attempt: int) -> HTTPFailure | None:
        """Record a failed try at endpoint ``base``; the error to raise when the request is over, else ``None``."""
        self.failures.append(f"{failure.url}: {failure.cause}")
        self.last, self.retry_after = base, failure.retry_after
        logger.info("%s failed (try %d of %d): %s", failure.url, attempt + 1, self.total, failure.cause)
        if failure.retryable:
            self.pool.failed(base, failure.retry_after if self.policy.honour_retry_after else None)
        if failure.retryable and attempt + 1 < self.total:
            return None
        failure.attempts, failure.failures = attempt + 1, tuple(self.failures)
        return failure


def call(
    send: Callable[[str], T], pool: EndpointPool, policy: RetryPolicy, *, sleep: Callable[[float], None] = time.sleep
) -> T:
    """Run ``send(url)`` (one try at one endpoint, raising :class:`HTTPFailure`) under the policy and the pool."""
    tries = _Tries(pool, policy)
    for attempt in range(tries.total):
        url, wait = tries.next(attempt)
        if wait > 0:
            sleep(wait)
        try:
            with pool.using(url):
                answer = send(url)
        except HTTPFailure as failure:
            final = tries.failed(url, failure, attempt)
            if final is not None:
                raise final from failure.__cause__
            continue
        pool.succeeded(url)
        return answer
    raise AssertionError("unreachable: the last try returns or raises")


async def acall(send: Callable[[str], Awaitable[T]], pool: EndpointPool, policy: RetryPolicy) -> T:
    """:func:`call` for a coroutine ``send``; waits with ``asyncio.sleep``."""
    tries = _Tries(pool, policy)
    for attempt in range(tries.total):
        url, wait = tries.next(attempt)
        if wait > 0:
            await asyncio.sleep(wait)
        try:
            with pool.using(url):
                answer = await send(url)
        except HTTPFailure as failure:
            final = tries.failed(url, failure, attempt)
            if final is not None:
                raise final from failure.__cause__
            continue
        pool.succeeded(url)
        return answer
    raise AssertionError("unreachable: the last try returns or raises")


class HTTPClient:
    """JSON over HTTP to one or more base URLs, with retries, failover and reused connections.

    ``endpoints``: a URL, several (round robin, a failing one rests 2 s doubling), or an :class:`EndpointPool`
    (to choose its cooldown and strategy). A path given to a request is appended to the chosen base URL.
    Picklable: a copy starts with fresh health and no connections.
    """

    def __init__(
        self,
        endpoints: str | Sequence[str] | EndpointPool,
        *,
        policy: RetryPolicy | None = None,
        timeout: Timeout = 60.0,
        headers: Mapping[str, str] | None = None,
        limits: httpx.Limits | None = None,
        transport: Transport | None = None,
    ) -> None:
        if not isinstance(endpoints, EndpointPool):  # one URL never rests: the policy's delay is its only wait
            single = isinstance(endpoints, str) or len(endpoints) == 1
            endpoints = EndpointPool(endpoints, cooldown_s=0.0) if single else EndpointPool(endpoints)
        self.pool = endpoints
        self.policy = policy or RetryPolicy()
        self.transport = transport or Transport(timeout=timeout, headers=headers, limits=limits)

    def __repr__(self) -> str:
        return f"HTTPClient({list(self.pool.urls)!r})"

    def request(
        self,
        method: str,
        path: str = "",
        *,
        json_body: Any = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: Timeout | None = None,
        parse: Parse[Any] = read_json,
    ) -> Any:
        def send(base: str) -> Any:
            return send_once(
                self.transport.client(), method, base + path, policy=self.policy, parse=parse,
                json_body=json_body, content=content, headers=headers, timeout=timeout,
            )  # fmt: skip

        return call(send, self.pool, self.policy)

    async def arequest(
        self,
        method: str,
        path: str = "",
        *,
        json_body: Any = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: Timeout | None = None,
        parse: Parse[Any] = read_json,
    ) -> Any:
        async def send(base: str) -> Any:
            return await asend_once(
                self.transport.aclient(), method, base + path, policy=self.policy, parse=parse,
                json_body=json_body, content=content, headers=headers, timeout=timeout,
            )  # fmt: skip

        return await acall(send, self.pool, self.policy)

    def post_json(self, path: str, body: Any, **options: Any) -> Any:
        return self.request("POST", path, json_body=body, **options)

    async def apost_json(self, path: str, body: Any, **options: Any) -> Any:
        return await self.arequest("POST", path, json_body=body, **options)

    def get_json(self, path: str = "", **options: Any) -> Any:
        return self.request("GET", path, **options)

    async def aget_json(self, path: str = "", **options: Any) -> Any:
        return await self.arequest("GET", path, **options)

    def close(self) -> None:
        self.transport.close()

    async def aclose(self) -> None:
        await self.transport.aclose()


# -- one-off requests over the process's shared transport ------------------------------------------------


def post_json(
    url: str, body: Any, *, policy: RetryPolicy | None = None, timeout: Timeout = 60.0, parse: Parse[Any] = read_json
) -> Any:
    """POST ``body`` as JSON to ``url`` and return the decoded answer; :class:`HTTPFailure` when it fails for good."""
    client = HTTPClient(url, policy=policy, transport=shared_transport())
    return client.post_json("", body, timeout=timeout, parse=parse)


async def apost_json(
    url: str, body: Any, *, policy: RetryPolicy | None = None, timeout: Timeout = 60.0, parse: Parse[Any] = read_json
) -> Any:
    client = HTTPClient(url, policy=policy, transport=shared_transport())
    return await client.apost_json("", body, timeout=timeout, parse=parse)


def get_json(
    url: str, *, policy: RetryPolicy | None = None, timeout: Timeout = 60.0, parse: Parse[Any] = read_json
) -> Any:
    client = HTTPClient(url, policy=policy, transport=shared_transport())
    return client.get_json("", timeout=timeout, parse=parse)


async def aget_json(
    url: str, *, policy: RetryPolicy | None = None, timeout: Timeout = 60.0, parse: Parse[Any] = read_json
) -> Any:
    client = HTTPClient(url, policy=policy, transport=shared_transport())
    return await client.aget_json("", timeout=timeout, parse=parse)
