"""Wall-clock timeouts judged in the run's own time: a run starved by its neighbours is never the program's timeout.

Runs share a machine with other runs and other programs. A cgroup caps what one run may take, but nothing gives a
run the CPU it wants when the machine is busy: an honest program that waited for a CPU most of its wall limit would
be a timeout (0.0) for what others took. The scheduler counts, per thread, the time it ran on a CPU and the time it
was runnable but queued (``/proc/<tid>/schedstat``); the program can neither produce nor hide either. A backend
reads both for the run's threads twice before the wall limit (:class:`Sampler`), and a wall-clock timeout counts
as the program's own unless the run was starved between the two readings (:func:`starved`): queued for a good share
of that time while running on well under the CPU it may use, and still under its CPU-time limit. A program that
sleeps, waits on input or spins on its CPU is never starved (one that only started slowly on a busy machine
neither); its own threads queueing for the one CPU it may use count as running.

A starved run is run once more with a longer wall cap, where its own CPU time decides (:func:`judged_by_own_time`);
starved again, the machine could not give it its time: a ``SANDBOX_ERROR`` naming the starvation, which a reward
reports as unscorable. The wall cap stays a hard cap: nothing hangs.
"""

from __future__ import annotations

import heapq
import os
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path

from rewardsmith.sandboxes.base import RunRequest, RunResult, RunStatus

#: starved: queued for a CPU at least this share of the time between the two readings, running on under
#: ``1 - STARVED_SHARE`` of the CPUs it may use
STARVED_SHARE = 0.25
#: the rerun's wall cap, in multiples of the limit: on a quarter of a CPU, an endless loop still spends its time
#: limit of its own CPU time before the last reading, and times out on its own
STARVED_WALL_FACTOR = 5.0
#: when a run's scheduler times are read, as shares of its wall cap (before the run is killed at the cap)
SAMPLE_AT = (0.5, 0.8)

Times = tuple[float, float]
Sample = list[tuple[float, Times]]  # (seconds since the run started, its scheduler times then), in order


def scheduler_times(task_list: str) -> Times | None:
    """``(on a CPU, queued for one)`` in seconds, summed over the threads a cgroup file lists (``tasks`` in cgroup
    v1, ``cgroup.threads`` in v2); ``None`` when the list cannot be read."""
    try:
        tids = Path(task_list).read_text().split()
    except OSError:
        return None
    ran = waited = 0
    for tid in tids:
        try:
            fields = Path(f"/proc/{tid}/schedstat").read_text().split()
            ran, waited = ran + int(fields[0]), waited + int(fields[1])
        except (OSError, ValueError, IndexError):
            continue  # exited in between
    return ran / 1e9, waited / 1e9


def task_list_of(pid: int) -> str | None:
    """The cgroup file listing the threads of the CPU cgroup process ``pid`` is in (a container's init), or ``None``."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None
    places = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            places[controller] = path
    for fields in (m.split() for m in mounts):
        if len(fields) < 4:
            continue
        if fields[2] == "cgroup" and "cpu" in fields[3].split(",") and "cpu" in places:
            return str(Path(fields[1], places["cpu"].lstrip("/"), "tasks"))
        if fields[2] == "cgroup2" and "" in places and "cpu" not in places:
            return str(Path(fields[1], places[""].lstrip("/"), "cgroup.threads"))
    return None


class SampleClock:
    """One thread that takes every :class:`Sampler`'s readings when they fall due.

    A thread per run cost a start and a join on every run, most of which end long before their first reading;
    on a busy machine each of those waits for a CPU. Readings are short (a few small ``/proc`` files), so one
    thread serves all runs of a process. It holds its samplers weakly: a run that ended is forgotten with its
    sampler, not kept until its readings would have fallen due. A forked child gets a clock of its own."""

    def __init__(self) -> None:
        self._due: list[tuple[float, int, weakref.ref[Sampler]]] = []  # (when, tie-break, sampler)
        self._ticket = 0
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def schedule(self, sampler: Sampler, wall_s: float) -> None:
        with self._wake:
            for share in SAMPLE_AT:
                self._ticket += 1
                heapq.heappush(self._due, (sampler.started + share * wall_s, self._ticket, weakref.ref(sampler)))
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="rewardsmith-sample-clock", daemon=True)
                self._thread.start()
            self._wake.notify()

    def _serve(self) -> None:
        while True:
            with self._wake:
                while not self._due or self._due[0][0] > time.monotonic():
                    self._wake.wait(self._due[0][0] - time.monotonic() if self._due else None)
                _, _, held = heapq.heappop(self._due)
            sampler = held()
            if sampler is None:
                continue
            try:
                sampler.take()
            except Exception:  # a reading that fails is a reading not taken; the clock serves the other runs
                pass


_CLOCK = SampleClock()


def _new_clock_in_child() -> None:
    global _CLOCK
    _CLOCK = SampleClock()  # the parent's thread and its pending readings stay the parent's


os.register_at_fork(after_in_child=_new_clock_in_child)


class Sampler:
    """Reads a run's scheduler times at :data:`SAMPLE_AT` of its wall cap (runs that end sooner are not read);
    :meth:`stop` before judging: no reading is added after it returns."""

    def __init__(self, read: Callable[[], Times | None], wall_s: float) -> None:
        self.sample: Sample = []
        self.started = time.monotonic()
        self._read = read
        self._stopped = False
        self._lock = threading.Lock()
        _CLOCK.schedule(self, wall_s)

    def take(self) -> None:
        """One reading, unless the run was already judged."""
        with self._lock:
            if self._stopped:
                return
            times = self._read()
            if times is not None:
                self.sample.append((time.monotonic() - self.started, times))

    def stop(self) -> None:
        with self._lock:
            self._stopped = True


def starved(sample: Sample | None, budget_s: float, cpus: float) -> str | None:
    """How a run killed at its wall cap was starved, or ``None`` when the timeout is its own.

    ``sample``: the scheduler times read before the kill (``None``: not a wall-clock timeout). Judged on the
    interval between the two readings, so a program that only started slowly on a busy machine and then slept or
    waited on input is not starved: starved means queued for a CPU at least :data:`STARVED_SHARE` of that
    interval while running on under ``1 - STARVED_SHARE`` of its ``cpus``, having spent less than ``budget_s``
    of CPU time (its time limit, counted in its own CPU time)."""
    if not sample or len(sample) < 2:
        return None
    (t1, (ran1, waited1)), (t2, (ran2, waited2)) = sample[0], sample[-1]
    span, ran, waited = t2 - t1, max(0.0, ran2 - ran1), max(0.0, waited2 - waited1)
    if span <= 0 or waited < STARVED_SHARE * span or ran >= (1 - STARVED_SHARE) * cpus * span or ran2 >= budget_s:
        return None
    return f"{ran:.2f} s on a CPU and {waited:.2f} s queued for one in {span:.2f} s"


RunOnce = Callable[[RunRequest], tuple[RunResult, Sample | None]]


def judged_by_own_time(run_once: RunOnce, request: RunRequest, cpus: float) -> RunResult:
    """Run ``request`` (``run_once`` gives the result and, for a wall-clock timeout, the scheduler times read before
    it); a starved run runs once more with :data:`STARVED_WALL_FACTOR` times the wall cap, where its own CPU time
    decides: its time limit (the wall limit, or the CPU-time limit when smaller) counted in the CPU time it spent.
    Starved again, a ``SANDBOX_ERROR``."""
    limits = request.limits
    budget = min(limits.wall_time_s, limits.cpu_time_s)
    result, sample = run_once(request)
    why = starved(sample, budget, cpus)
    if why is None:
        return result
    cap = limits.wall_time_s * STARVED_WALL_FACTOR
    result, sample = run_once(request.model_copy(update={"limits": limits.model_copy(update={"wall_time_s": cap})}))
    why = starved(sample, budget, cpus)
    if why is not None:
        message = f"starved: the machine did not give the run its CPU time, twice ({why})"
        return result.model_copy(update={"status": RunStatus.SANDBOX_ERROR, "message": message})
    if result.ok and (result.cpu_time_s or 0.0) > budget:
        return result.model_copy(update={"status": RunStatus.TIMEOUT, "message": f"CPU time past {budget:g} s"})
    return result
