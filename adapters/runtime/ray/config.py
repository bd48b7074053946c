"""Configuration of ``ray_pool``: which reward the actors build, how many, where, and how failures are bounded."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, field_validator

from rewardsmith.compose import build_reward
from rewardsmith.reward import RewardConfig


class RayPoolConfig(RewardConfig):
    """Fields of ``ray_pool``. Every limit is finite so a batch always ends: a score, or ``None`` with a reason."""

    model_config = RewardConfig.model_config | {"arbitrary_types_allowed": True}

    reward: Any = Field(description="the reward each actor builds once: a name, {name, config} or a Reward")
    num_actors: int = Field(4, ge=1, description="actors in the pool (each holds one warm copy of the reward)")
    chunk_size: int | None = Field(
        None, ge=1, description="samples per chunk (default: batch / (4 x actors), so a lost chunk is cheap to rerun)"
    )
    max_in_flight: int | None = Field(
        None, ge=1, description="chunks submitted and not yet returned (default: 2 x actors: one running, one queued)"
    )
    address: str | None = Field(
        None, description="'auto', 'HOST:PORT' or 'ray://HOST:PORT'; None: ray.init's default (RAY_ADDRESS or local)"
    )
    placement: Literal["spread", "pack"] = Field(
        "spread", description="spread: actors on as many nodes as possible (Ray's SPREAD); pack: Ray's default"
    )
    actor_num_cpus: float = Field(1.0, gt=0, description="CPUs each actor reserves on its node")
    max_retries: int = Field(3, ge=0, description="reruns of a chunk whose actor or node died")
    chunk_timeout_s: float = Field(
        600.0, gt=0, description="a chunk running longer on one actor counts as a dead actor (killed, chunk rerun)"
    )
    actor_start_timeout_s: float = Field(
        120.0, gt=0, description="how long a batch waits for a first live actor before its samples become None"
    )
    connect_timeout_s: float = Field(5.0, gt=0, description="TCP probe of the cluster address before ray.init")
    namespace: str | None = Field(None, description="Ray namespace of the driver connection")
    runtime_env: dict[str, Any] | None = Field(None, description="Ray runtime_env for the actors (e.g. pip, env_vars)")
    name: str | None = Field(None, description="logged name (default: the inner reward's name)")

    @field_validator("reward")
    @classmethod
    def _check_reward(cls, value: Any) -> Any:
        build_reward(value)  # fail at construction, with the inner reward's own message
        return value


def chunk_bounds(n: int, chunk_size: int | None, actors: int) -> list[tuple[int, int]]:
    """``[start, stop)`` slices of a batch of ``n``: ``chunk_size`` each, or about four chunks per actor.

    Small chunks balance uneven samples (one slow sympy case, one long test suite) and make a rerun after a
    node loss cheap; four per actor keeps the per-call overhead small against the work in each chunk.
    """
    if n <= 0:
        return []
    size = chunk_size or max(1, math.ceil(n / (4 * max(1, actors))))
    return [(start, min(n, start + size)) for start in range(0, n, size)]
