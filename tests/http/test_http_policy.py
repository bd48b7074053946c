"""The retry rule every rewardsmith HTTP client follows: which failures are retried and how long a retry waits."""

from __future__ import annotations

import email.utils

import pytest
from pydantic import ValidationError

from rewardsmith.http import HTTPFailure, RetryPolicy, parse_retry_after

DEFAULT = RetryPolicy()
NO_429 = RetryPolicy(retry_statuses=frozenset(), retry_on=frozenset({"connect", "dropped"}))
LISTED = RetryPolicy(retry_statuses=frozenset({429, 503}), retry_server_errors=False)


@pytest.mark.parametrize(
    "policy, kind, status, retried",
    [
        (DEFAULT, "status", 408, True),
        (DEFAULT, "status", 429, True),
        (DEFAULT, "status", 500, True),
        (DEFAULT, "status", 503, True),
        (DEFAULT, "status", 599, True),
        (DEFAULT, "status", 400, False),
        (DEFAULT, "status", 404, False),
        (DEFAULT, "status", 413, False),
        (DEFAULT, "status", None, False),
        (DEFAULT, "connect", None, True),
        (DEFAULT, "timeout", None, True),
        (DEFAULT, "dropped", None, True),
        (DEFAULT, "malformed", None, True),
        (DEFAULT, "transport", None, False),
        (NO_429, "status", 429, False),
        (NO_429, "status", 502, True),
        (NO_429, "timeout", None, False),
        (NO_429, "malformed", None, False),
        (LISTED, "status", 503, True),
        (LISTED, "status", 501, False),
        (LISTED, "status", 429, True),
    ],
)
def test_which_failures_are_retried(policy, kind, status, retried):
    assert policy.retryable(kind, status) is retried


@pytest.mark.parametrize(
    "options, retry, retry_after, rand, expected",
    [
        ({"backoff": 0.5}, 0, None, 0.0, 0.5),
        ({"backoff": 0.5}, 1, None, 0.0, 1.0),
        ({"backoff": 0.5}, 3, None, 0.0, 4.0),
        ({"backoff": 0.5, "max_backoff": 3.0}, 5, None, 0.0, 3.0),  # capped
        ({"backoff": 1.0, "jitter": 0.5}, 0, None, 1.0, 0.5),  # jitter shortens by up to half
        ({"backoff": 1.0, "jitter": 0.5}, 0, None, 0.5, 0.75),
        ({"backoff": 0.1}, 0, 2.0, 0.0, 2.0),  # never shorter than Retry-After...
        ({"backoff": 0.1, "max_backoff": 1.5}, 0, 30.0, 0.0, 1.5),  # ...which is capped too
        ({"backoff": 4.0}, 0, 0.5, 0.0, 4.0),  # a short Retry-After does not shorten the backoff
        ({"backoff": 0.1, "honour_retry_after": False}, 0, 30.0, 0.0, 0.1),
        ({"backoff": 0.0}, 4, None, 0.0, 0.0),
    ],
)
def test_delay(options, retry, retry_after, rand, expected):
    assert RetryPolicy(**options).delay(retry, retry_after, rand=lambda: rand) == pytest.approx(expected)


def test_jittered_delays_stay_inside_their_band():
    policy = RetryPolicy(backoff=1.0, jitter=0.5)
    delays = [policy.delay(2) for _ in range(200)]
    assert all(2.0 <= d <= 4.0 for d in delays) and len(set(delays)) > 100


def test_attempts_and_validation():
    assert RetryPolicy(max_retries=0).attempts == 1 and RetryPolicy(max_retries=3).attempts == 4
    for bad in ({"max_retries": -1}, {"backoff": -0.1}, {"jitter": 1.5}, {"retry_on": {"sometimes"}}, {"x": 1}):
        with pytest.raises(ValidationError):
            RetryPolicy(**bad)


@pytest.mark.parametrize(
    "header, expected",
    [("5", 5.0), ("0.05", 0.05), (" 7 ", 7.0), ("-3", 0.0), ("soon", None), ("", None), (None, None)],
)
def test_retry_after_in_seconds(header, expected):
    assert parse_retry_after(header) == expected


def test_retry_after_as_an_http_date():
    now = 1_800_000_000.0
    header = email.utils.formatdate(now + 12, usegmt=True)
    assert parse_retry_after(header, now=lambda: now) == pytest.approx(12.0)
    assert parse_retry_after(email.utils.formatdate(now - 60, usegmt=True), now=lambda: now) == 0.0


def test_the_failure_names_endpoint_status_and_cause_and_pickles():
    import pickle

    failure = HTTPFailure(
        "http://h:1/x", "status", "HTTP 503: draining", status=503, retry_after=2.0, retryable=True, attempts=3,
        failures=("http://h:1/x: HTTP 503: draining",) * 3,
    )  # fmt: skip
    assert str(failure) == "http://h:1/x: HTTP 503: draining (gave up after 3 attempts)"
    copy = pickle.loads(pickle.dumps(failure))
    assert (copy.url, copy.kind, copy.status, copy.retry_after, copy.attempts, copy.failures, str(copy)) == (
        failure.url, failure.kind, 503, 2.0, 3, failure.failures, str(failure),
    )  # fmt: skip
    assert str(HTTPFailure("http://h:1", "connect", "ConnectError: refused")) == "http://h:1: ConnectError: refused"
