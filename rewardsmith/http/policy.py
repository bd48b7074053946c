"""When a failed HTTP request is tried again, and after how long: one rule for every client in rewardsmith.

A request fails in one of a few ways (:data:`FailureKind`); the policy says which of them, and which HTTP statuses,
are the server's fault and worth another try. The wait before try ``n + 1`` is ``backoff * 2**n`` capped at
``max_backoff``, shortened by up to ``jitter`` of itself (so many clients failing together do not return together),
and never shorter than the server's ``Retry-After`` — which is itself capped, so a server cannot park a client.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: ``connect``: refused or unresolvable; ``timeout``: no answer in time; ``dropped``: the connection broke
#: mid-request or mid-response; ``status``: an HTTP error status; ``malformed``: 2xx with a body that does not parse;
#: ``transport``: a request that cannot be sent at all (bad URL or scheme), never worth a retry.
FailureKind = Literal["connect", "timeout", "dropped", "status", "malformed", "transport"]

#: The default: the server is busy (408, 429) or failing (any 5xx); any other 4xx is the request's own fault.
RETRY_STATUSES: frozenset[int] = frozenset({408, 429})


class RetryPolicy(BaseModel):
    """Which failures are retried, how often and after how long (see the module docstring for the rule)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_retries: int = Field(2, ge=0, description="tries after the first")
    backoff: float = Field(0.5, ge=0, description="wait before the first retry, in seconds; doubles on each further")
    max_backoff: float = Field(20.0, ge=0, description="longest wait, Retry-After included")
    jitter: float = Field(0.0, ge=0, le=1, description="a wait is shortened by a random part of itself up to this")
    retry_statuses: frozenset[int] = Field(RETRY_STATUSES, description="HTTP statuses worth another try")
    retry_server_errors: bool = Field(True, description="every 5xx is worth another try too")
    retry_on: frozenset[FailureKind] = Field(
        frozenset({"connect", "timeout", "dropped", "malformed"}), description="failures without a status worth one"
    )
    honour_retry_after: bool = Field(True, description="wait at least a 429/503's Retry-After (up to max_backoff)")

    @property
    def attempts(self) -> int:
        return self.max_retries + 1

    def retryable(self, kind: FailureKind, status: int | None = None) -> bool:
        """Whether a failure of this kind (with this status, for ``status``) is worth another try."""
        if kind == "status":
            if status is None:
                return False
            return status in self.retry_statuses or (self.retry_server_errors and 500 <= status < 600)
        return kind in self.retry_on

    def delay(
        self, retry: int, retry_after: float | None = None, *, rand: Callable[[], float] = random.random
    ) -> float:
        """Seconds to wait before retry number ``retry + 1`` (``retry`` waits done so far)."""
        base = min(self.max_backoff, self.backoff * 2.0**retry)
        wait = base * (1.0 - self.jitter * rand())
        if retry_after is not None and self.honour_retry_after:
            wait = min(self.max_backoff, max(wait, retry_after))
        return wait


def parse_retry_after(value: str | None, *, now: Callable[[], float] = time.time) -> float | None:
    """A ``Retry-After`` header in seconds: delta-seconds or an HTTP date; ``None`` when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - now())
