"""Hard timeouts: a pathological answer costs at most ``timeout_s`` plus a small margin, in any thread or process."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import pickle
import threading
import time

import pytest

from rewardsmith.hard_timeout import CallStatus, HardTimeoutPool
from rewardsmith.rewards.math.reward import MathEquivalence
from tests.support.timing import deadline_bound, slack

TIMEOUT_S = 1.5
# A bare tower is settled by size on the fast path; one inside a sum reaches sympy, which evaluates it for minutes.
# Its gold is a plain number, so the overrun is the answer's own doing: 0.0, never an unscorable escape.
TOWER = r"The answer is \boxed{10^{10^{10}} - 1}"
BLAMED = "the answer's own size or cost is to blame"


def _timed(reward: MathEquivalence, completion: str, gold: str):
    start = time.monotonic()
    (result,) = reward.details([completion], solution=[gold])
    return result, time.monotonic() - start


def _timed_warm_up(pool: HardTimeoutPool) -> float:
    """Start every worker of ``pool`` and return what one start took (starts run ``parallel_starts`` at a time)."""
    start = time.monotonic()
    pool.warm_up()
    generation = pool._ensure_generation()
    rounds = -(-generation.target // generation.parallel_starts)
    return (time.monotonic() - start) / rounds


#: One worker start (python + sympy + math-verify + the warm call) as measured on this machine now.
WORKER_START_S: list[float] = []


@pytest.fixture(scope="module")
def reward():
    reward = MathEquivalence(workers=2, timeout_s=TIMEOUT_S)
    WORKER_START_S.append(_timed_warm_up(reward.pool))
    yield reward
    reward.close()


def test_exponent_tower_times_out_on_the_main_thread(reward):
    reward.pool.warm_up()  # the bound is the work's limit; a worker replacing one killed before is not timed
    result, elapsed = _timed(reward, TOWER, "5")
    assert result.score == 0.0
    assert f"symbolic comparison exceeded {TIMEOUT_S:g} s; the gold alone is read" in result.reason, result.reason
    assert BLAMED in result.reason
    assert elapsed < deadline_bound(TIMEOUT_S)


def test_exponent_tower_times_out_from_a_worker_thread(reward):
    reward.pool.warm_up()  # the previous test's kill may leave the pool's budget share restarting its one worker
    box: list = []
    thread = threading.Thread(target=lambda: box.append(_timed(reward, TOWER, "7")))
    thread.start()
    thread.join(30)
    ((result, elapsed),) = box
    assert result.score == 0.0 and "timeout" in result.reason and BLAMED in result.reason
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
    assert score == 0.0 and "timeout" in reason and BLAMED in reason
    assert elapsed < deadline_bound(TIMEOUT_S)
    assert good == 1.0


def test_a_batch_of_pathological_answers_is_bounded(reward):
    completions = [rf"\boxed{{10^{{10^{{{10 + i}}}}} - 1}}" for i in range(4)] + [r"\boxed{4}"] * 4
    start = time.monotonic()
    scores = reward(completions, solution=["4"] * 8)
    elapsed = time.monotonic() - start
    assert scores == [0.0] * 4 + [1.0] * 4
    # 4 overruns on as few as one worker (the host's worker budget gives this pool only its share of it when other
    # pools of the session are alive): four rounds of the timeout, plus waiting for each killed worker's replacement
    # (a call waits for a worker instead of giving up; the wait is not its timeout). Bounded, not hanging.
    assert elapsed < 4 * TIMEOUT_S + 4 * WORKER_START_S[0] + slack(1.0), (elapsed, WORKER_START_S)


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
    assert results[0].score == 0.0 and "timeout" in results[0].reason
    assert ticks >= 10  # the loop kept running through the 1.5 s timeout


def test_timeouts_are_not_cached(reward):
    pair = (reward.gold_of("11")[1], r"10^{10^{10}} - 1")
    result, _ = _timed(reward, TOWER, "11")
    assert result.score == 0.0 and "exceeded" in result.reason
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
    # A worker (python + sympy + math-verify) cannot start in 50 ms: the call finds none ready within the
    # start-up budget. The call never ran, so it is unscorable, not timeout_score; and it does not wait longer.
    cold = MathEquivalence(workers=1, timeout_s=5.0, startup_timeout_s=0.05, timeout_score=0.0)
    try:
        start = time.monotonic()
        (result,) = cold.details([r"\boxed{(x-1)(x+1)}"], solution=["x^2-1"])
        assert time.monotonic() - start < deadline_bound(0.05)
        assert result.score is None
        assert "no symbolic worker ready within startup_timeout_s=0.05 s" in result.reason, result.reason
    finally:
        cold.close()


# Shorter than a worker's start on a loaded machine (5-9 s): the contract used to count the start-up against
# the timeout, so a cold pool answered "timeout" for every call. Now the timeout bounds the work only and the
# start-up has its own budget; what this test keeps is the intent: from a cold pool, an overrun after an
# overrun is each bounded (by the start-up budget plus the timeout) and each is a real overrun, not a cold miss.
COLD_TIMEOUT_S = 2.0
COLD_STARTUP_S = 30.0


def test_back_to_back_overruns_from_a_cold_pool_are_each_bounded():
    cold = MathEquivalence(workers=1, timeout_s=COLD_TIMEOUT_S, startup_timeout_s=COLD_STARTUP_S)  # no warm_up
    try:
        for gold in ("5", "6"):
            result, elapsed = _timed(cold, TOWER, gold)
            assert result.score == 0.0
            assert f"symbolic comparison exceeded {COLD_TIMEOUT_S:g} s" in result.reason, result.reason
            assert elapsed < deadline_bound(COLD_STARTUP_S + COLD_TIMEOUT_S), (elapsed, result.reason)
    finally:
        cold.close()


def test_a_correct_answer_is_scored_when_the_start_up_is_slower_than_the_timeout():
    # timeout_s=2 is below a worker's start on a loaded machine (python + sympy + math-verify: 5-9 s), and
    # enough for the comparison's own work under that load: the first call waits for the start, then runs.
    # tests/core/test_cold_start.py checks the same under a start-up slowed on purpose, from 16 threads.
    cold = MathEquivalence(workers=1, timeout_s=2.0)
    try:
        result, _ = _timed(cold, r"\boxed{(x-1)(x+1)}", "x^2-1")
        assert result.score == 1.0 and "sympy" in result.reason, result.reason
    finally:
        cold.close()


def test_reward_pickles_without_its_pool(reward):
    data = pickle.dumps(reward)
    assert b"HardTimeoutPool" not in data and b"_Workers" not in data  # workers are never part of the pickled state
    clone = pickle.loads(data)
    assert clone.config == reward.config
    assert clone.pool is reward.pool  # in the same process, alike instances share the one pool
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


def test_pool_timeout_bounds_the_work_not_the_start_up():
    slow_start = HardTimeoutPool(workers=1, timeout_s=0.5, warm_call=(time.sleep, (2.0,)), spares=0)
    try:
        start = time.monotonic()
        outcome = slow_start.call(abs, -1)
        elapsed = time.monotonic() - start
        assert outcome.ok and outcome.value == 1, outcome
        assert elapsed > 2.0  # waited for the 2 s start, far past the 0.5 s timeout, and still ran the call
        assert elapsed < deadline_bound(slow_start.startup_timeout_s)
        assert slow_start.call(time.sleep, 5.0).status is CallStatus.TIMEOUT  # the work is still bounded
    finally:
        slow_start.close()


def test_pool_start_up_has_its_own_bounded_budget():
    never_ready = HardTimeoutPool(workers=1, timeout_s=5.0, warm_call=(time.sleep, (30.0,)), startup_timeout_s=1.0)
    try:
        start = time.monotonic()
        outcome = never_ready.call(abs, -1)
        assert time.monotonic() - start < deadline_bound(1.0)
        assert not outcome.started and outcome.status is not CallStatus.OK
        assert "startup_timeout_s=1" in outcome.error or "could not start" in outcome.error, outcome.error
    finally:
        never_ready.close()


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
    with pytest.raises(ValueError, match="startup_timeout_s"):
        HardTimeoutPool(startup_timeout_s=0)


def test_pool_whose_workers_cannot_start_reports_instead_of_hanging():
    pool = HardTimeoutPool(workers=1, timeout_s=30.0, warm_call=(os._exit, (1,)))
    try:
        outcome = pool.call(abs, -1)
        assert outcome.status is CallStatus.CRASHED and "could not start" in outcome.error
        assert pool.call(abs, -1).status is CallStatus.CRASHED  # the slot came back; no deadlock
    finally:
        pool.close()
