"""The endpoint pool: which base URL gets the next request, which rest and for how long, under many threads."""

from __future__ import annotations

import asyncio
import pickle
import random
import threading
from collections import Counter

import pytest

from rewardsmith.http import EndpointPool

A, B, C, D = (f"http://10.0.0.{i}:8000" for i in range(1, 5))


class Clock:
    """The pool's clock, moved by hand so a cooldown is exact (the pool takes any monotonic clock)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_round_robin_takes_the_endpoints_in_turn_and_skips_the_resting():
    clock = Clock()
    pool = EndpointPool([A, B, C], cooldown_s=1.0, clock=clock)
    assert [pool.pick()[0] for _ in range(6)] == [A, B, C, A, B, C]
    pool.failed(B)
    assert [pool.pick() for _ in range(4)] == [(A, 0.0), (C, 0.0), (A, 0.0), (C, 0.0)]
    clock.now += 1.0  # B's rest is over: back in turn without a success first
    assert {pool.pick()[0] for _ in range(3)} == {A, B, C}


def test_a_failing_endpoint_rests_doubling_up_to_the_cap_and_a_success_ends_it():
    clock = Clock()
    pool = EndpointPool([A, B], cooldown_s=0.5, max_cooldown_s=3.0, clock=clock)
    assert [pool.failed(A) for _ in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert pool.failed(A, retry_after_s=1.25) == 1.25  # the server's own word wins...
    assert pool.failed(A, retry_after_s=600.0) == 3.0  # ...up to the cap
    health = pool.health()[A]
    assert (health.up, health.failures, health.failed, health.resting_s, health.confirmed) == (False, 7, 7, 3.0, False)
    pool.succeeded(A)
    health = pool.health()[A]
    assert (health.up, health.failures, health.failed, health.resting_s, health.confirmed) == (True, 0, 7, 0.0, True)
    assert pool.failed(A) == 0.5  # the doubling starts over


def test_when_every_endpoint_rests_the_one_back_soonest_is_named_with_its_wait():
    clock = Clock()
    pool = EndpointPool([A, B], cooldown_s=2.0, clock=clock)
    pool.failed(A)
    pool.failed(A)  # 4 s
    pool.failed(B)  # 2 s
    assert pool.pick() == (B, 2.0)
    clock.now += 1.5
    assert pool.pick() == (B, pytest.approx(0.5))
    assert not pool.is_up(A) and not pool.is_up(B)


def test_exclude_prefers_an_untried_endpoint_but_never_leaves_none():
    pool = EndpointPool([A, B, C], strategy="least_busy")
    assert pool.pick(exclude=[A])[0] == B
    assert pool.pick(exclude=[A, B])[0] == C
    assert pool.pick(exclude=[A, B, C]) == (A, 0.0)


def test_least_busy_counts_requests_in_flight():
    pool = EndpointPool([A, B, C], strategy="least_busy")
    with pool.using(A), pool.using(A), pool.using(B):
        assert pool.pick()[0] == C
        with pool.using(C), pool.using(C):
            assert pool.pick()[0] == B
        assert {url: h.in_flight for url, h in pool.health().items()} == {A: 2, B: 1, C: 0}
    assert pool.pick()[0] == A  # idle again: the first in order
    assert {url: h.sent for url, h in pool.health().items()} == {A: 2, B: 1, C: 2}


def test_a_pickled_pool_keeps_its_endpoints_and_starts_healthy():
    pool = EndpointPool([A, B], cooldown_s=5.0, strategy="least_busy")
    pool.failed(A)
    copy = pickle.loads(pickle.dumps(pool))
    assert copy.urls == (A, B) and copy.cooldown_s == 5.0 and copy.strategy == "least_busy"
    assert all(h.up and h.failures == 0 for h in copy.health().values())


@pytest.mark.parametrize("urls", [[], [A, A]])
def test_bad_endpoint_lists_are_refused(urls):
    with pytest.raises(ValueError):
        EndpointPool(urls)


def test_sixteen_threads_share_one_pool_without_losing_a_count():
    pool = EndpointPool([A, B, C, D], cooldown_s=0.0)
    picks: Counter[str] = Counter()
    lock = threading.Lock()
    start = threading.Barrier(16)

    def work(seed: int) -> None:
        rng = random.Random(seed)
        start.wait()
        for _ in range(500):
            url, _ = pool.pick()
            with lock:
                picks[url] += 1
            with pool.using(url):
                if rng.random() < 0.3:
                    pool.failed(url)  # no rest (cooldown 0): only the counts move
                else:
                    pool.succeeded(url)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    health = pool.health()
    # round robin under one lock: 8000 picks over 4 endpoints are exactly 2000 each
    assert picks == {A: 2000, B: 2000, C: 2000, D: 2000}
    assert {url: h.sent for url, h in health.items()} == {A: 2000, B: 2000, C: 2000, D: 2000}
    assert all(h.in_flight == 0 for h in health.values())
    assert 0.25 * 8000 < sum(h.failed for h in health.values()) < 0.35 * 8000


def test_asyncio_tasks_share_one_pool():
    pool = EndpointPool([A, B], strategy="least_busy")
    peak: Counter[str] = Counter()

    async def request() -> None:
        url, _ = pool.pick()
        with pool.using(url):
            peak[url] = max(peak[url], pool.health()[url].in_flight)
            await asyncio.sleep(0.01)
        pool.succeeded(url)

    async def main() -> None:
        await asyncio.gather(*(request() for _ in range(40)))

    asyncio.run(main())
    health = pool.health()
    assert health[A].sent == health[B].sent == 20  # least busy alternates while all 40 are in flight
    assert peak == {A: 20, B: 20} and all(h.in_flight == 0 and h.confirmed for h in health.values())


def test_a_client_of_several_urls_rests_a_failing_one_and_a_client_of_one_never_does():
    from rewardsmith.http import HTTPClient

    several, one = HTTPClient([A, B]).pool, HTTPClient(A).pool
    assert (several.cooldown_s, several.strategy, one.cooldown_s) == (2.0, "round_robin", 0.0)
    assert one.failed(A) == 0.0 and one.is_up(A)
