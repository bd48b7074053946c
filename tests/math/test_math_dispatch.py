"""Scoring in the workers: once the pool is up, the whole per-completion pipeline runs there, with the same verdicts
and the same hard timeouts as the per-comparison path; worker counts follow the declared budget and the CPU mask."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from rewardsmith.hard_timeout import CallStatus, HardTimeoutPool, available_cpus, report
from rewardsmith.rewards.math.dispatch import WORKERS_ENV, plan_chunks
from rewardsmith.rewards.math.reward import MathEquivalence
from tests.support.timing import deadline_bound, slack

TIMEOUT_S = 1.5
HANG = r"The answer is \boxed{10^{10^{10}} - 1}"  # reaches sympy, which evaluates it for minutes


@pytest.fixture(scope="module")
def reward():
    reward = MathEquivalence(workers=2, timeout_s=TIMEOUT_S)
    reward.warm_up()
    yield reward
    reward.close()


def test_with_the_pool_up_the_parent_extracts_nothing(reward, monkeypatch):
    seen: list[object] = []
    first_stage = MathEquivalence._first_stage

    def spy(self, completion, row):
        seen.append(completion)
        return first_stage(self, completion, row)

    monkeypatch.setattr(MathEquivalence, "_first_stage", spy)  # this process only: a worker has its own class
    ready_by = time.monotonic() + 120  # "the pool is up": on a loaded machine its workers may still be starting
    while not reward.pool.live_workers and time.monotonic() < ready_by:
        time.sleep(0.1)
    assert reward.pool.live_workers, "the warmed-up pool never had a live worker"
    golds = [str(g) for g in range(12) for _ in range(4)]
    completions = [rf"\boxed{{{g}}}" if i % 2 else rf"\boxed{{{g}+1}}" for i, g in enumerate(golds)]
    scores = reward(completions, solution=golds)
    assert scores == [1.0 if i % 2 else 0.0 for i in range(len(golds))]
    assert seen == []


# (gold, completion, expected) across every path: fast, symbolic, no answer, unreadable gold, a hang.
MIXED_GROUP = [
    ("x^2-1", r"\boxed{(x-1)(x+1)}", 1.0),
    ("x^2-1", r"\boxed{(x-1)(x+2)}", 0.0),
    ("x^2-1", HANG, "overrun"),
    ("x^2-1", r"so \boxed{x^2-1}", 1.0),
    ("x^2-1", "no answer here", 0.0),
    ("7", r"\boxed{7}", 1.0),
    ("7", HANG, "overrun"),
    ("", r"\boxed{7}", None),
]


def test_a_hang_costs_its_own_completion_only(reward):
    golds = [g for g, _, _ in MIXED_GROUP]
    start = time.monotonic()
    results = reward.details([c for _, c, _ in MIXED_GROUP], solution=golds)
    elapsed = time.monotonic() - start
    for result, (_, completion, expected) in zip(results, MIXED_GROUP, strict=True):
        if completion == HANG:  # scored as an overrun is (timeout_score decides the number)
            assert f"symbolic comparison exceeded {TIMEOUT_S:g} s" in result.reason, result.reason
        else:
            assert result.score == expected, result.reason
    # The chunk's worker is killed on the overrun; the chunk is then scored by the per-comparison path, in
    # which the second (distinct) hang runs its own timeout: two timeouts, a replacement start, and slack.
    assert elapsed < deadline_bound(2 * TIMEOUT_S) + slack(3.0), elapsed


def test_verdicts_match_the_per_comparison_path(reward):
    # A pool setting of its own (instances alike share one pool): never started, so it scores in this process.
    cold = MathEquivalence(workers=2, timeout_s=TIMEOUT_S, startup_timeout_s=59)
    try:
        assert cold.pool is not reward.pool and cold.pool.live_workers == 0
        pairs = [(g, c) for g, c, _ in MIXED_GROUP if c != HANG]
        here = cold.details([c for _, c in pairs], solution=[g for g, _ in pairs])
        assert cold.pool.live_workers > 0  # its comparisons started the pool on the way
        there = reward.details([c for _, c in pairs], solution=[g for g, _ in pairs])
        assert [(r.score, r.reason) for r in there] == [(r.score, r.reason) for r in here]
    finally:
        cold.close()


def test_chunks_keep_each_gold_together():
    rows = [{"solution": str(i // 8)} for i in range(64)] + [{"solution": ["a list"]}, {}]
    chunks = plan_chunks(rows, "solution", workers=2)
    assert sorted(i for chunk in chunks for i in chunk) == list(range(66))  # each completion once
    chunk_of = {i: k for k, chunk in enumerate(chunks) for i in chunk}
    assert all(chunk_of[i] == chunk_of[i - i % 8] for i in range(64))  # a group of 8 is never split
    assert len(chunks) >= 4 and max(map(len, chunks)) <= 17  # a few chunks per worker: none idles


# -- the pool's reports ---------------------------------------------------------------------------------------
def steps(naps: list[float]) -> int:
    """Runs in a worker: one report per step, then the step's work."""
    for index, nap in enumerate(naps):
        report(index)
        time.sleep(nap)
    return len(naps)


def test_each_report_gives_the_call_a_fresh_timeout_and_names_the_step_that_overran():
    pool = HardTimeoutPool(workers=1, timeout_s=1.0, spares=0)
    try:
        assert pool.call(steps, [], timeout_s=60).value == 0  # the worker imports this module (slow under load)
        seen: list[int] = []
        outcome = pool.call(steps, [0.5, 0.5, 0.5], on_report=seen.append)
        assert outcome.status is CallStatus.OK and outcome.value == 3  # 1.5 s of work, no step over 1 s
        assert seen == [0, 1, 2]
        seen.clear()
        start = time.monotonic()
        outcome = pool.call(steps, [0.1, 30.0, 0.1], on_report=seen.append)
        assert outcome.status is CallStatus.TIMEOUT
        assert seen == [0, 1]  # the step that was running when the call was killed
        assert time.monotonic() - start < deadline_bound(1.1)
    finally:
        pool.close()


# -- how many workers ---------------------------------------------------------------------------------------
def _workers_in_child(env: dict[str, str], cpus: set[int] | None = None) -> subprocess.CompletedProcess:
    pin = f"os.sched_setaffinity(0, {cpus!r}); " if cpus else ""
    code = (
        f"import os; {pin}from rewardsmith.rewards.math.reward import MathEquivalence; "
        "print(MathEquivalence().pool.workers)"
    )
    return subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )


def test_the_worker_count_is_the_declared_budget_or_the_cpus_this_process_may_use():
    assert MathEquivalence(workers=3).pool.workers == 3
    declared = _workers_in_child({WORKERS_ENV: "3"})
    assert declared.stdout.split() == ["3"], declared.stderr
    if hasattr(os, "sched_setaffinity"):
        pinned = _workers_in_child({WORKERS_ENV: ""}, cpus={min(os.sched_getaffinity(0))})
        assert pinned.stdout.split() == ["1"], pinned.stderr
    assert MathEquivalence().pool.workers == (
        int(os.environ[WORKERS_ENV]) if os.environ.get(WORKERS_ENV) else available_cpus()
    )
    bad = _workers_in_child({WORKERS_ENV: "all"})
    assert bad.returncode != 0 and WORKERS_ENV in bad.stderr
