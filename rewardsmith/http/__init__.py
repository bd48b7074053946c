"""rewardsmith's one HTTP layer: httpx underneath, a retry policy and an endpoint pool above it.

- ``policy.py``: :class:`RetryPolicy` — which failures are retried, how often, after how long.
- ``endpoints.py``: :class:`EndpointPool` — several base URLs, which gets the next request, which rest.
- ``transport.py``: :class:`Transport` — the httpx clients, reused across requests (one per event loop for async).
- ``send.py``: one try of one request, its failure classified (:class:`HTTPFailure`).
- ``client.py``: the retry and failover loop (:func:`call`, :func:`acall`), :class:`HTTPClient` and one-off
  :func:`post_json` / :func:`get_json` and their async twins.

Every HTTP client in rewardsmith goes through it (the reward-model clients, the likelihood judge, the SandboxFusion
sandbox, the ``remote`` reward); the OpenAI-compatible judge client keeps the ``openai`` SDK as its transport and
takes its backoff and retryable statuses from :class:`RetryPolicy`.
"""

from rewardsmith.http.client import HTTPClient, acall, aget_json, apost_json, call, get_json, post_json
from rewardsmith.http.endpoints import EndpointHealth, EndpointPool
from rewardsmith.http.errors import HTTPFailure
from rewardsmith.http.policy import RETRY_STATUSES, FailureKind, RetryPolicy, parse_retry_after
from rewardsmith.http.send import asend_once, error_message, read_bytes, read_json, send_once
from rewardsmith.http.transport import Transport, shared_transport

__all__ = [
    "RETRY_STATUSES",
    "EndpointHealth",
    "EndpointPool",
    "FailureKind",
    "HTTPClient",
    "HTTPFailure",
    "RetryPolicy",
    "Transport",
    "acall",
    "aget_json",
    "apost_json",
    "asend_once",
    "call",
    "error_message",
    "get_json",
    "parse_retry_after",
    "post_json",
    "read_bytes",
    "read_json",
    "send_once",
    "shared_transport",
]
