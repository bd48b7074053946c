"""Run picklable functions in worker processes with a hard per-call timeout.

Why not ``signal.alarm`` (what math-verify does): it only works in the main thread of the main
interpreter, and it cannot interrupt a long C call (``10**10**10``). Here each call runs in a separate
worker process; on overrun the worker's process group is killed and a fresh one is started in the
background, so the caller gets :data:`CallStatus.TIMEOUT` after ``timeout_s`` plus a few milliseconds,
from any thread and from inside spawned or daemonic processes.

Two budgets, because they bound different things. ``timeout_s`` bounds the *work* of a call: it starts
when a worker takes the call, so a slow start-up (5-9 s for python + sympy on a loaded 2-core machine)
never turns a call that would have finished into a timeout. Waiting for a ready worker (a cold pool, one
whose workers were just killed, all workers busy) has its own bound, ``startup_timeout_s`` (60 s): past
it the call answers TIMEOUT with ``started=False`` and a reason naming ``startup_timeout_s``. So a call
never takes longer than ``startup_timeout_s + timeout_s`` plus the kill. A spare process is kept started
beyond ``workers``, so that a call right after a kill normally finds a ready worker.

Workers are plain ``python -m rewardsmith.hard_timeout`` subprocesses talking over a socketpair (no
``multiprocessing``: no re-import of the caller's ``__main__``, no "daemonic processes are not allowed
to have children"). Functions travel by reference, so they must be importable module-level functions.

A call that does several steps of work (a chunk of completions, each with its comparisons) calls
:func:`report` at the start of each step: the caller receives the report as it happens and the call's
clock restarts, so each step gets ``timeout_s`` and, when one overruns, the caller knows which.

>>> pool = HardTimeoutPool(workers=2, timeout_s=1.0)
>>> pool.call(pow, 2, 10).value
1024
>>> pool.close()
"""

from __future__ import annotations

import contextlib
import enum
import functools
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from rewardsmith.worker_budget import LINGER_S, HostBudget

#: How long a fresh worker may take to import its preload modules and say it is ready, and how long a call
#: may wait for a ready worker.
DEFAULT_STARTUP_TIMEOUT_S = 60.0

#: How often a start waiting for a budget slot tries again, and how often a pool on a budget checks its share.
_SLOT_POLL_S = 0.05
_SHARE_POLL_S = 0.5

#: First bytes of a :func:`report` message; a call's final reply is a pickle, which never starts with a zero byte.
_REPORT_TAG = b"\x00R"


def available_cpus() -> int:
    """The CPUs this process may run on: its affinity mask where the OS has one, else ``os.cpu_count()``.

    A process pinned to some cores (``taskset``, a cpuset, a launcher that gives each of several reward
    instances its own cores) then starts as many workers as it has cores, not as many as the machine has.
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity on this OS
        return os.cpu_count() or 1


class CallStatus(str, enum.Enum):
    OK = "ok"
    ERROR = "error"  # the function raised; ``error`` holds "Type: message"
    TIMEOUT = "timeout"  # the worker overran and was killed
    CRASHED = "crashed"  # the worker died (segfault, memory limit, os._exit) or could not start


@dataclass(frozen=True)
class CallOutcome:
    """What became of one call: never an exception, always one of :class:`CallStatus`."""

    status: CallStatus
    value: Any = None
    error: str = ""
    elapsed_s: float = 0.0
    started: bool = True  # False when no worker was ready in time (or none could start): the call never ran

    @property
    def ok(self) -> bool:
        return self.status is CallStatus.OK


class _Worker:
    """One worker subprocess and its end of the socketpair; used by one caller thread at a time."""

    def __init__(
        self, preload: Sequence[str], memory_limit_mb: int | None, startup_timeout_s: float, slot: int | None = None
    ) -> None:
        """``slot``: a descriptor holding a :class:`~rewardsmith.worker_budget.HostBudget` slot's lock, handed to the
        worker (which holds it until it exits) and closed here."""
        parent_sock, child_sock = socket.socketpair()
        kept = [child_sock.fileno()] if slot is None else [child_sock.fileno(), slot]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        args = [sys.executable, "-m", "rewardsmith.hard_timeout", str(child_sock.fileno()), ",".join(preload)]
        args.append(str(memory_limit_mb or 0))
        try:
            self.proc = subprocess.Popen(
                args,
                pass_fds=kept,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=env,
                start_new_session=True,  # its own process group, so a kill takes any children too
            )
        finally:
            child_sock.close()
            if slot is not None:
                os.close(slot)
        self.conn = Connection(parent_sock.detach())
        if not self.conn.poll(startup_timeout_s):
            self.kill()
            raise RuntimeError(f"worker did not start within {startup_timeout_s:.0f} s")
        try:
            self.conn.recv_bytes()
        except (EOFError, OSError) as exc:
            self.kill()
            raise RuntimeError(f"worker exited during start-up (exit code {self.proc.poll()})") from exc

    def run(self, payload: bytes, timeout_s: float, on_report: Callable[[Any], None] | None = None) -> CallOutcome:
        """Send one call and wait for its reply; each :func:`report` from the call restarts the ``timeout_s`` clock."""
        start = time.monotonic()
        try:
            self.conn.send_bytes(payload)
            while True:
                if not self.conn.poll(timeout_s):
                    self.kill(wait=False)
                    return CallOutcome(
                        CallStatus.TIMEOUT, error=f"timeout after {timeout_s:g} s", elapsed_s=time.monotonic() - start
                    )
                reply = self.conn.recv_bytes()
                if not reply.startswith(_REPORT_TAG):
                    break
                _deliver(on_report, reply)
        except (EOFError, OSError) as exc:
            self.kill()
            code = self.proc.poll()
            return CallOutcome(
                CallStatus.CRASHED,
                error=f"worker died (exit code {code}): {type(exc).__name__}",
                elapsed_s=time.monotonic() - start,
            )
        elapsed = time.monotonic() - start
        try:
            status, value = pickle.loads(reply)
        except Exception as exc:  # e.g. a result class this process cannot import
            return CallOutcome(
                CallStatus.ERROR, error=f"result not readable: {type(exc).__name__}: {exc}", elapsed_s=elapsed
            )
        if status == "ok":
            return CallOutcome(CallStatus.OK, value=value, elapsed_s=elapsed)
        return CallOutcome(CallStatus.ERROR, error=value, elapsed_s=elapsed)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None and not self.conn.closed

    def kill(self, wait: bool = True) -> None:
        """SIGKILL the worker's process group; ``wait=False`` leaves the reaping (slow for a big heap) to later."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        with contextlib.suppress(OSError):
            self.conn.close()
        if wait:
            self.reap()

    def reap(self) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)


def _deliver(on_report: Callable[[Any], None] | None, message: bytes) -> None:
    """Hand one report to the caller's callback; a report it cannot read or a callback that fails costs the report
    only, never the call (the call's own reply still decides its outcome)."""
    if on_report is None:
        return
    try:
        on_report(pickle.loads(message[len(_REPORT_TAG) :]))
    except Exception:
        pass


def _spawn_worker(
    preload: tuple[str, ...],
    memory_limit_mb: int | None,
    startup_timeout_s: float,
    warm_call: tuple[Callable[..., Any], tuple[Any, ...]] | None,
    slot: int | None = None,
) -> _Worker:
    """Start one worker (holding ``slot``, when the pool is on a budget) and run its warm-up call; raises when it
    cannot start."""
    worker = _Worker(preload, memory_limit_mb, startup_timeout_s, slot)
    if warm_call is not None:
        fn, args = warm_call
        worker.run(pickle.dumps((fn, tuple(args)), protocol=pickle.HIGHEST_PROTOCOL), startup_timeout_s)
        if not worker.alive:
            worker.kill()
            raise RuntimeError("worker died during its warm-up call")
    return worker


def _reap_later(worker: _Worker) -> None:
    try:
        threading.Thread(target=worker.reap, daemon=True).start()
    except RuntimeError:  # no new threads at interpreter shutdown; the OS reaps it with us
        pass


class _Workers:
    """The processes of one pool generation: idle ones, busy ones and those being started.

    Keeps ``target`` processes alive (the pool's workers plus spares) by starting replacements in
    background threads, ``parallel_starts`` at a time. Replaced wholesale on close and after fork,
    so a start that finishes late lands in a closed generation and is killed.

    On a :class:`~rewardsmith.worker_budget.HostBudget`, each start first waits for a free slot, and a keeper
    thread keeps the generation within its share of the budget: idle processes above the share are handed back
    (and, when the host has more pools than slots, any idle one after ``LINGER_S``).
    """

    def __init__(
        self,
        spawn: Callable[[int | None], _Worker],
        target: int,
        parallel_starts: int,
        budget: HostBudget | None = None,
    ) -> None:
        self.spawn = spawn
        self.wanted = target
        self.target = target
        self.parallel_starts = parallel_starts
        self.budget = budget
        self.cond = threading.Condition()
        self.idle: list[_Worker] = []
        self.live: list[_Worker] = []
        self.idle_since: dict[_Worker, float] = {}
        self.starting = 0
        self.waiting_for_slot = 0
        self.failures = 0
        self.last_error = ""
        self.closed = False
        self._registration: int | None = None
        if budget is not None:
            self._registration = budget.register()
            self.target = min(self.wanted, budget.share()[0])
            threading.Thread(target=self._keep_share, daemon=True).start()

    def top_up(self) -> None:
        """Start missing processes in the background (call with ``cond`` held)."""
        missing = self.target - len(self.live) - self.starting
        while not self.closed and missing > 0 and self.starting < self.parallel_starts:
            try:
                threading.Thread(target=self._start_one, daemon=True).start()
            except RuntimeError:  # interpreter shutting down
                return
            self.starting += 1
            missing -= 1

    def _start_one(self) -> None:
        worker: _Worker | None = None
        error = ""
        try:
            slot = self._wait_for_slot() if self.budget is not None else None
            if self.budget is None or slot is not None:
                worker = self.spawn(slot)
        except Exception as exc:
            worker, error = None, f"{type(exc).__name__}: {exc}"
        with self.cond:
            self.starting -= 1
            if worker is None and error:
                self.failures += 1
                self.last_error = error
            elif worker is None:  # no longer needed (closed, or the share shrank while waiting for a slot)
                pass
            elif self.closed:
                worker.kill(wait=False)
                _reap_later(worker)
            else:
                self.live.append(worker)
                self._make_idle(worker)
                self.top_up()  # a failure does not retry by itself: the next caller does
            self.cond.notify_all()

    def _wait_for_slot(self) -> int | None:
        """A budget slot's descriptor, waiting while every slot is held; None once this start is no longer needed."""
        assert self.budget is not None
        waiting = False
        try:
            while True:
                with self.cond:
                    if self.closed or len(self.live) + self.starting > self.target:
                        return None
                slot = self.budget.take_slot()
                if slot is not None:
                    return slot
                with self.cond:
                    if not waiting:
                        waiting = True
                        self.waiting_for_slot += 1
                    self.cond.wait(_SLOT_POLL_S)
        finally:
            if waiting:
                with self.cond:
                    self.waiting_for_slot -= 1

    def _keep_share(self) -> None:
        """While open: follow this pool's share of the budget, handing back idle processes above it."""
        assert self.budget is not None
        while True:
            try:
                share, crowded = self.budget.share()
            except Exception:  # the folder vanished or became unusable: keep what is held, retry later
                share, crowded = self.target, False
            now = time.monotonic()
            with self.cond:
                if self.closed:
                    return
                self.target = min(self.wanted, share)
                surplus = len(self.live) - self.target
                for worker in list(self.idle):
                    lingered = crowded and now - self.idle_since.get(worker, now) >= LINGER_S
                    if surplus > 0 or lingered:
                        self.idle.remove(worker)
                        self._drop(worker)
                        surplus -= 1
                if not crowded:
                    self.top_up()
                self.cond.notify_all()
                self.cond.wait(_SHARE_POLL_S)

    def _make_idle(self, worker: _Worker) -> None:
        self.idle.append(worker)
        self.idle_since[worker] = time.monotonic()

    def acquire(self, deadline: float) -> tuple[_Worker | None, str]:
        """A ready worker, or ``(None, why)`` when none is ready by ``deadline`` or starting failed."""
        with self.cond:
            failures_before = self.failures
            while True:
                while self.idle:
                    worker = self.idle.pop()
                    if worker.alive:
                        return worker, ""
                    self._drop(worker)
                if self.failures > failures_before and self.starting == 0:
                    return None, f"could not start worker: {self.last_error}"
                self.top_up()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None, "no slot" if self.waiting_for_slot else "timeout"
                self.cond.wait(remaining)

    def release(self, worker: _Worker) -> None:
        with self.cond:
            if worker.alive and not self.closed and len(self.live) <= self.target:
                self._make_idle(worker)
            else:
                self._drop(worker)
                self.top_up()
            self.cond.notify_all()

    def _drop(self, worker: _Worker) -> None:
        with contextlib.suppress(ValueError):
            self.live.remove(worker)
        self.idle_since.pop(worker, None)
        worker.kill(wait=False)
        _reap_later(worker)

    def wait_full(self, timeout_s: float) -> None:
        """Start every missing process and wait until all are ready (or a start fails, or time is up)."""
        deadline = time.monotonic() + timeout_s
        with self.cond:
            failures_before = self.failures
            while len(self.live) < self.target and not self.closed:
                if self.failures > failures_before and self.starting == 0:
                    return
                if self.waiting_for_slot and self.live:  # the rest waits for other pools' slots: serve with these
                    return
                self.top_up()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                self.cond.wait(remaining)

    def close(self) -> None:
        with self.cond:
            self.closed = True
            doomed = list(self.live)
            self.live.clear()
            self.idle.clear()
            self.idle_since.clear()
            self.cond.notify_all()
        for worker in doomed:
            worker.kill()
        if self._registration is not None:
            with contextlib.suppress(OSError):
                os.close(self._registration)  # counted out of the shares; the workers' slots went with them
            self._registration = None


class HardTimeoutPool:
    """A lazily started pool of worker processes; no call works longer than ``timeout_s`` or waits longer than
    ``startup_timeout_s`` for a worker.

    Args:
        workers: worker processes, and the calls :meth:`map` runs at once (default :func:`available_cpus`).
        timeout_s: per-call limit on the work, from when a worker takes the call (an overrun is killed).
        preload: modules each worker imports before it reports ready (so the first call is not slow).
        warm_call: ``(fn, args)`` run once in each new worker before it takes calls (lazy caches, parsers);
            it runs in the background, before the worker counts as ready.
        memory_limit_mb: ``RLIMIT_AS`` of each worker; an allocation past it fails inside the worker.
        startup_timeout_s: how long a worker may take to start, and how long a call may wait for a ready
            worker; a call that finds none in time ends as :data:`CallStatus.TIMEOUT` with ``started=False``.
        spares: processes kept started beyond ``workers``, so that a call arriving right after a kill
            finds a ready worker instead of waiting for a replacement to start (1-2 s here).
        budget: a :class:`~rewardsmith.worker_budget.HostBudget` the processes (spares included) draw from: each
            holds one of its host-wide slots while alive, and the pool keeps at most its share of them.

    The pool pickles as its configuration only (no processes), so objects that hold one stay picklable.
    A pool inherited through ``fork`` notices the new pid and starts its own workers.
    """

    def __init__(
        self,
        workers: int | None = None,
        timeout_s: float = 5.0,
        preload: Sequence[str] = (),
        warm_call: tuple[Callable[..., Any], tuple[Any, ...]] | None = None,
        memory_limit_mb: int | None = None,
        startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S,
        spares: int = 1,
        budget: HostBudget | None = None,
    ) -> None:
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        if startup_timeout_s <= 0:
            raise ValueError(f"startup_timeout_s must be > 0, got {startup_timeout_s}")
        n = workers if workers is not None else available_cpus()
        if n < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if spares < 0:
            raise ValueError(f"spares must be >= 0, got {spares}")
        self.workers = n
        self.timeout_s = float(timeout_s)
        self.preload = tuple(preload)
        self.warm_call = warm_call
        self.memory_limit_mb = memory_limit_mb
        self.startup_timeout_s = startup_timeout_s
        self.spares = spares
        self.budget = budget
        self._reset()

    _SETTINGS = (
        "workers",
        "timeout_s",
        "preload",
        "warm_call",
        "memory_limit_mb",
        "startup_timeout_s",
        "spares",
        "budget",
    )

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._generation: _Workers | None = None
        self._finalizer: weakref.finalize | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self._SETTINGS}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("spares", 1)
        self.__dict__.setdefault("budget", None)
        self._reset()

    # -- public API ------------------------------------------------------------------------------
    def call(
        self,
        fn: Callable[..., Any],
        *args: Any,
        timeout_s: float | None = None,
        on_report: Callable[[Any], None] | None = None,
    ) -> CallOutcome:
        """Run ``fn(*args)`` in a worker; never raises.

        ``timeout_s`` (default: the pool's) bounds the work from when a worker takes the call; waiting for a
        ready worker is bounded by ``startup_timeout_s`` on its own, so a cold start costs time, not the result.
        Each :func:`report` the call makes is passed to ``on_report`` (in this thread) and restarts its clock.
        """
        budget = self.timeout_s if timeout_s is None else timeout_s
        start = time.monotonic()
        try:
            payload = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            return CallOutcome(CallStatus.ERROR, error=f"cannot send call: {type(exc).__name__}: {exc}")
        try:
            generation = self._ensure_generation()
        except Exception as exc:  # the budget's folder is unusable: said on every call, never raised
            return CallOutcome(CallStatus.CRASHED, error=f"could not start worker: {exc}", started=False)
        worker, why = generation.acquire(start + self.startup_timeout_s)
        if worker is None:
            elapsed = time.monotonic() - start
            if why in ("timeout", "no slot"):
                error = f"no worker ready within startup_timeout_s={self.startup_timeout_s:g} s"
                if why == "no slot" and self.budget is not None:
                    error += f": {self.budget.starved()}"
                return CallOutcome(CallStatus.TIMEOUT, error=error, elapsed_s=elapsed, started=False)
            return CallOutcome(CallStatus.CRASHED, error=why, elapsed_s=elapsed, started=False)
        try:
            outcome = worker.run(payload, budget, on_report)
        except Exception as exc:
            worker.kill(wait=False)
            outcome = CallOutcome(CallStatus.CRASHED, error=f"worker failed: {type(exc).__name__}: {exc}")
        finally:  # the worker always goes back (or is replaced), whatever happened (even KeyboardInterrupt)
            generation.release(worker)
        if outcome.status is CallStatus.TIMEOUT:
            outcome = CallOutcome(
                CallStatus.TIMEOUT, error=f"timeout after {budget:g} s", elapsed_s=time.monotonic() - start
            )
        return outcome

    def map(
        self, fn: Callable[..., Any], arg_tuples: Iterable[Sequence[Any]], timeout_s: float | None = None
    ) -> list[CallOutcome]:
        """``[call(fn, *args) for args in arg_tuples]``, running up to ``workers`` calls at once."""
        items = [tuple(a) for a in arg_tuples]
        if not items:
            return []
        if len(items) == 1 or self.workers == 1:
            return [self.call(fn, *a, timeout_s=timeout_s) for a in items]
        with ThreadPoolExecutor(max_workers=min(self.workers, len(items))) as executor:
            return list(executor.map(lambda a: self.call(fn, *a, timeout_s=timeout_s), items))

    def warm_up(self) -> None:
        """Start every worker (and spare) now and wait until they are ready; otherwise they start on first use."""
        self._ensure_generation().wait_full(self.startup_timeout_s * (self.workers + self.spares))

    @property
    def live_workers(self) -> int:
        """Worker processes of this pool started and not killed (idle or busy); 0 before first use, after
        :meth:`close` and in a process that inherited the pool through ``fork``."""
        with self._lock:
            generation = self._generation if self._pid == os.getpid() else None
        if generation is None:
            return 0
        with generation.cond:
            return len(generation.live)

    def close(self) -> None:
        """Kill every worker; the pool starts new ones if used again."""
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()
            self._reset()

    # -- internals -------------------------------------------------------------------------------
    def _ensure_generation(self) -> _Workers:
        with self._lock:
            if self._pid != os.getpid():  # inherited through fork: the parent's workers are not ours
                if self._finalizer is not None:
                    self._finalizer.detach()
                self._reset()
            if self._generation is None:
                spawn = functools.partial(
                    _spawn_worker, self.preload, self.memory_limit_mb, self.startup_timeout_s, self.warm_call
                )
                target = self.workers + self.spares
                parallel = max(1, min(target, available_cpus() // 2))
                self._generation = _Workers(spawn, target, parallel, self.budget)
                self._finalizer = weakref.finalize(self, _Workers.close, self._generation)
            return self._generation


class PoolLease:
    """One holder's use of a pool shared in this process (see :func:`shared_pool`)."""

    def __init__(self, key: tuple[Any, ...], pool: HardTimeoutPool) -> None:
        self.key = key
        self.pool = pool
        self.held = True

    def release(self) -> None:
        """Hand the pool back: the last holder's release stops its workers. Again after that (the holder used the
        pool meanwhile, which restarts it): stops it again when nobody else holds it."""
        with _SHARED_LOCK:
            entry = _SHARED.get(self.key)
            ours = entry is not None and entry[0] is self.pool
            if self.held and ours:
                assert entry is not None
                entry[1] -= 1
                if entry[1] > 0:
                    self.held = False
                    return
                del _SHARED[self.key]
            elif ours:
                return  # released already, and others hold it
            self.held = False
        self.pool.close()


_SHARED: dict[tuple[Any, ...], list[Any]] = {}  # settings -> [pool, holders]
_SHARED_LOCK = threading.Lock()


def shared_pool(**settings: Any) -> PoolLease:
    """A lease on this process's pool with these :class:`HardTimeoutPool` settings, started for the first holder
    and stopped when the last lets go, so that reward instances alike (the same reward in several routes or
    composites, replicas in one process) run on one set of workers instead of one each."""
    key = tuple(sorted(settings.items()))
    with _SHARED_LOCK:
        entry = _SHARED.get(key)
        if entry is None:
            entry = _SHARED[key] = [HardTimeoutPool(**settings), 0]
        entry[1] += 1
        return PoolLease(key, entry[0])


# -- worker side -------------------------------------------------------------------------------
#: This worker's connection to its caller, while serving; ``None`` in any other process.
_REPORT_CONN: Connection | None = None


def report(event: Any) -> None:
    """From inside a call running in a worker: send ``event`` (picklable) to the caller now and restart the
    call's ``timeout_s`` clock. Outside a worker it does nothing, so the same function also runs in-process."""
    if _REPORT_CONN is not None:
        _REPORT_CONN.send_bytes(_REPORT_TAG + pickle.dumps(event, protocol=pickle.HIGHEST_PROTOCOL))


def _die_with_parent() -> None:
    """Exit when the parent goes away (its end of the socket also closes, which ends an idle worker).

    ``PR_SET_PDEATHSIG`` is not used: it fires when the *thread* that started the worker exits,
    and workers are started from short-lived threads.
    """
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def _serve(fd: int, preload: str, memory_limit_mb: int) -> None:
    _die_with_parent()
    if memory_limit_mb > 0:
        try:
            import resource

            limit = memory_limit_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError):
            pass
    import importlib

    for name in filter(None, preload.split(",")):
        importlib.import_module(name)
    global _REPORT_CONN
    conn = _REPORT_CONN = Connection(fd)
    try:
        conn.send_bytes(b"ready")
    except OSError:
        return  # the parent is gone
    while True:
        try:
            request = conn.recv_bytes()
        except (EOFError, OSError):
            return
        try:
            fn, args = pickle.loads(request)
            reply = ("ok", fn(*args))
        except BaseException as exc:  # report everything, including SystemExit and MemoryError
            reply = ("error", f"{type(exc).__name__}: {exc}"[:2000])
        try:
            data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            data = pickle.dumps(("error", f"result not picklable: {type(exc).__name__}"))
        try:
            conn.send_bytes(data)
        except OSError:
            return


if __name__ == "__main__":
    # Served by the imported module, not this ``__main__`` copy: :func:`report`, called by the functions the
    # worker runs, looks for the connection in ``rewardsmith.hard_timeout``.
    from rewardsmith.hard_timeout import _serve as serve

    serve(int(sys.argv[1]), sys.argv[2], int(sys.argv[3]))
