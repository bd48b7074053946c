"""The one error an HTTP request raises when it fails for good: which endpoint, what status, what went wrong."""

from __future__ import annotations

from rewardsmith.http.policy import FailureKind


class HTTPFailure(Exception):
    """A request that got no usable answer.

    ``cause`` is the last failure in words (``HTTP 503: draining``, ``ConnectError: [Errno 111] ...``,
    ``JSONDecodeError: ...``); ``failures`` holds every try's ``"url: cause"`` in order, so a failover across
    endpoints can name them all. ``retryable`` says whether the policy would have tried again.
    """

    def __init__(
        self,
        url: str,
        kind: FailureKind,
        cause: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        retryable: bool = False,
        attempts: int = 1,
        failures: tuple[str, ...] = (),
    ) -> None:
        self.url = url
        self.kind: FailureKind = kind
        self.cause = cause
        self.status = status
        self.retry_after = retry_after
        self.retryable = retryable
        self.attempts = attempts
        self.failures = failures or (f"{url}: {cause}",)
        super().__init__(str(self))

    def __str__(self) -> str:
        tries = f" (gave up after {self.attempts} attempts)" if self.attempts > 1 else ""
        return f"{self.url}: {self.cause}{tries}"

    def __reduce__(self):  # keyword-only fields survive pickling (a worker process raising it to its parent)
        return _rebuild, (self.url, self.kind, self.cause, self.__dict__)


def _rebuild(url: str, kind: FailureKind, cause: str, state: dict) -> HTTPFailure:
    failure = HTTPFailure(url, kind, cause)
    failure.__dict__.update(state)
    return failure
