"""The one crossing between sync and async code: every strategy is written once, async, with a one-line sync face.

- :func:`run_sync` runs a coroutine to its result from sync code on this thread's own event loop, kept between
  calls (one per thread, never shared). An async HTTP client is bound to the loop that made it (the OpenAI client
  keeps one SDK client per loop), so a kept loop lets a judge client reuse its client and connections across sync
  calls instead of building both per call: ``bench/bridge_reuse.py`` measures it. Inside a running loop (a
  notebook, an async trainer calling a sync reward), where ``asyncio.run`` refuses, the coroutine runs on the kept
  loop of a worker thread that belongs to the calling thread. Tasks a coroutine leaves behind are cancelled when it
  returns, as ``asyncio.run`` does.
- ``close=client`` (an object with ``async aclose()``, a judge client) names connections to close with the loop:
  at :func:`close_thread_loop`, once the loop's thread has ended (the next thread that opens a loop, or calls
  :func:`close_thread_loop`, closes the loops of ended threads) and at interpreter exit. A forked child opens loops
  of its own and never touches its parent's.
- :func:`run_inline` drives a coroutine that never suspends (a reward's async core on its sync path) without any
  loop, so a sync call costs no loop and no thread.
- :func:`to_async` is the other direction: a blocking call awaited from a worker thread, so the loop stays free.

>>> async def twice(x):
...     return 2 * x
>>> run_sync(twice(21))
42
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextvars
import logging
import os
import threading
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["close_thread_loop", "closing", "run_inline", "run_sync", "to_async"]

logger = logging.getLogger(__name__)


def run_sync(coroutine: Coroutine[Any, Any, T], *, close: Any = None) -> T:
    """Run ``coroutine`` to completion from sync code, inside or outside a running loop, from any thread.

    ``close``: an object with ``async aclose()`` (a judge client) whose connections of the loop that ran the
    coroutine are closed when that loop closes, so nothing bound to a finished loop outlives it.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _thread_state().run(coroutine, close)
    # Called from inside a running loop: this thread's worker thread runs it, with the caller's context variables.
    context = contextvars.copy_context()
    return _thread_state().worker().submit(context.run, _run_here, coroutine, close).result()


def close_thread_loop() -> None:
    """Close this thread's kept loop (and its worker's), closing the connections named by ``close=`` first.

    Also closes the loops of threads that have ended. A later :func:`run_sync` in this thread opens a new loop.
    Called from a coroutine (a loop runs in this thread), it closes the worker's loop only.
    """
    state: _ThreadState | None = getattr(_here, "state", None)
    if _loop_running():
        if state is not None:
            state.close_worker(wait=True)
        return
    if state is not None:
        state.close(wait=True)
        _here.state = None
        with _lock:
            _states.pop(state.thread, None)
    _close_ended()


async def closing(client: Any, coroutine: Coroutine[Any, Any, T]) -> T:
    """Await ``coroutine``, then close the client's connections of this loop (for a client the loop cannot track)."""
    try:
        return await coroutine
    finally:
        aclose = getattr(client, "aclose", None)
        if aclose is not None:
            await aclose()


def run_inline(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends (an async core on its sync path) to its result, without a loop.

    This is what lets each family and composite write its scoring once as ``async def`` and still serve
    TRL's plain sync call from any thread, inside or outside a running event loop.
    """
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("an inline (sync) scoring path awaited real I/O; use the async path instead")


async def to_async(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Await a blocking ``function(*args, **kwargs)`` in a worker thread (the loop keeps serving other tasks)."""
    return await asyncio.to_thread(function, *args, **kwargs)


# -- the kept loops ----------------------------------------------------------------------------------------------


class _ThreadState:
    """What one thread keeps between sync calls: its event loop, the clients to close with it, its worker thread."""

    def __init__(self, thread: threading.Thread) -> None:
        self.thread = thread
        self.loop: asyncio.AbstractEventLoop | None = None
        self.clients: weakref.WeakSet[Any] = weakref.WeakSet()
        self._worker: concurrent.futures.ThreadPoolExecutor | None = None

    def run(self, coroutine: Coroutine[Any, Any, T], close: Any) -> T:
        if self.loop is None or self.loop.is_closed():
            self.loop = asyncio.new_event_loop()
        if close is not None:
            try:
                self.clients.add(close)
            except TypeError:  # not weakly referable: close its connections after this call, as a private loop did
                coroutine = closing(close, coroutine)
        try:
            return self.loop.run_until_complete(coroutine)
        finally:
            _cancel_left_tasks(self.loop)

    def worker(self) -> concurrent.futures.ThreadPoolExecutor:
        # One thread per calling thread: a coroutine on the worker's loop that calls a sync face again gets the
        # worker's own worker, so nested crossings never wait on a thread that waits on them.
        if self._worker is None:
            self._worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewardsmith-bridge")
        return self._worker

    def close_worker(self, *, wait: bool) -> None:
        """Have the worker close its own loop, then let it end."""
        worker, self._worker = self._worker, None
        if worker is None:
            return
        try:
            done = worker.submit(close_thread_loop)
            if wait:
                done.result()
        except RuntimeError:  # interpreter exit: the worker has ended already (its loop is closed as an ended one)
            pass
        worker.shutdown(wait=wait)

    def close(self, *, wait: bool) -> None:
        """Close the worker's loop and this one (never raises); only where no loop runs in the calling thread."""
        self.close_worker(wait=wait)
        loop, self.loop = self.loop, None
        if loop is None or loop.is_closed():
            return
        try:
            for client in list(self.clients):
                try:
                    loop.run_until_complete(client.aclose())
                except Exception as exc:  # a client that fails to close must not stop the others
                    logger.debug("closing %r on its loop failed: %s", client, exc)
            _cancel_left_tasks(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
        except Exception as exc:
            logger.debug("finishing a kept event loop failed: %s", exc)
        finally:
            loop.close()


def _run_here(coroutine: Coroutine[Any, Any, T], close: Any) -> T:
    return _thread_state().run(coroutine, close)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _cancel_left_tasks(loop: asyncio.AbstractEventLoop) -> None:
    left = asyncio.all_tasks(loop)
    if not left:
        return
    for task in left:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))


_here = threading.local()
_states: dict[threading.Thread, _ThreadState] = {}
_lock = threading.Lock()


def _thread_state() -> _ThreadState:
    state: _ThreadState | None = getattr(_here, "state", None)
    if state is None:
        _close_ended()
        state = _ThreadState(threading.current_thread())
        with _lock:
            _states[state.thread] = state
        _here.state = state
    return state


def _close_ended() -> None:
    """Close the loops of threads that have ended (nothing runs them any more, so any thread without a running loop
    may)."""
    if _loop_running():
        return
    with _lock:
        ended = [state for thread, state in _states.items() if not thread.is_alive()]
        for state in ended:
            del _states[state.thread]
    for state in ended:
        state.close(wait=False)


def _close_at_exit() -> None:
    # Daemon threads may still be running their loops: only this thread's and ended threads' loops are closed.
    with _lock:
        mine = [s for t, s in _states.items() if t is threading.current_thread() or not t.is_alive()]
        _states.clear()
    for state in mine:
        state.close(wait=False)


def _forget_after_fork() -> None:
    # The parent's loops and connections are the parent's: a child closes nothing of them and opens its own.
    global _here, _lock
    _here = threading.local()
    _lock = threading.Lock()
    _states.clear()


atexit.register(_close_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
