"""One try of one request: send it, read the answer, and name any failure as an :class:`HTTPFailure`.

The retry loop (``client.py``) and callers with a loop of their own (the ``remote`` reward) both build on these,
so a failure is classified in one place: the kind (see ``policy.FailureKind``), the status, the server's own
error message and ``Retry-After``, and whether the policy retries it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import httpx

from rewardsmith.http.errors import HTTPFailure
from rewardsmith.http.policy import FailureKind, RetryPolicy, parse_retry_after
from rewardsmith.http.transport import Timeout

T = TypeVar("T")
Parse = Callable[[httpx.Response], T]


def read_json(response: httpx.Response) -> Any:
    """The decoded JSON body (a body that is not JSON raises ``ValueError``: a malformed answer)."""
    return json.loads(response.content)


def read_bytes(response: httpx.Response) -> bytes:
    return response.content


def error_message(response: httpx.Response, limit: int = 300) -> str:
    """The server's words for an error status: ``{"error": {"message"}}`` (OpenAI, vLLM), ``{"error": "..."}``,
    ``{"detail"}`` (FastAPI), else the start of the body."""
    try:
        body = response.json()
    except ValueError:
        body = None
    message: Any = None
    if isinstance(body, dict):
        error = body.get("error")
        message = error.get("message", error) if isinstance(error, dict) else error or body.get("detail")
    if not message:
        message = response.text.strip()
    return str(message)[:limit]


def _transport_failure(url: str, exc: Exception, policy: RetryPolicy) -> HTTPFailure:
    kind: FailureKind
    if isinstance(exc, httpx.TimeoutException):
        kind = "timeout"
    elif isinstance(exc, httpx.ConnectError):
        kind = "connect"
    elif isinstance(exc, (httpx.NetworkError, httpx.RemoteProtocolError)):
        kind = "dropped"
    else:
        kind = "transport"
    cause = f"{type(exc).__name__}: {exc}".rstrip(": ")
    return HTTPFailure(url, kind, cause, retryable=policy.retryable(kind))


def _answer(url: str, response: httpx.Response, parse: Parse[T], policy: RetryPolicy) -> T:
    status = response.status_code
    if not 200 <= status < 300:
        message = error_message(response)
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        cause = f"HTTP {status}: {message}" if message else f"HTTP {status}"
        raise HTTPFailure(
            url, "status", cause, status=status, retry_after=retry_after,
            retryable=policy.retryable("status", status),
        )  # fmt: skip
    try:
        return parse(response)
    except (ValueError, KeyError, TypeError) as exc:  # JSONDecodeError and pydantic's ValidationError included
        cause = f"{type(exc).__name__}: {exc}"
        raise HTTPFailure(url, "malformed", cause, status=status, retryable=policy.retryable("malformed")) from exc


def send_once(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    policy: RetryPolicy,
    parse: Parse[T],
    json_body: Any = None,
    content: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: Timeout | None = None,
) -> T:
    """One request; its parsed answer or :class:`HTTPFailure` (``retryable`` as the policy says)."""
    try:
        response = client.request(method, url, **_options(json_body, content, headers, timeout))
    except (httpx.TransportError, httpx.InvalidURL) as exc:
        raise _transport_failure(url, exc, policy) from exc
    return _answer(url, response, parse, policy)


async def asend_once(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    policy: RetryPolicy,
    parse: Parse[T],
    json_body: Any = None,
    content: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: Timeout | None = None,
) -> T:
    """:func:`send_once` on an async client."""
    try:
        response = await client.request(method, url, **_options(json_body, content, headers, timeout))
    except (httpx.TransportError, httpx.InvalidURL) as exc:
        raise _transport_failure(url, exc, policy) from exc
    return _answer(url, response, parse, policy)


def _options(
    json_body: Any, content: bytes | None, headers: Mapping[str, str] | None, timeout: Timeout | None
) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if json_body is not None:
        content = json.dumps(json_body).encode("utf-8")
    if content is not None:
        options["content"] = content
        headers = {"content-type": "application/json", **(headers or {})}
    if headers:
        options["headers"] = dict(headers)
    if timeout is not None:
        options["timeout"] = timeout
    return options
