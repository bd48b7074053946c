"""The HTTP layer against a real server on 127.0.0.1 that fails for real: statuses, Retry-After, a connection cut
mid-response, an answer past the timeout, a body that is not JSON, an endpoint down and back. Every test asserts
how many requests each endpoint actually received."""

from __future__ import annotations

import asyncio
import time

import pytest

from rewardsmith.http import EndpointPool, HTTPClient, HTTPFailure, RetryPolicy, apost_json, get_json, post_json
from tests.support.scripted_http import ScriptedEndpoint

FAST = RetryPolicy(max_retries=2, backoff=0.01, max_backoff=0.5)


@pytest.fixture
def endpoint():
    with ScriptedEndpoint() as server:
        yield server


@pytest.fixture
def second():
    with ScriptedEndpoint() as server:
        yield server


def test_503_then_200_is_one_answer_after_one_retry(endpoint):
    endpoint.push("503")
    answer = post_json(endpoint.url + "/score", {"x": 1}, policy=FAST, timeout=5)
    assert answer == {"ok": True, "n": 2, "echo": {"x": 1}}
    assert endpoint.count == 2 and [r["path"] for r in endpoint.received] == ["/score", "/score"]


def test_a_failure_that_stays_names_endpoint_status_and_cause_after_every_try(endpoint):
    endpoint.push("503", "503", "503", "503")
    with pytest.raises(HTTPFailure) as caught:
        post_json(endpoint.url + "/score", {}, policy=FAST, timeout=5)
    failure = caught.value
    assert (failure.kind, failure.status, failure.attempts, failure.retryable) == ("status", 503, 3, True)
    assert str(failure) == f"{endpoint.url}/score: HTTP 503: scripted 503 (gave up after 3 attempts)"
    assert endpoint.count == 3  # max_retries=2: three requests, not four


def test_a_request_fault_is_not_retried(endpoint):
    endpoint.push("400")
    with pytest.raises(HTTPFailure) as caught:
        post_json(endpoint.url, {}, policy=FAST, timeout=5)
    assert (caught.value.status, caught.value.retryable, caught.value.attempts) == (400, False, 1)
    assert caught.value.cause == "HTTP 400: scripted 400" and endpoint.count == 1


def test_429_waits_for_retry_after_and_a_long_one_is_capped(endpoint):
    endpoint.push("429:0.4")
    started = time.monotonic()
    assert post_json(endpoint.url, {}, policy=FAST, timeout=5)["n"] == 2
    assert 0.4 <= time.monotonic() - started < 2.0 and endpoint.count == 2

    endpoint.push("429:3600")  # an hour: capped at max_backoff (0.5 s)
    started = time.monotonic()
    assert post_json(endpoint.url, {}, policy=FAST, timeout=5)["n"] == 4
    assert 0.5 <= time.monotonic() - started < 2.0 and endpoint.count == 4


def test_a_connection_dropped_mid_response_is_retried_unless_the_policy_says_not(endpoint):
    endpoint.push("drop")
    assert post_json(endpoint.url, {"y": 2}, policy=FAST, timeout=5)["echo"] == {"y": 2}
    assert endpoint.count == 2

    endpoint.push("drop")
    strict = FAST.model_copy(update={"retry_on": frozenset({"connect"})})
    with pytest.raises(HTTPFailure) as caught:
        post_json(endpoint.url, {}, policy=strict, timeout=5)
    assert caught.value.kind == "dropped" and "RemoteProtocolError" in caught.value.cause
    assert endpoint.count == 3


def test_an_answer_past_the_timeout_is_a_timeout_and_retried(endpoint):
    endpoint.push("slow:1.5", "slow:1.5")
    started = time.monotonic()
    with pytest.raises(HTTPFailure) as caught:
        post_json(endpoint.url, {}, policy=FAST.model_copy(update={"max_retries": 1}), timeout=0.3)
    assert caught.value.kind == "timeout" and caught.value.attempts == 2 and "ReadTimeout" in caught.value.cause
    assert time.monotonic() - started < 1.4  # two tries of 0.3 s, not the server's 1.5 s
    assert endpoint.count == 2

    endpoint.push("slow:0.1")  # within the timeout: an answer
    assert post_json(endpoint.url, {}, policy=FAST, timeout=5)["n"] == 3


def test_a_body_that_is_not_json_is_malformed(endpoint):
    endpoint.push("garbage", "garbage")
    with pytest.raises(HTTPFailure) as caught:
        post_json(endpoint.url, {}, policy=FAST.model_copy(update={"max_retries": 1}), timeout=5)
    assert caught.value.kind == "malformed" and caught.value.status == 200
    assert caught.value.cause.startswith("JSONDecodeError") and endpoint.count == 2

    endpoint.push("garbage")
    no_retry = FAST.model_copy(update={"retry_on": frozenset({"connect", "timeout"})})
    with pytest.raises(HTTPFailure):
        post_json(endpoint.url, {}, policy=no_retry, timeout=5)
    assert endpoint.count == 3


def test_one_of_two_endpoints_failing_fails_over_rests_and_recovers(endpoint, second):
    pool = EndpointPool([endpoint.url, second.url], cooldown_s=0.5)
    client = HTTPClient(pool, policy=RetryPolicy(max_retries=0, backoff=0.01), timeout=5)
    endpoint.push("503")
    answers = [client.post_json("/score", {"i": i})["echo"]["i"] for i in range(6)]
    assert answers == list(range(6))  # the 503 was answered by the other endpoint, with no retry budget spent
    assert (endpoint.count, second.count) == (1, 6)  # and the failing one rested for the rest of the batch
    assert not pool.is_up(endpoint.url) and pool.health()[endpoint.url].failures == 1

    time.sleep(0.6)  # the rest is over: it is asked again, answers, and shares the load
    for i in range(4):
        client.post_json("/score", {"i": i})
    assert (endpoint.count, second.count) == (3, 8)
    assert pool.health()[endpoint.url].failures == 0 and pool.health()[endpoint.url].confirmed


def test_an_endpoint_down_is_refused_once_then_left_until_it_is_back(endpoint, second):
    pool = EndpointPool([endpoint.url, second.url], cooldown_s=0.3)
    client = HTTPClient(pool, policy=RetryPolicy(max_retries=0, backoff=0.01), timeout=5)
    endpoint.down()
    for i in range(5):
        assert client.get_json(f"/{i}")["ok"]
    assert second.count == 5 and pool.health()[endpoint.url].failed == 1  # one refused connection, no more

    endpoint.up()
    time.sleep(0.35)
    for i in range(4):
        client.get_json(f"/{i}")
    assert (endpoint.count, second.count) == (2, 7) and [r["method"] for r in endpoint.received] == ["GET"] * 2


def test_every_endpoint_failing_gives_one_error_naming_them_all(endpoint, second):
    endpoint.push("500", "500")
    second.down()
    client = HTTPClient(
        EndpointPool([endpoint.url, second.url], cooldown_s=0.01), policy=RetryPolicy(max_retries=2, backoff=0.01)
    )
    with pytest.raises(HTTPFailure) as caught:
        client.post_json("/run", {})
    failure = caught.value
    assert failure.attempts == 3 and len(failure.failures) == 3
    assert any(second.url in f and "ConnectError" in f for f in failure.failures)
    assert any(endpoint.url in f and "HTTP 500" in f for f in failure.failures)
    assert endpoint.count == 2


def test_each_endpoint_gets_a_try_even_with_no_retries(endpoint, second):
    endpoint.push("503")
    pool = EndpointPool([endpoint.url, second.url], cooldown_s=5.0)
    assert HTTPClient(pool, policy=RetryPolicy(max_retries=0)).post_json("", {})["ok"]
    assert (endpoint.count, second.count) == (1, 1)


def test_connections_are_reused(endpoint):
    client = HTTPClient(endpoint.url, timeout=5)
    for _ in range(5):
        client.post_json("/score", {})
    assert endpoint.count == 5 and len({r["port"] for r in endpoint.received}) == 1
    for _ in range(3):
        get_json(endpoint.url, timeout=5)  # the process's shared transport reuses its connection too
    assert len({r["port"] for r in endpoint.received[5:]}) == 1
    client.close()


def test_async_requests_retry_and_fail_over_too(endpoint, second):
    endpoint.push("503")

    async def one_off() -> dict:
        return await apost_json(endpoint.url, {"z": 3}, policy=FAST, timeout=5)

    assert asyncio.run(one_off())["echo"] == {"z": 3} and endpoint.count == 2

    pool = EndpointPool([endpoint.url, second.url], cooldown_s=0.0)
    client = HTTPClient(pool, policy=FAST, timeout=5)

    async def many() -> list[int]:
        try:
            answers = await asyncio.gather(*(client.apost_json("/score", {"i": i}) for i in range(20)))
        finally:
            await client.aclose()
        return [a["echo"]["i"] for a in answers]

    assert asyncio.run(many()) == list(range(20))
    assert (endpoint.count - 2, second.count) == (10, 10)  # round robin over both


def test_async_timeout_and_malformed(endpoint):
    endpoint.push("slow:1.0", "garbage")
    client = HTTPClient(endpoint.url, policy=RetryPolicy(max_retries=0), timeout=0.3)

    async def run() -> list[str]:
        kinds = []
        for _ in range(2):
            try:
                await client.apost_json("", {})
            except HTTPFailure as failure:
                kinds.append(failure.kind)
        await client.aclose()
        return kinds

    assert asyncio.run(run()) == ["timeout", "malformed"] and endpoint.count == 2


def test_a_pickled_client_starts_fresh_and_works(endpoint):
    import pickle

    client = HTTPClient([endpoint.url], policy=FAST, timeout=5)
    client.post_json("", {})
    copy = pickle.loads(pickle.dumps(client))
    assert copy.policy == FAST and copy.pool.urls == (endpoint.url,)
    assert copy.pool.health()[endpoint.url].sent == 0
    assert copy.post_json("", {})["n"] == 2


def _child_posts(url: str, queue) -> None:
    try:
        queue.put(post_json(url, {"from": "child"}, policy=FAST, timeout=5)["echo"])
    except Exception as exc:  # reported to the parent, which fails the test with it
        queue.put(repr(exc))


def test_a_forked_child_opens_its_own_connection(endpoint):
    import multiprocessing

    assert post_json(endpoint.url, {"from": "parent"}, policy=FAST, timeout=5)["n"] == 1  # the parent's connection
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child_posts, args=(endpoint.url, queue))
    child.start()
    assert queue.get(timeout=30) == {"from": "child"}
    child.join(30)
    assert post_json(endpoint.url, {"from": "parent"}, policy=FAST, timeout=5)["n"] == 3  # still the parent's
    ports = [r["port"] for r in endpoint.received]
    assert ports[0] == ports[2] != ports[1]  # the child never wrote on the parent's socket
