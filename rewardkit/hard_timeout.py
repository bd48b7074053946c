"""Run picklable functions in worker processes with a hard per-call timeout.

Why not ``signal.alarm`` (what math-verify does): it only works in the main thread of the main
interpreter, and it cannot interrupt a long C call (``10**10**10``). Here each call runs in a separate
worker process; on overrun the worker's process group is killed and a fresh one is started in the
background, so the caller gets :data:`CallStatus.TIMEOUT` after ``timeout_s`` plus a few milliseconds,
from any thread and from inside spawned or daemonic processes.

Workers are plain ``python -m rewardkit.hard_timeout`` subprocesses talking over a socketpair (no
``multiprocessing``: no re-import of the caller's ``__main__``, no "daemonic processes are not allowed
to have children"). Functions travel by reference, so they must be importable module-level functions.

>>> pool = HardTimeoutPool(workers=2, timeout_s=1.0)
>>> pool.call(pow, 2, 10).value
1024
>>> pool.close()
"""

from __future__ import annotations

import contextlib
import enum
import os
import pickle
import queue
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

#: How long a fresh worker may take to import its preload modules and say it is ready.
DEFAULT_STARTUP_TIMEOUT_S = 60.0


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

    @property
    def ok(self) -> bool:
        return self.status is CallStatus.OK


class _Worker:
    """One worker subprocess and its end of the socketpair; used by one caller thread at a time."""

    def __init__(self, preload: Sequence[str], memory_limit_mb: int | None, startup_timeout_s: float) -> None:
        parent_sock, child_sock = socket.socketpair()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        args = [sys.executable, "-m", "rewardkit.hard_timeout", str(child_sock.fileno()), ",".join(preload)]
        args.append(str(memory_limit_mb or 0))
        try:
            self.proc = subprocess.Popen(
                args,
                pass_fds=[child_sock.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=env,
                start_new_session=True,  # its own process group, so a kill takes any children too
            )
        finally:
            child_sock.close()
        self.conn = Connection(parent_sock.detach())
        if not self.conn.poll(startup_timeout_s):
            self.kill()
            raise RuntimeError(f"worker did not start within {startup_timeout_s:.0f} s")
        try:
            self.conn.recv_bytes()
        except (EOFError, OSError) as exc:
            self.kill()
            raise RuntimeError(f"worker exited during start-up (exit code {self.proc.poll()})") from exc

    def run(self, payload: bytes, timeout_s: float) -> CallOutcome:
        start = time.monotonic()
        try:
            self.conn.send_bytes(payload)
            if not self.conn.poll(timeout_s):
                self.kill(wait=False)
                return CallOutcome(CallStatus.TIMEOUT, error=f"timeout after {timeout_s:g} s",
                                   elapsed_s=time.monotonic() - start)
            reply = self.conn.recv_bytes()
        except (EOFError, OSError) as exc:
            self.kill()
            code = self.proc.poll()
            return CallOutcome(CallStatus.CRASHED, error=f"worker died (exit code {code}): {type(exc).__name__}",
                               elapsed_s=time.monotonic() - start)
        elapsed = time.monotonic() - start
        try:
            status, value = pickle.loads(reply)
        except Exception as exc:  # e.g. a result class this process cannot import
            return CallOutcome(CallStatus.ERROR, error=f"result not readable: {type(exc).__name__}: {exc}",
                               elapsed_s=elapsed)
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


def _kill_all(workers: list[_Worker]) -> None:
    for worker in list(workers):
        worker.kill()
    workers.clear()


class HardTimeoutPool:
    """A lazily started pool of worker processes; each call is killed if it overruns ``timeout_s``.

    Args:
        workers: number of worker processes (default ``os.cpu_count()``).
        timeout_s: per-call limit, counted from the moment the call reaches a ready worker.
        preload: modules each worker imports before it reports ready (so the first call is not slow).
        warm_call: ``(fn, args)`` run once in each new worker before it takes calls (lazy caches, parsers);
            its result is ignored and its time is not charged to any caller's timeout.
        memory_limit_mb: ``RLIMIT_AS`` of each worker; an allocation past it fails inside the worker.
        startup_timeout_s: how long a worker may take to start.

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
    ) -> None:
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        n = workers if workers is not None else (os.cpu_count() or 1)
        if n < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.workers = n
        self.timeout_s = float(timeout_s)
        self.preload = tuple(preload)
        self.warm_call = warm_call
        self.memory_limit_mb = memory_limit_mb
        self.startup_timeout_s = startup_timeout_s
        self._reset()

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._slots: queue.Queue[_Worker | None] | None = None
        self._live: list[_Worker] = []
        self._finalizer: weakref.finalize | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("workers", "timeout_s", "preload", "warm_call", "memory_limit_mb",
                                               "startup_timeout_s")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset()

    # -- public API ------------------------------------------------------------------------------
    def call(self, fn: Callable[..., Any], *args: Any, timeout_s: float | None = None) -> CallOutcome:
        """Run ``fn(*args)`` in a worker; never raises, never waits past the timeout once a worker is ready."""
        try:
            payload = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            return CallOutcome(CallStatus.ERROR, error=f"cannot send call: {type(exc).__name__}: {exc}")
        slots = self._ensure_slots()
        worker = slots.get()
        outcome: CallOutcome | None = None
        try:
            if worker is None or not worker.alive:
                worker = None
                worker = self._start_worker()
            outcome = worker.run(payload, self.timeout_s if timeout_s is None else timeout_s)
        except Exception as exc:
            what = "could not start worker" if worker is None else "worker failed"
            outcome = CallOutcome(CallStatus.CRASHED, error=f"{what}: {type(exc).__name__}: {exc}")
            if worker is not None:
                worker.kill(wait=False)
        finally:  # the slot always goes back, whatever happened (even KeyboardInterrupt)
            self._return_slot(slots, worker)
        return outcome

    def map(self, fn: Callable[..., Any], arg_tuples: Iterable[Sequence[Any]],
            timeout_s: float | None = None) -> list[CallOutcome]:
        """``[call(fn, *args) for args in arg_tuples]``, running up to ``workers`` calls at once."""
        items = [tuple(a) for a in arg_tuples]
        if not items:
            return []
        if len(items) == 1 or self.workers == 1:
            return [self.call(fn, *a, timeout_s=timeout_s) for a in items]
        with ThreadPoolExecutor(max_workers=min(self.workers, len(items))) as executor:
            return list(executor.map(lambda a: self.call(fn, *a, timeout_s=timeout_s), items))

    def warm_up(self) -> None:
        """Start every worker now (otherwise each starts on first use)."""
        slots = self._ensure_slots()
        taken = [slots.get() for _ in range(self.workers)]

        def ready(worker: _Worker | None) -> _Worker | None:
            if worker is not None and worker.alive:
                return worker
            try:
                return self._start_worker()
            except Exception:
                return None  # the next call retries

        with ThreadPoolExecutor(max_workers=self.workers) as executor:  # start them side by side
            for worker in executor.map(ready, taken):
                slots.put(worker)

    def close(self) -> None:
        """Kill every worker; the pool starts new ones if used again."""
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()
            self._reset()

    # -- internals -------------------------------------------------------------------------------
    def _ensure_slots(self) -> queue.Queue[_Worker | None]:
        with self._lock:
            if self._pid != os.getpid():  # inherited through fork: the parent's workers are not ours
                if self._finalizer is not None:
                    self._finalizer.detach()
                self._reset()
            if self._slots is None:
                self._slots = queue.Queue()
                for _ in range(self.workers):
                    self._slots.put(None)
                self._finalizer = weakref.finalize(self, _kill_all, self._live)
            return self._slots

    def _start_worker(self) -> _Worker:
        worker = _Worker(self.preload, self.memory_limit_mb, self.startup_timeout_s)
        if self.warm_call is not None:
            fn, args = self.warm_call
            worker.run(pickle.dumps((fn, tuple(args)), protocol=pickle.HIGHEST_PROTOCOL), self.startup_timeout_s)
            if not worker.alive:
                raise RuntimeError("worker died during its warm-up call")
        with self._lock:
            self._live.append(worker)
        return worker

    def _forget(self, worker: _Worker) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._live.remove(worker)

    def _return_slot(self, slots: queue.Queue[_Worker | None], worker: _Worker | None) -> None:
        if worker is None or worker.alive:
            slots.put(worker)
            return
        self._forget(worker)
        # Reap and replace the killed worker off the caller's clock; the slot returns once it is ready.
        try:
            threading.Thread(target=self._refill, args=(slots, worker), daemon=True).start()
        except RuntimeError:  # no new threads (interpreter shutting down): the next caller starts one
            slots.put(None)

    def _refill(self, slots: queue.Queue[_Worker | None], dead: _Worker) -> None:
        dead.reap()
        try:
            slots.put(self._start_worker())
        except Exception:
            slots.put(None)  # the next caller retries the start


# -- worker side -------------------------------------------------------------------------------
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
    conn = Connection(fd)
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
    _serve(int(sys.argv[1]), sys.argv[2], int(sys.argv[3]))
