"""The three places a sync face is called from: plain code, a coroutine inside a running loop, a plain thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any


def plain(face: Callable[[], Any]) -> Any:
    return face()


def inside_a_running_loop(face: Callable[[], Any]) -> Any:
    async def caller() -> Any:
        return face()  # the sync face called by a coroutine

    return asyncio.run(caller())


def in_a_plain_thread(face: Callable[[], Any]) -> Any:
    results: list[Any] = []
    thread = threading.Thread(target=lambda: results.append(face()))
    thread.start()
    thread.join(60)
    return results[0]


CALL_SITES = [plain, inside_a_running_loop, in_a_plain_thread]
