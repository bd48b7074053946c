"""Micro-batching: concurrent small requests for one reward are scored as one batch on one worker slot.

Trainers such as OpenRLHF send one HTTP request per sample; scored one request per worker slot, a burst of
thousands runs ``workers`` samples at a time and queues (or refuses) the rest. Here a request's samples join
the reward's *open* batch instead: the batch waits at most ``batch_wait_ms`` for company before asking for a
worker slot, keeps taking requests until it has its slot or ``max_batch`` samples, and is then scored as one
:class:`~.scoring.ScoringJob` (``chunk_size`` samples per reward call, in the scoring threads). A request is
never split; one larger than ``max_batch`` is a batch of its own. A reward that declares a batch dependency
(:meth:`~rewardsmith.reward.Reward.batch_dependency`) gets one request per batch, chunked by whole groups.

Admission stays per request: a request is admitted (or refused with 429) on arrival and counts as queued until
its batch holds a slot; a batch holds its slot until all of its work has settled, deadline overruns included.
Each request keeps its own deadline: one that passes before its batch starts is withdrawn from the batch.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.adapters.runtime.serve.admission import Admission
from rewardsmith.adapters.runtime.serve.scoring import ScoringJob
from rewardsmith.groups import dependency_of
from rewardsmith.reward import Reward
from rewardsmith.types import RewardResult


@dataclass(eq=False)
class Entry:
    """One request's samples in a batch."""

    texts: list[str | None]
    rows: list[dict[str, Any]]
    started: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    withdrawn: bool = False
    job: ScoringJob | None = None
    offset: int = 0


@dataclass(eq=False)
class Batch:
    entries: list[Entry] = field(default_factory=list)
    samples: int = 0
    launched: bool = False
    started: bool = False


class MicroBatcher:
    """Forms and runs the batches of one served reward (all calls on the serving event loop)."""

    def __init__(
        self,
        reward: Reward,
        admission: Admission,
        *,
        chunk_size: int,
        max_batch: int,
        wait_s: float,
        abandon_after_s: float,
        whole_requests: bool = False,
        on_batch: Callable[[int], None] | None = None,
    ) -> None:
        self.reward = reward
        self.admission = admission
        self.chunk_size = chunk_size
        # A reward whose score depends on the other samples (a group judge) is never given two requests in one
        # batch: their groups would merge. ``whole_requests`` (or a ``batch`` reward) also scores each request in
        # one call; a ``group`` reward is chunked by whole groups.
        dependency = dependency_of(reward)
        self.whole_requests = whole_requests or dependency == "batch"
        self.max_batch = 1 if self.whole_requests or dependency else max_batch
        self.wait_s = 0.0 if self.whole_requests or dependency else wait_s
        self.abandon_after_s = abandon_after_s
        self.on_batch = on_batch
        self.batches_started = 0
        self.samples_started = 0
        self._open: Batch | None = None
        self._running: set[asyncio.Task] = set()

    def submit(self, texts: list[str | None], rows: list[dict[str, Any]]) -> Entry:
        """Add an admitted request's samples to the open batch (a new one when it would overflow)."""
        entry = Entry(texts, rows)
        batch = self._open
        if batch is None or batch.started or (batch.samples and batch.samples + len(texts) > self.max_batch):
            batch = self._open = Batch()
            if self.wait_s > 0:
                asyncio.get_running_loop().call_later(self.wait_s, self._launch, batch)
        batch.entries.append(entry)
        batch.samples += len(texts)
        if batch.samples >= self.max_batch:
            self._open = None
            self._launch(batch)
        elif self.wait_s <= 0:
            self._launch(batch)
        return entry

    def withdraw(self, entry: Entry) -> bool:
        """Take a request whose batch has not started out of it; ``False`` when too late (it runs)."""
        if entry.started.done() or entry.withdrawn:
            return False
        entry.withdrawn = True
        self.admission.queued -= 1
        return True

    def _launch(self, batch: Batch) -> None:
        if batch.launched:
            return
        batch.launched = True
        task = asyncio.ensure_future(self._run(batch))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _run(self, batch: Batch) -> None:
        await self.admission.take_slot()
        batch.started = True
        if self._open is batch:
            self._open = None
        live = [entry for entry in batch.entries if not entry.withdrawn]
        self.admission.begin_batch(len(live))
        slot_taken = time.monotonic()
        if not live:
            self.admission.release()
            return
        texts = [text for entry in live for text in entry.texts]
        rows = [row for entry in live for row in entry.rows]
        chunk = len(texts) if self.whole_requests else self.chunk_size
        job = ScoringJob(self.reward, texts, rows, [None] * len(texts), chunk)
        offset = 0
        for entry in live:
            entry.job, entry.offset = job, offset
            offset += len(entry.texts)
            entry.started.set_result(None)
        self.batches_started += 1
        self.samples_started += len(texts)
        if self.on_batch is not None:
            self.on_batch(len(texts))
        try:
            await job.settled(self.abandon_after_s)
        finally:
            self.admission.release(time.monotonic() - slot_taken)


async def wait_entry(
    batcher: MicroBatcher, entry: Entry, left_s: float, deadline_s: float
) -> tuple[list[RewardResult], list[float]]:
    """The entry's results by its deadline; samples not scored by then are ``None`` with the reason."""
    started_at = time.monotonic()
    try:
        await asyncio.wait_for(asyncio.shield(entry.started), timeout=max(0.0, left_s))
    except asyncio.TimeoutError:
        if batcher.withdraw(entry):
            reason = f"deadline: no worker free within {deadline_s:.3g} s"
            return [RewardResult.unscorable(reason) for _ in entry.texts], [0.0] * len(entry.texts)
    except BaseException:  # the request was cancelled: its samples leave the batch if it has not started
        batcher.withdraw(entry)
        raise
    job = entry.job
    assert job is not None
    span = range(entry.offset, entry.offset + len(entry.texts))
    tasks = {task for i in span if (task := job.task_of[i]) is not None}
    left_s -= time.monotonic() - started_at
    if tasks:
        await asyncio.wait(tasks, timeout=max(0.0, left_s))
    reason = f"deadline: not scored within {deadline_s:.3g} s"
    results = [r if (r := job.results[i]) is not None else RewardResult.unscorable(reason) for i in span]
    timings = [job.timings[i] if job.results[i] is not None else max(0.0, left_s) for i in span]
    return results, timings
