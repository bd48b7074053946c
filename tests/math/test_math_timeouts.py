"""Hard timeouts: a pathological answer costs at most ``timeout_s`` plus a small margin, in any thread or process."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import pickle
import threading
import time

import pytest

from rewardkit.hard_timeout import CallStatus, HardTimeoutPool
from rewardkit.rewards.math.reward import MathEquivalence
from tests.support.timing import deadline_bound, slack

TIMEOUT_S = 1.5
# A bare tower is settled by size on the fast path; one inside a sum reaches sympy, which evaluates it for minutes.
TOWER = r"The answer is \boxed{10^{10^{10}} - 1}"


def _timed(reward: MathEquivalence, completion: str, gold: str):
    start = time.monotonic()
    (result,) = reward.details([completion], solution=[gold])
    return result, time.monotonic() - start


@pytest.fixture(scope="module")
def reward():
    reward = MathEquivalence(workers=2, timeout_s=TIMEOUT_S)
    reward.pool.warm_up()
    yield reward
    reward.close()


def test_exponent_tower_times_out_on_the_main_thread(reward):
    result, elapsed = _timed(reward, TOWER, "5")
    assert result.score is None
    assert result.reason.endswith(f"timeout: symbolic comparison exceeded {TIMEOUT_S:g} s")
    assert elapsed < deadline_bound(TIMEOUT_S)


def test_exponent_tower_times_out_from_a_worker_thread(reward):
    box: list = []
    thread = threading.Thread(target=lambda: box.append(_timed(reward, TOWER, "7")))
    thread.start()
    thread.join(30)
    ((result, elapsed),) = box
    assert result.score is None and "timeout" in result.reason
    assert elapsed < deadline_bound(TIMEOUT_S)


def test_a_bare_tower_is_decided_without_evaluating_it(reward):
    result, elapsed = _timed(reward, r"\boxed{10^{10^{10}}}", "5")
    assert result.score == 0.0 and "not evaluated" in result.reason
    assert elapsed < slack(0.5)


def test_a_spare_worker_serves_the_call_right_after_a_kill(reward):
    reward.pool.warm_up()  # all workers and the spare ready, as in steady state
    _timed(reward, TOWER, "9")
    result, _ = _timed(reward, r"\boxed{(x-1)(x+1)}", "x^2-1")
    assert result.score == 1.0 and "sympy" in result.reason, result.reason


def _score_in_child(queue) -> None:
    reward = MathEquivalence(workers=1, timeout_s=TIMEOUT_S)
    reward.pool.warm_up()
    result, elapsed = _timed(reward, TOWER, "5")
    good, _ = _timed(reward, r"\boxed{x^2+2x+1}", "(x+1)^2")
    queue.put((result.score, result.reason, elapsed, good.score))
    reward.close()


@pytest.mark.parametrize("daemon", [False, True], ids=["spawned", "spawned-daemonic"])
def test_exponent_tower_times_out_inside_a_spawned_process(daemon):
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(target=_score_in_child, args=(queue,), daemon=daemon)
    child.start()
    try:
        score, reason, elapsed, good = queue.get(timeout=120)
    finally:
        child.join(30)
        if child.is_alive():
            child.kill()
    assert score is None and "timeout" in reason
    assert elapsed < deadline_bound(TIMEOUT_S)
    assert good == 1.0


def test_a_batch_of_pathological_answers_is_bounded(reward):
    completions = [rf"\boxed{{10^{{10^{{{10 + i}}}}} - 1}}" for i in range(4)] + [r"\boxed{4}"] * 4
    start = time.monotonic()
    scores = reward(completions, solution=["4"] * 8)
    elapsed = time.monotonic() - start
    assert scores == [None] * 4 + [1.0] * 4
    # 4 overruns on 2 workers: two rounds of the timeout, plus re-starting killed workers.
    assert elapsed < 2 * TIMEOUT_S + 4.0


def test_async_scoring_does_not_block_the_event_loop(reward):
    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        task = asyncio.create_task(ticker())
        results = await reward.adetails([r"\boxed{10^{10^{11}} - 1}"], solution=["3"])
        task.cancel()
        return results, ticks

    results, ticks = asyncio.run(main())
    assert results[0].score is None and "timeout" in results[0].reason
    assert ticks >= 10  # the loop kept running through the 1.5 s timeout


def test_timeouts_are_not_cached(reward):
    pair = (reward.gold_of("11")[1], r"10^{10^{10}} - 1")
    result, _ = _timed(reward, TOWER, "11")
    assert result.score is None and "exceeded" in result.reason
    assert reward._symbolic_cache.get(pair) is None  # a pair that overran under load gets another chance
    solved, _ = _timed(reward, r"\boxed{(x-1)(x+1)}", "x^2-1")
    assert solved.score == 1.0
    assert reward._symbolic_cache.get(("x^2-1", "(x-1)(x+1)")) is not None  # decided verdicts are cached


def test_timeout_score_scores_an_overrun_as_configured():
    strict = MathEquivalence(workers=1, timeout_s=TIMEOUT_S, timeout_score=0.0)
    try:
        strict.pool.warm_up()
        (result,) = strict.details([r"The answer is \boxed{10^{10^{10}} + 3}"], solution=["5"])
        assert result.score == 0.0
        assert "exceeded" in result.reason and "timeout_score=0" in result.reason
    finally:
        strict.close()


def test_no_ready_worker_is_unscorable_even_with_a_timeout_score():
    # A worker (python + sympy + math-verify) cannot start in 50 ms: the call finds none ready.
    cold = MathEquivalence(workers=1, timeout_s=0.05, timeout_score=0.0)
    try:
        start = time.monotonic()
        (result,) = cold.details([r"\boxed{(x-1)(x+1)}"], solution=["x^2-1"])
        assert time.monotonic() - start < deadline_bound(0.05)
        assert result.score is None and "no symbolic worker ready" in result.reason
    finally:
        cold.close()


# No allowance for worker start-up (1-2 s): the deadline includes it.
COLD_TIMEOUT_S = 2.0


def test_back_to_back_overruns_from_a_cold_pool_are_each_bounded():
    cold = MathEquivalence(workers=1, timeout_s=COLD_TIMEOUT_S)  # no warm_up: the first call starts the pool
    try:
        for gold in ("5", "6"):
            result, elapsed = _timed(cold, TOWER, gold)
            assert result.score is None and "timeout" in result.reason
            assert elapsed < deadline_bound(COLD_TIMEOUT_S), (elapsed, result.reason)
    finally:
        cold.close()


def test_reward_pickles_without_its_pool(reward):
    clone = pickle.loads(pickle.dumps(reward))
    assert clone.config == reward.config
    assert clone.pool._generation is None  # workers are never part of the pickled state
    assert clone([r"\boxed{7}"], solution=["7"]) == [1.0]


# -- the generic pool ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pool():
    pool = HardTimeoutPool(workers=2, timeout_s=1.0)
    pool.warm_up()
    yield pool
    pool.close()


def test_pool_returns_values_and_errors(pool):
    assert pool.call(pow, 2, 100).value == 2**100
    outcome = pool.call(divmod, 1, 0)
    assert outcome.status is CallStatus.ERROR and "ZeroDivisionError" in outcome.error


def test_pool_kills_an_overrunning_call_held_in_c(pool):
    start = time.monotonic()
    outcome = pool.call(pow, 10, 10**10)  # one C call holding the GIL: SIGALRM could not stop it
    assert outcome.status is CallStatus.TIMEOUT
    assert time.monotonic() - start < deadline_bound(1.0)
    assert pool.call(pow, 3, 3).value == 27


def test_pool_reports_a_dead_worker(pool):
    outcome = pool.call(os._exit, 3)
    assert outcome.status is CallStatus.CRASHED
    assert pool.call(abs, -4).value == 4


def test_pool_timeout_per_call_and_map_runs_in_parallel(pool):
    assert pool.call(time.sleep, 0.5, timeout_s=0.2).status is CallStatus.TIMEOUT
    pool.warm_up()  # the killed worker's replacement is ready: the timing below measures the map, not a start-up
    nap_s = 1.0
    start = time.monotonic()
    outcomes = pool.map(time.sleep, [(nap_s,), (nap_s,)], timeout_s=4 * nap_s)
    assert [o.status for o in outcomes] == [CallStatus.OK, CallStatus.OK]
    assert time.monotonic() - start < 1.75 * nap_s  # both workers slept at once: one after the other takes 2 naps


def test_pool_spare_takes_the_next_call_after_a_kill():
    pool = HardTimeoutPool(workers=1, timeout_s=1.0)
    try:
        pool.warm_up()
        assert pool.call(pow, 10, 10**10).status is CallStatus.TIMEOUT
        start = time.monotonic()
        assert pool.call(pow, 3, 3).value == 27  # served by the spare, not by a worker still starting
        assert time.monotonic() - start < slack(0.5)
        for _ in range(2):  # overruns back to back: each bounded, whether or not a replacement is up yet
            start = time.monotonic()
            assert pool.call(pow, 10, 10**10).status is CallStatus.TIMEOUT
            assert time.monotonic() - start < deadline_bound(1.0)
    finally:
        pool.close()


def test_pool_deadline_includes_waiting_for_a_worker():
    slow_start = HardTimeoutPool(workers=1, timeout_s=0.5, warm_call=(time.sleep, (3.0,)))
    try:
        start = time.monotonic()
        outcome = slow_start.call(abs, -1)
        assert time.monotonic() - start < deadline_bound(0.5)
        assert outcome.status is CallStatus.TIMEOUT and not outcome.started
        assert "no worker ready" in outcome.error
    finally:
        slow_start.close()


def test_pool_rejects_unpicklable_calls_without_raising(pool):
    outcome = pool.call(lambda: 1)
    assert outcome.status is CallStatus.ERROR and "cannot send" in outcome.error


def test_pool_memory_limit_stops_a_memory_bomb():
    pool = HardTimeoutPool(workers=1, timeout_s=5.0, memory_limit_mb=512)
    try:
        outcome = pool.call(bytearray, 2 * 1024**3)
        assert outcome.status is CallStatus.ERROR and "MemoryError" in outcome.error
    finally:
        pool.close()


def test_pool_config_is_validated():
    with pytest.raises(ValueError, match="timeout_s"):
        HardTimeoutPool(timeout_s=0)
    with pytest.raises(ValueError, match="workers"):
        HardTimeoutPool(workers=0)


def test_pool_whose_workers_cannot_start_reports_instead_of_hanging():
    pool = HardTimeoutPool(workers=1, timeout_s=30.0, warm_call=(os._exit, (1,)))
    try:
        outcome = pool.call(abs, -1)
        assert outcome.status is CallStatus.CRASHED and "could not start" in outcome.error
        assert pool.call(abs, -1).status is CallStatus.CRASHED  # the slot came back; no deadlock
    finally:
        pool.close()
