"""One worker budget per host: the pools of many processes (verl's eight reward-loop workers) never run more worker
processes than the budget, a stopped instance hands its workers back, and instances in one process share a pool.
Worker processes are counted in /proc, not by the pools' own bookkeeping."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from rewardsmith.hard_timeout import CallStatus, HardTimeoutPool
from rewardsmith.rewards.math.dispatch import WORKERS_ENV, host_budget
from rewardsmith.worker_budget import RUNTIME_DIR_ENV, HostBudget
from tests.support.timing import slack

FORK = multiprocessing.get_context("fork")  # children start in milliseconds, with everything already imported


@pytest.fixture(autouse=True)
def _own_runtime_dir(tmp_path, monkeypatch):
    """A budget folder of this test's own: no other process on the host draws from it."""
    monkeypatch.setenv(RUNTIME_DIR_ENV, str(tmp_path))


def workers_of(parents: set[int]) -> dict[int, int]:
    """Live worker processes per parent pid, read from /proc (a killed worker not yet reaped is no longer one)."""
    counts = dict.fromkeys(parents, 0)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                ppid = int(stat.read().rsplit(b")", 1)[1].split()[1])
            if ppid not in counts:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                if b"rewardsmith.hard_timeout" in cmdline.read():
                    counts[ppid] += 1
        except (OSError, IndexError, ValueError):  # gone meanwhile
            continue
    return counts


class Sampler:
    """The most worker processes the given parents held at once, sampled every few milliseconds."""

    def __init__(self, parents: Callable[[], set[int]]) -> None:
        self.parents = parents
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(workers_of(self.parents()).values()))
            time.sleep(0.005)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def wait_until(condition: Callable[[], bool], within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture
def children() -> Iterator[list]:
    started: list = []
    yield started
    for child in started:
        if child.is_alive():
            child.kill()
        child.join(10)


# -- eight processes on one budget ----------------------------------------------------------------------------
def _calls_then_close(budget: HostBudget, results) -> None:
    pool = HardTimeoutPool(workers=4, timeout_s=10, budget=budget)
    outcomes = pool.map(abs, [(-k,) for k in range(6)])
    results.put((os.getpid(), [(o.status, o.value) for o in outcomes]))
    pool.close()  # a stopped instance: its slots go to the pools still waiting


def test_eight_processes_never_hold_more_than_the_budget_and_each_is_served(children):
    budget = HostBudget("eight", 3)
    results = FORK.Queue()
    children.extend(FORK.Process(target=_calls_then_close, args=(budget, results)) for _ in range(8))
    with Sampler(lambda: {c.pid for c in children if c.pid}) as sampler:
        for child in children:
            child.start()
        answers = dict(results.get(timeout=120) for _ in children)
    assert sorted(answers) == sorted(c.pid for c in children)
    assert all(calls == [(CallStatus.OK, k) for k in range(6)] for calls in answers.values()), answers
    assert 1 <= sampler.peak <= budget.total, sampler.peak
    for child in children:
        child.join(30)
    assert wait_until(lambda: budget.held() == 0 and budget.pools() == 0, slack(5.0)), budget.held()


# -- a stopped instance hands its workers back -----------------------------------------------------------------
def _hold(budget: HostBudget, ready, release) -> None:
    pool = HardTimeoutPool(workers=3, spares=0, timeout_s=10, budget=budget)
    pool.warm_up()
    ready.set()
    release.wait(120)
    del pool  # garbage-collected, never closed
    gc.collect()
    time.sleep(60)


def test_a_killed_or_collected_instance_returns_its_workers_to_the_others(children):
    budget = HostBudget("stop", 3)
    first_ready, second_ready, release = FORK.Event(), FORK.Event(), FORK.Event()
    first = FORK.Process(target=_hold, args=(budget, first_ready, FORK.Event()))  # its own: it dies waiting on it
    second = FORK.Process(target=_hold, args=(budget, second_ready, release))
    children.extend([first, second])
    with Sampler(lambda: {c.pid for c in children if c.pid}) as sampler:
        first.start()
        assert first_ready.wait(120)
        assert wait_until(lambda: workers_of({first.pid})[first.pid] == 3, slack(10.0))  # alone: the whole budget
        second.start()
        assert second_ready.wait(120)
        # Two pools: a share of 1 each, the first hands back what it holds above it.
        assert wait_until(lambda: workers_of({first.pid, second.pid}) == {first.pid: 1, second.pid: 1}, slack(10.0))
        os.kill(first.pid, signal.SIGKILL)  # a process killed outright: its workers follow it, their slots free
        assert wait_until(lambda: workers_of({second.pid})[second.pid] == 3, slack(15.0))
        release.set()  # the second drops its pool without closing it
        assert wait_until(lambda: workers_of({second.pid})[second.pid] == 0, slack(10.0))
    assert sampler.peak <= budget.total, sampler.peak
    assert wait_until(lambda: budget.held() == 0, slack(5.0))


# -- the math reward ------------------------------------------------------------------------------------------
def _math_instances(count: int, results) -> None:
    from rewardsmith.rewards.math.reward import MathEquivalence

    rewards = [MathEquivalence(timeout_s=30) for _ in range(count)]
    scores = [r([r"\boxed{(x-1)(x+1)}", r"\boxed{(x-1)(x+2)}"], solution=["x^2-1", "x^2-1"]) for r in rewards]
    shared = len({id(r.pool) for r in rewards}) == 1
    results.put(("scored", os.getpid(), scores, shared))
    for reward in rewards[:-1]:
        reward.close()
    results.put(("closed all but one", os.getpid(), rewards[-1].pool.live_workers))
    rewards[-1].close()
    stopped = wait_until(lambda: workers_of({os.getpid()})[os.getpid()] == 0, slack(10.0))
    results.put(("closed", os.getpid(), stopped))


def test_math_instances_share_one_pool_per_process_and_the_host_budget(children, monkeypatch):
    monkeypatch.setenv(WORKERS_ENV, "2")
    assert host_budget().total == 2
    results = FORK.Queue()
    children.extend(FORK.Process(target=_math_instances, args=(4, results)) for _ in range(2))  # 8 instances
    with Sampler(lambda: {c.pid for c in children if c.pid}) as sampler:
        for child in children:
            child.start()
        reports = [results.get(timeout=180) for _ in range(3 * len(children))]
    by_kind: dict[str, list] = {}
    for kind, _pid, *rest in reports:
        by_kind.setdefault(kind, []).append(rest)
    assert by_kind["scored"] == [[[[1.0, 0.0]] * 4, True]] * 2  # verdicts as ever, one pool per process
    assert all(live >= 1 for (live,) in by_kind["closed all but one"])  # the last holder keeps it running
    assert by_kind["closed"] == [[True], [True]]  # the last one stops it
    assert 1 <= sampler.peak <= 2, sampler.peak
