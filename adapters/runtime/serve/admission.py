"""Admission control: a fixed number of batches scored at once, a bounded wait, and draining.

A request is admitted on arrival (it waits in a queue of at most ``max_queue`` requests) or refused at once
(the server answers 429 with ``Retry-After``): under a flood the server's memory and latency stay bounded and
the client is told to go elsewhere. Admitted requests are scored in batches (:mod:`.batching`; one request or
several small ones), each holding one of ``workers`` slots until its scoring work has really finished (work
past the deadline included), so the numbers mean what they say. A request counts as queued until its batch
holds a slot. Draining (on SIGTERM) refuses new requests and lets admitted ones finish.
"""

from __future__ import annotations

import asyncio
import math
import time


class QueueFull(Exception):
    """No worker free and the queue is full."""

    def __init__(self, queued: int, max_queue: int, retry_after_s: int) -> None:
        super().__init__(f"server busy: {queued} requests queued (limit {max_queue}); retry after {retry_after_s} s")
        self.queued = queued
        self.max_queue = max_queue
        self.retry_after_s = retry_after_s


class Draining(Exception):
    """The server is shutting down and takes no new requests."""


class Admission:
    """Worker slots and a bounded queue on one event loop (no locks needed: all calls are on that loop)."""

    def __init__(self, workers: int, max_queue: int, requests_per_batch: int = 1) -> None:
        self.workers = workers
        self.max_queue = max_queue
        self.requests_per_batch = max(1, requests_per_batch)  # how many queued requests one batch may take
        self.active = 0
        self.queued = 0
        self.draining = False
        self.drain_started = 0.0
        self._slots: asyncio.Semaphore | None = None
        self._ewma_s = 1.0

    @property
    def slots(self) -> asyncio.Semaphore:
        # Created lazily, on the loop that serves (the app may be built before that loop exists).
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.workers)
        return self._slots

    @property
    def idle(self) -> bool:
        return self.active == 0 and self.queued == 0

    def retry_after_s(self) -> int:
        """Seconds until a queue position is likely free: the queue's length in mean batch times."""
        waves = (self.queued + 1) / (self.workers * self.requests_per_batch)
        return max(1, min(60, math.ceil(self._ewma_s * waves)))

    def admit(self) -> None:
        """Admit one request into the queue, or raise when refused."""
        if self.draining:
            raise Draining
        # Count every admitted request, running or waiting: a waiter woken by a release but not yet resumed is
        # still "queued", so testing active and queued apart would let the queue grow past max_queue.
        if self.active + self.queued >= self.workers + self.max_queue:
            raise QueueFull(self.active + self.queued - self.workers, self.max_queue, self.retry_after_s())
        self.queued += 1

    async def take_slot(self) -> None:
        """Wait for a worker slot (for a batch of admitted requests; call :meth:`begin_batch` once it is held)."""
        await self.slots.acquire()

    def begin_batch(self, requests: int) -> None:
        """A batch of ``requests`` admitted requests holds its slot: they leave the queue, the slot is busy."""
        self.queued -= requests
        self.active += 1

    async def acquire(self) -> None:
        """Admit one request and take a worker slot for it alone, waiting in the queue if needed."""
        self.admit()
        try:
            await self.take_slot()
        except BaseException:
            self.queued -= 1
            raise
        self.begin_batch(1)

    def release(self, held_s: float | None = None) -> None:
        self.active -= 1
        self.slots.release()
        if held_s is not None:
            self._ewma_s = 0.8 * self._ewma_s + 0.2 * held_s

    def begin_drain(self) -> None:
        if not self.draining:
            self.draining = True
            self.drain_started = time.monotonic()
