"""Cold start: the first batch a fresh process scores is scored, however slow the worker pool is to start.

A worker of the math reward's symbolic stage (python + sympy + math-verify + a warm call) takes 5-9 s to start on a
loaded 2-core machine, longer than the per-sample ``timeout_s``. The timeout bounds a comparison's work only; the
start-up has its own budget (``startup_timeout_s``), so a cold start costs time, never the score. Here the start is
slowed for real (CPU-bound processes on every core) and 16 threads score their first batch at once.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time

import pytest

from rewardsmith.compose import Route
from rewardsmith.rewards.math.reward import MathEquivalence

pytestmark = pytest.mark.slow

#: Per-sample work limit: ample for one comparison under the load below, well under a worker's start under it.
TIMEOUT_S = 2.0
THREADS = 16


def _rows(k: int) -> tuple[list[str], list[str], list[float]]:
    """A right and a wrong factorisation of ``x^2 - k^2``: neither is settled without sympy."""
    completions = [rf"\boxed{{(x-{k})(x+{k})}}", rf"\boxed{{(x-{k})(x+{k + 1})}}"]
    return completions, [f"x^2-{k * k}"] * 2, [1.0, 0.0]


def _burn(seconds: float) -> None:
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        pass


def _first_batches_in_a_fresh_process(queue) -> None:
    reward = MathEquivalence(workers=2, timeout_s=TIMEOUT_S)  # nothing started: the first batch starts the pool
    barrier = threading.Barrier(THREADS)
    outcomes: dict[int, tuple[list, list, list, float]] = {}

    def first_batch(k: int) -> None:
        completions, golds, expected = _rows(k)
        barrier.wait()
        start = time.monotonic()
        results = reward.details(completions, solution=golds)
        elapsed = time.monotonic() - start
        outcomes[k] = ([r.score for r in results], expected, [r.reason for r in results], elapsed)

    threads = [threading.Thread(target=first_batch, args=(k,)) for k in range(1, THREADS + 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    queue.put(outcomes)
    reward.close()


def test_the_first_batches_from_16_threads_score_correctly_under_a_slow_start():
    ctx = multiprocessing.get_context("spawn")
    burners = [ctx.Process(target=_burn, args=(180.0,), daemon=True) for _ in range(2 * (os.cpu_count() or 1))]
    for burner in burners:
        burner.start()
    queue = ctx.Queue()
    child = ctx.Process(target=_first_batches_in_a_fresh_process, args=(queue,))
    try:
        child.start()
        outcomes = queue.get(timeout=240)
    finally:
        for burner in burners:
            burner.kill()
        child.join(30)
        if child.is_alive():
            child.kill()
    assert sorted(outcomes) == list(range(1, THREADS + 1))
    for k, (scores, expected, reasons, _) in outcomes.items():
        assert scores == expected, (k, reasons)
        assert all("sympy" in reason for reason in reasons), (k, reasons)
    # The start was slower than the per-sample timeout: under the old contract (the timeout counted the wait for
    # a worker) every one of these first batches would have come back None.
    slowest = max(elapsed for *_, elapsed in outcomes.values())
    assert slowest > TIMEOUT_S, slowest
    # Bounded: the start-up budget plus the work of the calls queued behind each other on 2 workers.
    assert slowest < MathEquivalence.Config().startup_timeout_s + 2 * TIMEOUT_S, slowest


def test_warm_up_reaches_a_pool_nested_in_composites():
    route = Route(
        {
            "column": "task",
            "routes": {
                # pool settings of its own: instances with equal settings share one pool in a process, and an
                # earlier test's may be running already
                "math": {
                    "name": "weighted_sum",
                    "config": {
                        "rewards": [{"name": "math_equivalence", "config": {"memory_limit_mb": 3999}}, "think_format"]
                    },
                }
            },
        }
    )
    (math,) = [p for p in route.routes["math"].parts if isinstance(p, MathEquivalence)]
    try:
        assert math.pool._generation is None  # building a reward starts nothing
        route.warm_up()
        generation = math.pool._generation
        assert generation is not None
        # Every worker ready, none busy: the workers and the spare, as many as the host's worker budget allows.
        assert len(generation.idle) == min(math.pool.workers + math.pool.spares, math.pool.budget.total)
    finally:
        math.close()


def test_code_tests_warm_up_starts_its_sandbox():
    from rewardsmith import get_reward

    reward = get_reward("code_tests")
    try:
        assert reward._backend is None  # building the reward opens no sandbox
        reward.warm_up()
        backend = reward._backend
        assert backend is not None and backend._tier is not None  # the tier was resolved before any run
        if backend._tier == "bwrap":
            assert backend._idle.qsize() == 1  # its first forkserver is up and waiting
        scores = reward(
            [f"```python\ndef f():\n    return {v}\n```" for v in (1, 2)], tests=[{"asserts": ["assert f() == 1"]}] * 2
        )
        assert scores == [1.0, 0.0]
    finally:
        reward.close()
