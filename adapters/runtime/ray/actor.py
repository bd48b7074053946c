"""The Ray actor behind ``ray_pool``: one long-lived copy of the inner reward.

Building the reward once per actor is the point: a sandbox forkserver, a pool of sympy workers or a judge client
starts on the first chunk and stays warm for every later one, instead of once per call.
"""

from __future__ import annotations

import functools
from typing import Any

from rewardsmith.reward import score_rows
from rewardsmith.types import RewardResult


class RewardActor:
    """Scores chunks with the reward built from ``spec``; ``node_id`` doubles as the readiness check."""

    def __init__(self, spec: Any) -> None:
        from rewardsmith.compose import build_reward

        self.reward = build_reward(spec)

    def node_id(self) -> str:
        import ray

        return ray.get_runtime_context().get_node_id()

    def score(self, texts: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        """The inner reward's guarded path (screening included), exactly what local scoring runs."""
        return score_rows(self.reward, texts, rows)


def start_actor(spec: Any, *, num_cpus: float, placement: str, runtime_env: dict[str, Any] | None) -> Any:
    """A new actor handle; ``spread`` asks Ray to place successive actors on different nodes.

    Ray's own restarts are off (``max_restarts=0``): the pool replaces a dead actor itself, so the chunk it held
    goes to an actor that is already live instead of waiting for a restart that may never be scheduled.
    """
    options: dict[str, Any] = {"num_cpus": num_cpus, "max_restarts": 0, "max_concurrency": 1}
    if placement == "spread":
        options["scheduling_strategy"] = "SPREAD"
    if runtime_env:
        options["runtime_env"] = runtime_env
    return _remote_class().options(**options).remote(spec)


@functools.cache
def _remote_class() -> Any:
    import ray

    return ray.remote(RewardActor)
