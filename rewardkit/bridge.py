"""The one crossing between sync and async code: every strategy is written once, async, with a one-line sync face.

- :func:`run_sync` runs a coroutine to its result from sync code: on a private event loop in this thread, or, when
  this thread is already inside a running loop (a notebook, an async trainer calling a sync reward), on a private
  loop in a worker thread (``asyncio.run`` would refuse there). With ``close=client`` the client's connections of
  that loop are closed before the loop ends, not left to garbage collection.
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
import concurrent.futures
import contextvars
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["closing", "run_inline", "run_sync", "to_async"]


def run_sync(coroutine: Coroutine[Any, Any, T], *, close: Any = None) -> T:
    """Run ``coroutine`` to completion from sync code, inside or outside a running loop, from any thread.

    ``close``: an object with ``async aclose()`` (a judge client) whose connections of the private loop are closed
    when the coroutine ends, so nothing bound to the finished loop outlives it.
    """
    if close is not None:
        coroutine = closing(close, coroutine)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    # Called from inside a running loop: a private loop in a worker thread, with the caller's context variables.
    context = contextvars.copy_context()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewardkit-bridge") as pool:
        return pool.submit(context.run, asyncio.run, coroutine).result()


async def closing(client: Any, coroutine: Coroutine[Any, Any, T]) -> T:
    """Await ``coroutine``, then close the client's connections of this loop (its private loop is about to end)."""
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
