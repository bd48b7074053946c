"""The server's state and its one verb, *score under admission and deadline*, free of HTTP.

:class:`RewardService` owns the served rewards, the admission control, the metrics and the set of scoring
jobs still running past their deadline. The FastAPI app (and a Ray Serve replica wrapping it) is a thin
layer of parsing and status codes over :meth:`RewardService.score`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

from rewardkit.adapters.serve.admission import Admission
from rewardkit.adapters.serve.metrics import ServeMetrics
from rewardkit.adapters.serve.scoring import BadRequest, ScoringJob, prepare
from rewardkit.adapters.serve.settings import ServeSettings
from rewardkit.adapters.serve.specs import ServedReward
from rewardkit.reward import Reward
from rewardkit.types import RewardResult


class UnknownReward(BadRequest):
    def __init__(self, name: str, served: Sequence[str]) -> None:
        super().__init__(f"unknown reward {name!r}; served: {', '.join(served) or 'none'}", status=404)


class RewardService:
    """Served rewards + admission + metrics; every call happens on the serving event loop."""

    def __init__(self, rewards: Mapping[str, Reward | ServedReward], settings: ServeSettings | None = None) -> None:
        if not rewards:
            raise ValueError("a reward server needs at least one reward")
        self.settings = settings or ServeSettings()
        self.rewards: dict[str, ServedReward] = {name: ServedReward.wrap(r) for name, r in rewards.items()}
        self.token = self.settings.token()
        self.admission = Admission(self.settings.workers, self.settings.max_queue)
        self.metrics = ServeMetrics()
        self.metrics.queue_depth.set_function(lambda: self.admission.queued)
        self.metrics.busy_workers.set_function(lambda: self.admission.active)
        self.http_in_flight = 0
        self._overrunning: set[asyncio.Task] = set()

    # -- lookup ----------------------------------------------------------------------------------
    def served(self, name: str) -> ServedReward:
        try:
            return self.rewards[name]
        except KeyError:
            raise UnknownReward(name, list(self.rewards)) from None

    def openrlhf_reward(self, name: str | None = None) -> tuple[str, ServedReward]:
        chosen = name or self.settings.openrlhf_reward or next(iter(self.rewards))
        return chosen, self.served(chosen)

    def describe(self) -> list[dict[str, Any]]:
        return [served.describe(name) for name, served in self.rewards.items()]

    @property
    def idle(self) -> bool:
        """Nothing admitted, nothing overrunning, no request between the door and the queue."""
        return self.admission.idle and self.http_in_flight == 0

    # -- scoring ---------------------------------------------------------------------------------
    async def score(
        self,
        name: str,
        completions: Sequence[Any],
        columns: Mapping[str, Sequence[Any]],
        deadline_s: float | None = None,
        arrived: float | None = None,
    ) -> tuple[list[RewardResult], list[float]]:
        """Score a request on the served reward ``name``; raises :class:`BadRequest` or ``QueueFull``."""
        arrived = time.monotonic() if arrived is None else arrived
        served = self.served(name)
        if len(completions) > self.settings.max_samples:
            raise BadRequest(
                f"{len(completions)} completions in one request; the limit is {self.settings.max_samples}", status=413
            )
        texts, rows, early = prepare(completions, columns)
        deadline = min(deadline_s or self.settings.deadline_s, self.settings.deadline_s)
        if not texts:
            return [], []
        try:  # QueueFull propagates: the caller answers 429
            await asyncio.wait_for(self.admission.acquire(), timeout=max(0.0, deadline - (time.monotonic() - arrived)))
        except asyncio.TimeoutError:
            reason = f"deadline: no worker free within {deadline:.3g} s"
            results = [r or RewardResult.unscorable(reason) for r in early]
            timings = [0.0] * len(results)
            self.metrics.observe_samples(name, results, timings)
            return results, timings
        slot_taken = time.monotonic()
        job: ScoringJob | None = None
        try:
            chunk = len(texts) if served.whole_batch else self.settings.chunk_size
            job = ScoringJob(served.reward, texts, rows, early, chunk)
            left = deadline - (time.monotonic() - arrived)
            results, timings = await job.wait(left, deadline)
        except BaseException:  # e.g. cancelled: started work still holds its slot until it ends
            if job is not None and not job.done:
                self._hold_until_settled(job, slot_taken)
            else:
                self.admission.release()
            raise
        if job.done:
            self.admission.release(time.monotonic() - slot_taken)
        else:
            self._hold_until_settled(job, slot_taken)
        self.metrics.observe_samples(name, results, timings)
        return results, timings

    def _hold_until_settled(self, job: ScoringJob, slot_taken: float) -> None:
        """Work past the deadline keeps its worker slot until it ends (or is cancelled after ``abandon_after_s``)."""

        async def settle() -> None:
            try:
                await job.settled(self.settings.abandon_after_s)
            finally:
                self.admission.release(time.monotonic() - slot_taken)

        task = asyncio.ensure_future(settle())
        self._overrunning.add(task)
        task.add_done_callback(self._overrunning.discard)
