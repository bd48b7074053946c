"""The one transport under every rewardsmith HTTP client: pooled httpx connections, reused across requests.

Sync calls share one ``httpx.Client`` (thread-safe); async calls share one ``httpx.AsyncClient`` per running event
loop, because an async connection belongs to the loop that opened it. A client whose loop has closed is dropped
(``aclose`` inside the loop closes it properly: ``bridge.run_sync(..., close=transport)``). After ``fork`` the
child starts with no connections (sockets shared with the parent would interleave), and a pickled transport
arrives without any.
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections.abc import Mapping
from typing import Any

import httpx

from rewardsmith.transient import KeepsConfig

Timeout = float | httpx.Timeout

_LIVE: weakref.WeakSet[Transport] = weakref.WeakSet()


class Transport(KeepsConfig):
    """httpx clients built on first use with these headers and limits."""

    def __init__(
        self,
        *,
        timeout: Timeout = 60.0,
        headers: Mapping[str, str] | None = None,
        limits: httpx.Limits | None = None,
    ) -> None:
        self.timeout = timeout
        self.headers = dict(headers or {})
        self.limits = limits
        self._reset()

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._sync: httpx.Client | None = None
        self._async: dict[int, tuple[asyncio.AbstractEventLoop, httpx.AsyncClient]] = {}
        _LIVE.add(self)

    _PICKLED = ("timeout", "headers", "limits")

    def _rebuild(self) -> None:
        self._reset()

    def _options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"timeout": self.timeout, "headers": self.headers}
        if self.limits is not None:
            options["limits"] = self.limits
        return options

    def client(self) -> httpx.Client:
        with self._lock:
            if self._sync is None:
                self._sync = httpx.Client(**self._options())
            return self._sync

    def aclient(self) -> httpx.AsyncClient:
        """The running loop's async client (call from inside a coroutine)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._async.get(id(loop))
            if entry is None or entry[0] is not loop:
                self._async = {key: value for key, value in self._async.items() if not value[0].is_closed()}
                entry = (loop, httpx.AsyncClient(**self._options()))
                self._async[id(loop)] = entry
            return entry[1]

    async def aclose(self) -> None:
        """Close the running loop's async client (before the loop ends, so no connection outlives it)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._async.pop(id(loop), None)
        if entry is not None and entry[0] is loop:
            await entry[1].aclose()

    def close(self) -> None:
        """Close the sync client; async clients are closed by :meth:`aclose` in their own loops."""
        with self._lock:
            client, self._sync = self._sync, None
        if client is not None:
            client.close()

    def _forget(self) -> None:
        """In a forked child: drop the parent's connections without closing them (they are the parent's)."""
        self._reset()


def _after_fork() -> None:
    for transport in list(_LIVE):
        transport._forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)

_shared: Transport | None = None
_shared_lock = threading.Lock()


def shared_transport() -> Transport:
    """The process's transport for one-off requests (:func:`rewardsmith.http.post_json` and friends)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Transport()
        return _shared
