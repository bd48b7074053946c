"""Rewards the Ray tests ship to actors by pickle (the cluster's workers import this module from the repo).

``sleepy_length`` takes a fixed time per sample without using CPU, so a batch lasts long enough to kill a node in
the middle of it on a small shared machine, and its verdicts are deterministic, so a batch scored on the cluster
can be compared with the same batch scored here, sample for sample.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import Field

from rewardsmith.registry import register_reward
from rewardsmith.reward import Reward, RewardConfig
from rewardsmith.types import RewardResult


class SleepyLengthConfig(RewardConfig):
    delay_s: float = Field(0.05, ge=0, description="sleep per sample")
    hang_marker: str = Field("HANG", description="a completion containing it sleeps hang_s instead")
    hang_s: float = Field(60.0, ge=0)
    fail_in_actor: bool = Field(False, description="raise when built inside a Ray worker (a node without the reward)")


@register_reward("sleepy_length")
class SleepyLength(Reward[SleepyLengthConfig]):
    """Score = number of characters; ``None`` for an empty completion (so unscorable results travel too)."""

    name = "sleepy_length"

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        if self.config.fail_in_actor and _inside_ray_worker():
            raise RuntimeError("this node cannot build sleepy_length")

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self.config.fail_in_actor and _inside_ray_worker():
            raise RuntimeError("this node cannot build sleepy_length")

    def score_one(self, completion: str, row: dict[str, Any]) -> RewardResult:
        time.sleep(self.config.hang_s if self.config.hang_marker in completion else self.config.delay_s)
        if not completion:
            return RewardResult.unscorable("empty completion")
        return RewardResult(score=float(len(completion)), reason=f"{len(completion)} chars", tag=row.get("tag"))


def _inside_ray_worker() -> bool:
    try:
        import ray
    except ImportError:
        return False
    return ray.is_initialized() and ray._private.worker.global_worker.mode == ray.WORKER_MODE
