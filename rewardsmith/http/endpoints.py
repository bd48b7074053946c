"""Several base URLs standing in for each other: which one gets the next request, and which ones rest.

A passive health check: an endpoint whose request failed rests for a cooldown that doubles with its consecutive
failures (or for the server's ``Retry-After``), capped; a success ends the rest at once. ``pick`` prefers the
endpoints that are up — in turn (``round_robin``) or the one with the fewest requests in flight (``least_busy``)
— and when every one rests it names the one back soonest and how long until then, so a caller can wait or fail.

Every method holds one lock and never blocks inside it, so one pool serves many threads and many asyncio tasks.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from rewardsmith.transient import KeepsConfig

Strategy = Literal["round_robin", "least_busy"]


@dataclass(frozen=True)
class EndpointHealth:
    """One endpoint as this process has seen it (``confirmed``: its last request succeeded)."""

    url: str
    up: bool
    resting_s: float
    failures: int
    in_flight: int
    sent: int
    failed: int
    confirmed: bool


@dataclass
class _State:
    down_until: float = 0.0
    failures: int = 0  # consecutive
    in_flight: int = 0
    sent: int = 0
    failed: int = 0
    confirmed: bool = False


class EndpointPool(KeepsConfig):
    """Base URLs with their health; one pool per client object, shared by all its threads and tasks."""

    def __init__(
        self,
        urls: str | Sequence[str],
        *,
        cooldown_s: float = 2.0,
        max_cooldown_s: float = 60.0,
        strategy: Strategy = "round_robin",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        urls = [urls] if isinstance(urls, str) else list(urls)
        if not urls:
            raise ValueError("an endpoint pool needs at least one URL")
        if len(set(urls)) != len(urls):
            raise ValueError(f"an endpoint is listed twice in {urls}")
        if cooldown_s < 0 or max_cooldown_s < 0:
            raise ValueError("cooldowns are not negative")
        self.urls: tuple[str, ...] = tuple(urls)
        self.cooldown_s = cooldown_s
        self.max_cooldown_s = max_cooldown_s
        self.strategy: Strategy = strategy
        self._clock = clock
        self._reset()

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._next = 0
        self._state = {url: _State() for url in self.urls}

    # Health is this process's observation on its monotonic clock: a copy in another process starts fresh.
    _PICKLED = ("urls", "cooldown_s", "max_cooldown_s", "strategy", "_clock")

    def _rebuild(self) -> None:
        self._reset()

    def __len__(self) -> int:
        return len(self.urls)

    def __repr__(self) -> str:
        return f"EndpointPool({list(self.urls)!r}, strategy={self.strategy!r})"

    # -- choosing ------------------------------------------------------------------------------------
    def pick(self, exclude: Collection[str] = ()) -> tuple[str, float]:
        """The endpoint for the next request and how long it still rests (0.0: up now).

        Up and not in ``exclude`` first, then up, then the one back soonest.
        """
        with self._lock:
            now = self._clock()
            up = [url for url in self.urls if self._state[url].down_until <= now]
            fresh = [url for url in up if url not in exclude]
            candidates = fresh or up
            if not candidates:
                url = min(self.urls, key=lambda u: self._state[u].down_until)
                return url, self._state[url].down_until - now
            if self.strategy == "least_busy":
                return min(candidates, key=lambda u: (self._state[u].in_flight, self.urls.index(u))), 0.0
            for offset in range(len(self.urls)):
                index = (self._next + offset) % len(self.urls)
                if self.urls[index] in candidates:
                    self._next = (index + 1) % len(self.urls)
                    return self.urls[index], 0.0
            raise AssertionError("unreachable: a candidate is one of the urls")

    @contextlib.contextmanager
    def using(self, url: str) -> Iterator[None]:
        """Count a request to ``url`` in flight for as long as the block runs (what ``least_busy`` reads)."""
        with self._lock:
            state = self._state[url]
            state.in_flight += 1
            state.sent += 1
        try:
            yield
        finally:
            with self._lock:
                state.in_flight -= 1

    # -- outcomes ------------------------------------------------------------------------------------
    def failed(self, url: str, retry_after_s: float | None = None) -> float:
        """Rest ``url`` (the server's ``retry_after_s`` or the doubling cooldown, capped); returns the rest."""
        with self._lock:
            state = self._state[url]
            state.failures += 1
            state.failed += 1
            state.confirmed = False
            rest = retry_after_s if retry_after_s is not None else self.cooldown_s * 2.0 ** (state.failures - 1)
            rest = min(self.max_cooldown_s, max(0.0, rest))
            state.down_until = self._clock() + rest
            return rest

    def succeeded(self, url: str) -> None:
        with self._lock:
            state = self._state[url]
            state.failures = 0
            state.down_until = 0.0
            state.confirmed = True

    # -- reading -------------------------------------------------------------------------------------
    def is_up(self, url: str) -> bool:
        with self._lock:
            return self._state[url].down_until <= self._clock()

    def confirmed(self, url: str) -> bool:
        """Whether ``url``'s last request succeeded (never tried, or failed since: not confirmed)."""
        with self._lock:
            return self._state[url].confirmed

    def health(self) -> dict[str, EndpointHealth]:
        """Every endpoint's state, in the pool's order."""
        with self._lock:
            now = self._clock()
            return {
                url: EndpointHealth(
                    url=url,
                    up=s.down_until <= now,
                    resting_s=max(0.0, s.down_until - now),
                    failures=s.failures,
                    in_flight=s.in_flight,
                    sent=s.sent,
                    failed=s.failed,
                    confirmed=s.confirmed,
                )
                for url, s in self._state.items()
            }
