"""``ray_pool``: any rewardsmith reward, its batches fanned out over a pool of Ray actors.

A drop-in for the reward it wraps: TRL, verl and ``rewardsmith score`` call it the same way, it logs under the inner
reward's name, and a batch scored on the pool equals the same batch scored locally, sample for sample, even when
an actor or a whole node dies mid-batch (its chunks are rerun on live actors). When there is no cluster to score
on, every sample is ``None`` with the reason — never 0.

    from rewardsmith.ray import RayPool

    reward = RayPool({"reward": {"name": "math_equivalence", "config": {"workers": 1}},
                      "num_actors": 8, "address": "auto"})
    reward(completions, solution=solutions)     # TRL's call; one float or None per completion

Set ``workers``/``concurrency`` of the inner reward to what one actor's ``actor_num_cpus`` allows: each actor
builds its own copy, and a default of "every CPU of the node" per actor oversubscribes the node.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from rewardsmith.adapters.runtime.ray.config import RayPoolConfig
from rewardsmith.adapters.runtime.ray.connect import ClusterUnavailable, connect
from rewardsmith.columns import misaligned_reasons
from rewardsmith.compose import build_reward
from rewardsmith.registry import register_reward
from rewardsmith.reward import Reward
from rewardsmith.transient import KeepsConfig
from rewardsmith.types import RewardResult

if TYPE_CHECKING:  # imported on the first batch at run time, like the rest of the Ray machinery
    from rewardsmith.adapters.runtime.ray.dispatch import ActorSet


@register_reward("ray_pool")
class RayPool(KeepsConfig, Reward[RayPoolConfig]):
    """Scores batches on Ray actors that each hold one warm copy of the inner reward.

    Connects lazily on the first batch and holds no live Ray handle in its pickled state, so it ships to a
    spawned scoring process like any other reward; the copy there connects on its own first batch.
    """

    name = "ray_pool"

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self.inner = build_reward(self.config.reward)
        self.__name__ = self.config.name or self.inner.__name__
        self._actors: ActorSet | None = None
        self._lock = threading.Lock()

    _PICKLED = ("config", "inner", "__name__")

    def _rebuild(self) -> None:
        self._actors = None
        self._lock = threading.Lock()

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        from rewardsmith.adapters.runtime.ray.dispatch import BatchRun

        if not completions:
            return []
        # a misaligned gold column is answered here, as the actors would, without a round trip to the cluster
        misaligned = misaligned_reasons(rows, self.gold_columns)
        if all(misaligned):
            return [RewardResult.unscorable(str(reason)) for reason in misaligned]
        with self._lock:
            try:
                actors = self._actor_set()
            except ClusterUnavailable as exc:
                return [RewardResult.unscorable(f"ray_pool: {exc}") for _ in completions]
            try:
                return BatchRun(actors, list(completions), list(rows), self.inner).run()
            except Exception as exc:  # the connection itself broke: start afresh on the next batch
                self._actors = None
                reason = f"ray_pool: Ray failed mid-batch: {type(exc).__name__}: {exc}"
                return [RewardResult.unscorable(reason) for _ in completions]

    def node_ids(self) -> list[str]:
        """Node of each live actor (after a batch, or after :meth:`warm_up`); for placement checks and logs."""
        with self._lock:
            actors = self._actors
            return _nodes(actors) if actors is not None else []

    def warm_up(self, timeout_s: float | None = None) -> list[str]:
        """Start the actors and wait until each has built its reward (or ``timeout_s`` passes); their nodes."""
        import time

        with self._lock:
            actors = self._actor_set()
            actors.fill()
            deadline = time.monotonic() + (timeout_s or self.config.actor_start_timeout_s)
            while actors.starting() and time.monotonic() < deadline:
                actors.poll(timeout_s=0.5)
            return _nodes(actors)

    def close(self) -> None:
        """Kill the actors (they also end with the driver); the next batch starts new ones."""
        with self._lock:
            if self._actors is not None:
                try:
                    self._actors.close()
                finally:
                    self._actors = None

    def _actor_set(self) -> ActorSet:
        from rewardsmith.adapters.runtime.ray.dispatch import ActorSet

        if self._actors is None:
            connect(
                self.config.address,
                connect_timeout_s=self.config.connect_timeout_s,
                namespace=self.config.namespace,
            )
            self._actors = ActorSet(self.config.reward, self.config)
        return self._actors


def _nodes(actors: ActorSet) -> list[str]:
    """The node of each ready actor (a ready actor is one whose node is known)."""
    return [node for member in actors.ready() if (node := member.node_id) is not None]
