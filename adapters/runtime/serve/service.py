"""The server's state and its one verb, *score under admission and deadline*, free of HTTP.

:class:`RewardService` owns the served rewards, the admission control, the metrics and one micro-batcher per
served reward (:mod:`.batching`: concurrent requests share batches; work past a deadline keeps its slot).
The FastAPI app (and a Ray Serve replica wrapping it) is a thin layer of parsing and status
codes over :meth:`RewardService.score`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from rewardsmith.adapters.runtime.serve.admission import Admission
from rewardsmith.adapters.runtime.serve.batching import MicroBatcher, wait_entry
from rewardsmith.adapters.runtime.serve.metrics import ServeMetrics
from rewardsmith.adapters.runtime.serve.scoring import BadRequest, prepare
from rewardsmith.adapters.runtime.serve.settings import ServeSettings
from rewardsmith.adapters.runtime.serve.specs import ServedReward, check_openrlhf_labels
from rewardsmith.reward import Reward, warm_up_all
from rewardsmith.types import RewardResult

logger = logging.getLogger(__name__)


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
        check_openrlhf_labels(self.rewards, self.settings.openrlhf_reward)
        behind_get_reward = self.settings.openrlhf_reward or next(iter(self.rewards))
        for name, served in self.rewards.items():
            if served.label_problem and name != behind_get_reward:
                logger.warning("POST /get_reward/%s refuses plain labels: %s", name, served.label_problem)
        self.token = self.settings.token()
        self.admission = Admission(self.settings.workers, self.settings.max_queue, self.settings.max_batch)
        self.metrics = ServeMetrics()
        self.metrics.queue_depth.set_function(lambda: self.admission.queued)
        self.metrics.busy_workers.set_function(lambda: self.admission.active)
        self.http_in_flight = 0
        self.monitor = self._monitor()
        self.batchers = {
            name: MicroBatcher(
                served.reward,
                self.admission,
                chunk_size=self.settings.chunk_size,
                max_batch=self.settings.max_batch,
                wait_s=self.settings.batch_wait_ms / 1000,
                abandon_after_s=self.settings.abandon_after_s,
                whole_requests=served.whole_batch,
                on_batch=self.metrics.batch_samples.labels(name).observe,
            )
            for name, served in self.rewards.items()
        }

    def _monitor(self) -> Any:
        config = self.settings.monitor
        if config is None:
            return None
        from rewardsmith.adapters.runtime.serve.monitoring import ServeMonitor

        watched = list(self.settings.monitor_rewards or self.rewards)
        unknown = [name for name in watched if name not in self.rewards]
        if unknown:
            raise ValueError(
                f"monitor_rewards names rewards not served: {', '.join(unknown)}; served: {', '.join(self.rewards)}"
            )
        return ServeMonitor(config, watched, self.metrics.registry)

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

    def warm_up(self) -> None:
        """Start every served reward's pools and sandboxes (at once) and wait until they are ready.

        The app runs this before it listens, so the ready line and ``/healthz`` come after it: the first request
        does not meet a cold pool (a math worker starts in 5-9 s on a loaded machine)."""
        warm_up_all(
            [*(served.reward for served in self.rewards.values()), *(self.monitor.shadows if self.monitor else [])]
        )

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
        self.served(name)
        if len(completions) > self.settings.max_samples:
            raise BadRequest(
                f"{len(completions)} completions in one request; the limit is {self.settings.max_samples}", status=413
            )
        texts, rows, early = prepare(completions, columns)
        deadline = min(deadline_s or self.settings.deadline_s, self.settings.deadline_s)
        todo = [i for i, answer in enumerate(early) if answer is None]
        if not texts:
            return [], []
        results: list[RewardResult] = [r for r in early if r is not None] if not todo else []
        timings = [0.0] * len(texts)
        if todo:
            self.admission.admit()  # QueueFull propagates: the caller answers 429
            batcher = self.batchers[name]
            entry = batcher.submit([texts[i] for i in todo], [rows[i] for i in todo])
            left = deadline - (time.monotonic() - arrived)
            scored, scored_timings = await wait_entry(batcher, entry, left, deadline)
            merged: list[RewardResult | None] = list(early)
            for i, result, seconds in zip(todo, scored, scored_timings, strict=True):
                merged[i], timings[i] = result, seconds
            results = [r for r in merged if r is not None]
        self.metrics.observe_samples(name, results, timings)
        if self.monitor is not None:
            self.monitor.record(name, completions, results, columns)
        return results, timings
