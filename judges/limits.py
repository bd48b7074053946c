"""Client-side request limits: requests per minute, tokens per minute, and requests in flight.

Providers answer 429 when a client exceeds its quota; pacing on the client side keeps a long
labelling run under the quota instead of spending it on retries. The limiter is a sliding
60-second window of reservations, first come first served: a caller reserves a slot (with an
estimate of its tokens), sleeps until the slot opens, and later corrects the estimate with the
usage the server reported.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import threading
import time
from typing import Any

from rewardsmith.judges.base import ChatParams, Message
from rewardsmith.transient import KeepsConfig

WINDOW_S = 60.0


def estimate_tokens(messages: list[Message], params: ChatParams) -> int:
    """A cheap upper-ish estimate before the call: ~4 characters per token plus the completion budget."""
    chars = sum(len(str(m.get("content", ""))) + 8 for m in messages)
    return chars // 4 + params.max_tokens


class RateLimiter(KeepsConfig):
    """Sliding-window rpm/tpm limiter shared by threads (``reserve`` returns how long to wait)."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None, *, clock=time.monotonic) -> None:
        if (rpm is not None and rpm <= 0) or (tpm is not None and tpm <= 0):
            raise ValueError("rpm and tpm must be positive (or None for no limit)")
        self.rpm = rpm
        self.tpm = tpm
        self.clock = clock
        self._lock = threading.Lock()
        self._events: collections.OrderedDict[int, list[float]] = collections.OrderedDict()  # id -> [time, tokens]
        self._ids = itertools.count()

    _PICKLED = ("rpm", "tpm")

    def _rebuild(self) -> None:
        type(self).__init__(self, self.rpm, self.tpm)

    @property
    def active(self) -> bool:
        return self.rpm is not None or self.tpm is not None

    def reserve(self, tokens: int) -> tuple[int, float]:
        """Book the earliest slot for a request of ``tokens``; returns ``(reservation id, seconds to wait)``."""
        with self._lock:
            now = self.clock()
            while self._events and next(iter(self._events.values()))[0] <= now - WINDOW_S:
                self._events.popitem(last=False)
            # First come, first served: never book before the latest reservation.
            start = max([now, *(event[0] for event in self._events.values())])
            while True:
                window = [e for e in self._events.values() if e[0] > start - WINDOW_S]
                too_many = self.rpm is not None and len(window) + 1 > self.rpm
                too_big = self.tpm is not None and window and sum(e[1] for e in window) + tokens > self.tpm
                if not (too_many or too_big):
                    break
                start = window[0][0] + WINDOW_S + 1e-3
            reservation = next(self._ids)
            self._events[reservation] = [start, float(tokens)]
            return reservation, max(0.0, start - now)

    def settle(self, reservation: int, tokens: int) -> None:
        """Replace a reservation's estimate with the tokens actually used."""
        with self._lock:
            event = self._events.get(reservation)
            if event is not None:
                event[1] = float(tokens)

    def wait(self, tokens: int) -> int:
        reservation, delay = self.reserve(tokens)
        if delay > 0:
            time.sleep(delay)
        return reservation

    async def await_slot(self, tokens: int) -> int:
        reservation, delay = self.reserve(tokens)
        if delay > 0:
            await asyncio.sleep(delay)
        return reservation


class ConcurrencyLimit(KeepsConfig):
    """At most ``n`` requests in flight: a thread semaphore for sync calls, one asyncio semaphore per loop."""

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError("concurrency must be >= 1")
        self.n = n
        self._threads = threading.BoundedSemaphore(n)
        self._loops: dict[int, tuple[Any, asyncio.Semaphore]] = {}
        self._lock = threading.Lock()

    _PICKLED = ("n",)

    def _rebuild(self) -> None:
        type(self).__init__(self, self.n)

    @property
    def sync(self) -> threading.BoundedSemaphore:
        return self._threads

    def for_loop(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._loops.get(id(loop))
            if entry is None or entry[0] is not loop:
                self._loops = {k: v for k, v in self._loops.items() if not v[0].is_closed()}
                entry = (loop, asyncio.Semaphore(self.n))
                self._loops[id(loop)] = entry
            return entry[1]
