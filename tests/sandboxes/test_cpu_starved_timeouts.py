"""A wall-clock timeout is judged in the run's own CPU time: a run starved by its neighbours is never a timeout.

Runs share the machine (other runs, other programs): a run that wanted the CPU and waited for it can reach its wall
limit with little CPU time of its own. The local forkserver tier reads the scheduler's per-thread times of the run
(time on a CPU, time queued for one) just before its wall limit; a starved run is run once more with a longer wall
cap, where its own CPU time decides, and starved again it is a ``SANDBOX_ERROR`` naming the starvation. A program
that sleeps, waits on input or spins past its CPU limit still times out.

The table checks the rule on scheduler times; the real test runs an honest program, a sleeper and an endless loop
next to hostile runs whose processes each ``setsid`` and spin (each run capped at one CPU, so several are needed to
starve a neighbour on a machine of a few cores).
"""

from __future__ import annotations

import gc
import os
import threading
import time
import weakref

import pytest

from rewardsmith.sandboxes.base import Limits, RunRequest, RunResult, RunStatus
from rewardsmith.sandboxes.local.backend import LocalSandbox
from rewardsmith.sandboxes.starvation import SAMPLE_AT, Sampler
from rewardsmith.sandboxes.starvation import starved as rule
from tests.support.docker_engine import require_docker

WALL = "wall-clock limit"
STARVED_RULE = [
    # (first reading, second reading: (elapsed, on CPU, queued), cpu limit, starved, why)
    ((0.5, 0.1, 0.4), (0.8, 0.15, 0.65), 1.0, True, "queued most of the time, little CPU: starved"),
    ((0.5, 0.0, 0.0), (0.8, 0.0, 0.0), 1.0, False, "slept (no CPU, never queued): its own timeout"),
    ((0.5, 0.05, 0.4), (0.8, 0.05, 0.4), 1.0, False, "queued to start on a busy machine, then slept: its own"),
    ((0.5, 0.49, 0.01), (0.8, 0.78, 0.02), 1.0, False, "ran on its CPU all along: its own timeout"),
    ((0.5, 0.49, 4.0), (0.8, 0.78, 6.0), 1.0, False, "its own threads queued for its one CPU: its own"),
    ((5.0, 0.9, 4.0), (8.0, 1.2, 6.8), 1.0, False, "used its whole CPU limit: its own timeout"),
    ((0.5, 0.1, 0.1), (0.8, 0.3, 0.15), 1.0, False, "queued a little: its own timeout"),
]


@pytest.mark.parametrize(("first", "second", "cpu", "starved", "why"), STARVED_RULE, ids=[r[-1] for r in STARVED_RULE])
def test_starvation_rule(first, second, cpu, starved, why):
    sample = [(first[0], first[1:]), (second[0], second[1:])]
    assert (rule(sample, cpu, 1.0) is not None) is starved, why


def test_fewer_than_two_readings_are_never_starved():
    assert rule(None, 1.0, 1.0) is None  # not a wall-clock timeout
    assert rule([(0.8, (0.1, 0.7))], 1.0, 1.0) is None  # one reading: no interval to judge


def test_sampler_reads_at_its_shares_of_the_wall_cap_and_never_after_stop():
    readings: list[float] = []
    started = time.monotonic()

    def read() -> tuple[float, float]:
        readings.append(time.monotonic() - started)
        return (0.0, 0.0)

    running, judged = Sampler(read, 0.4), Sampler(lambda: pytest.fail("read after stop"), 0.4)
    judged.stop()
    time.sleep(0.5)
    running.stop()
    assert [round(at, 1) for at, _ in running.sample] == [round(share * 0.4, 1) for share in SAMPLE_AT]
    assert len(readings) == len(SAMPLE_AT) and judged.sample == []


def test_samplers_share_one_thread():
    """A run that ends before its first reading costs no thread start or join."""
    before = threading.active_count()
    samplers = [Sampler(lambda: (0.0, 0.0), 30.0) for _ in range(64)]
    assert threading.active_count() <= before + 1
    for sampler in samplers:
        sampler.stop()
    assert all(sampler.sample == [] for sampler in samplers)


def test_a_finished_run_s_sampler_is_forgotten_and_a_failed_reading_stops_no_other():
    finished = Sampler(lambda: (0.0, 0.0), 60.0)
    finished.stop()
    held = weakref.ref(finished)
    del finished
    gc.collect()
    assert held() is None  # not kept until its readings would have fallen due

    def broken() -> tuple[float, float]:
        raise RuntimeError("unreadable")

    failing, healthy = Sampler(broken, 0.2), Sampler(lambda: (0.0, 0.0), 0.3)
    time.sleep(0.4)
    failing.stop()
    healthy.stop()
    assert failing.sample == [] and len(healthy.sample) == len(SAMPLE_AT)


SPINNERS = 6
HOSTILE = f"""
import os, time
end = time.monotonic() + 4
for _ in range({SPINNERS}):
    if os.fork() == 0:
        os.setsid()
        while time.monotonic() < end:
            pass
        os._exit(0)
while time.monotonic() < end:
    pass
"""
HOSTILE_RUNS = 2 * (os.cpu_count() or 2) + 1  # each capped at one CPU: together they leave a neighbour < 1/3 CPU
HOSTILE_LIMITS = Limits(wall_time_s=9, cpu_time_s=9, max_processes=SPINNERS + 4, memory_mb=512)
HONEST_CPU_S = 0.5  # alone it finishes in its 1.5 s; beside the hostile runs it gets well under that
HONEST = f"import time\nwhile time.process_time() < {HONEST_CPU_S}:\n    pass\nprint('done')\n"
SLEEPER = "import time\ntime.sleep(30)\n"
ENDLESS = "while True:\n    pass\n"
LIMITS = Limits(wall_time_s=1.5, cpu_time_s=1.5)


def run(box: LocalSandbox, source: str, limits: Limits) -> RunResult:
    return box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": source}, limits=limits))


def starved_neighbours_scenario(box) -> dict[str, RunResult]:
    """Hostile runs spin; an honest program, a sleeper and an endless loop run beside them."""
    results: dict[str, RunResult] = {}
    threads = [
        threading.Thread(target=lambda i=i: results.__setitem__(f"hostile{i}", run(box, HOSTILE, HOSTILE_LIMITS)))
        for i in range(HOSTILE_RUNS)
    ]
    for thread in threads:
        thread.start()
    time.sleep(1.0)  # the spinners are up
    judged = {"honest": HONEST, "sleeper": SLEEPER, "endless": ENDLESS}
    workers = [
        threading.Thread(target=lambda k=k, s=s: results.__setitem__(k, run(box, s, LIMITS))) for k, s in judged.items()
    ]
    for thread in workers:
        thread.start()
    for thread in workers + threads:
        thread.join(60)
    return results


def assert_judged_by_own_time(results: dict[str, RunResult], wall_message: str) -> None:
    honest, sleeper, endless = results["honest"], results["sleeper"], results["endless"]
    assert honest.status is not RunStatus.TIMEOUT, (honest.message, honest.wall_time_s)
    assert honest.ok or "starved" in honest.message, (honest.status, honest.message)
    assert honest.stdout == (b"done\n" if honest.ok else honest.stdout)
    assert sleeper.status is RunStatus.TIMEOUT and wall_message in sleeper.message, sleeper.message
    assert endless.status is RunStatus.TIMEOUT or "starved" in endless.message, (endless.status, endless.message)


def test_honest_run_beside_setsid_spinners_is_never_a_timeout():
    box = LocalSandbox(concurrency=HOSTILE_RUNS + 3)
    try:
        if box.tier != "bwrap":
            pytest.skip(f"forkserver tier unavailable: {box._startup_error}")
        if "cpu" not in box.cgroup_controllers:
            pytest.skip("no cpu cgroup here")
        assert_judged_by_own_time(starved_neighbours_scenario(box), WALL)
    finally:
        box.close()


@pytest.mark.docker
def test_docker_honest_run_beside_setsid_spinners_is_never_a_timeout():
    require_docker()
    from rewardsmith.sandboxes.docker.backend import DockerSandbox

    box = DockerSandbox(concurrency=HOSTILE_RUNS + 3)
    try:
        box.warm_up()
        assert_judged_by_own_time(starved_neighbours_scenario(box), "wall")
    finally:
        box.close()
