"""Composition: weighted sums, gates and per-task routing, each itself a registered reward.

Sub-rewards are given as specs (``"think_format"``, ``{"name": ..., "config": {...}, "weight": w}``)
or as reward instances, so a composition can live in a YAML file or in Python.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, field_validator

from rewardkit.registry import get_reward, register_reward
from rewardkit.reward import ConfigError, Reward, RewardConfig
from rewardkit.types import RewardResult


def build_reward(spec: Any) -> Reward:
    """A reward from a spec: an instance, a registered name, or ``{"name", "config"}``."""
    if isinstance(spec, Reward):
        return spec
    if isinstance(spec, str):
        return get_reward(spec)
    if isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
        unknown = set(spec) - {"name", "config", "weight"}
        if unknown:
            raise ConfigError(f"reward spec {spec.get('name')!r}: unknown keys {sorted(unknown)}")
        return get_reward(spec["name"], spec.get("config") or {})
    raise ConfigError(f"a reward spec is a name, a {{'name', 'config'}} mapping or a Reward; got {spec!r}")


def _spec(value: Any) -> Any:
    build_reward(value)  # fail at construction, with the sub-reward's own message
    return value


def spec_weight(spec: Any) -> float:
    """The ``weight`` of a mapping spec (1.0 when absent); a weight must be a finite number."""
    weight = spec.get("weight", 1.0) if isinstance(spec, Mapping) else 1.0
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
        raise ConfigError(f"reward spec {spec.get('name')!r}: weight must be a finite number, got {weight!r}")
    return float(weight)


class WeightedSumConfig(RewardConfig):
    model_config = RewardConfig.model_config | {"arbitrary_types_allowed": True}

    rewards: list[Any] = Field(min_length=1, description="sub-reward specs; a spec may carry 'weight'")
    weights: list[float] | None = Field(None, description="weights aligned with rewards (overrides spec weights)")
    missing: Literal["skip", "zero"] = Field("skip", description="an unscorable part is skipped or counts as 0")
    name: str | None = Field(None, description="logged name (default 'weighted_sum')")

    @field_validator("rewards")
    @classmethod
    def _check(cls, value: list[Any]) -> list[Any]:
        for v in value:
            spec_weight(v)
        return [_spec(v) for v in value]


@register_reward("weighted_sum")
class WeightedSum(Reward):
    """Weighted sum of sub-rewards: ``sum_i w_i * r_i`` over the parts that scored.

    ``None`` only when every part is unscorable (or, with ``missing="zero"``, never for partial data).

    >>> r = WeightedSum({"rewards": ["think_format", {"name": "tag_count", "weight": 0.5}]})
    """

    name = "weighted_sum"
    Config = WeightedSumConfig

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        cfg: WeightedSumConfig = self.config  # type: ignore[assignment]
        self.parts = [build_reward(s) for s in cfg.rewards]
        if cfg.weights is not None:
            if len(cfg.weights) != len(self.parts):
                raise ConfigError(f"weighted_sum: {len(cfg.weights)} weights for {len(self.parts)} rewards")
            self.weights = list(cfg.weights)
        else:
            self.weights = [spec_weight(s) for s in cfg.rewards]
        if cfg.name:
            self.__name__ = cfg.name

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        return self._combine([p.score_rows(completions, rows) for p in self.parts])

    async def ascore_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        parts = await asyncio.gather(*(p.ascore_rows(completions, rows) for p in self.parts))
        return self._combine(list(parts))

    def _combine(self, per_part: list[list[RewardResult]]) -> list[RewardResult]:
        out = []
        for sample in zip(*per_part, strict=False):
            total, scored, reasons = 0.0, 0, []
            for part, weight, result in zip(self.parts, self.weights, sample, strict=False):
                reasons.append(f"{part.__name__}={result.score} ({result.reason})")
                if result.score is None:
                    if self.config.missing == "zero":  # type: ignore[attr-defined]
                        scored += 1
                    continue
                total += weight * result.score
                scored += 1
            out.append(RewardResult(score=total if scored else None, reason="; ".join(reasons)))
        return out


class GateConfig(RewardConfig):
    model_config = RewardConfig.model_config | {"arbitrary_types_allowed": True}

    reward: Any = Field(description="the reward that counts when the gate passes")
    gate: Any = Field(description="the reward that decides, e.g. think_format")
    threshold: float = Field(1.0, description="gate passes when its score >= threshold")
    otherwise: float | None = Field(0.0, description="score when the gate fails")
    name: str | None = Field(None, description="logged name (TRL's reward column and <name>_reason)")

    @field_validator("reward", "gate")
    @classmethod
    def _check(cls, value: Any) -> Any:
        return _spec(value)


@register_reward("gate")
class Gate(Reward):
    """``reward`` counts only if ``gate`` scores at least ``threshold``; otherwise ``otherwise``.

    An unscorable gate makes the sample unscorable (an infrastructure failure is not a format failure).
    """

    name = "gate"
    Config = GateConfig

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self.inner = build_reward(self.config.reward)  # type: ignore[attr-defined]
        self.gate = build_reward(self.config.gate)  # type: ignore[attr-defined]
        if self.config.name:  # type: ignore[attr-defined]
            self.__name__ = self.config.name  # type: ignore[attr-defined]

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        gates = self.gate.score_rows(completions, rows)
        passed = [i for i, g in enumerate(gates) if g.score is not None and g.score >= self.config.threshold]  # type: ignore[attr-defined]
        inner = self.inner.score_rows([completions[i] for i in passed], [rows[i] for i in passed])
        return self._merge(gates, dict(zip(passed, inner, strict=False)))

    async def ascore_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        gates = await self.gate.ascore_rows(completions, rows)
        passed = [i for i, g in enumerate(gates) if g.score is not None and g.score >= self.config.threshold]  # type: ignore[attr-defined]
        inner = await self.inner.ascore_rows([completions[i] for i in passed], [rows[i] for i in passed])
        return self._merge(gates, dict(zip(passed, inner, strict=False)))

    def _merge(self, gates: list[RewardResult], inner: dict[int, RewardResult]) -> list[RewardResult]:
        out = []
        for i, g in enumerate(gates):
            if g.score is None:
                out.append(RewardResult.unscorable(f"gate {self.gate.__name__} unscorable: {g.reason}"))
            elif i in inner:
                out.append(RewardResult(score=inner[i].score, reason=f"gate passed; {inner[i].reason}"))
            else:
                reason = f"gate {self.gate.__name__} failed ({g.score}): {g.reason}"
                out.append(RewardResult(score=self.config.otherwise, reason=reason))  # type: ignore[attr-defined]
        return out


class RouteConfig(RewardConfig):
    model_config = RewardConfig.model_config | {"arbitrary_types_allowed": True}

    column: str = Field("task", description="dataset column whose value picks the reward")
    routes: dict[str, Any] = Field(min_length=1, description="column value -> reward spec")
    default: Any | None = Field(None, description="reward for other values; None leaves them unscorable")
    name: str | None = Field(None, description="logged name (TRL's reward column and <name>_reason)")

    @field_validator("routes")
    @classmethod
    def _check_routes(cls, value: dict[str, Any]) -> dict[str, Any]:
        return {k: _spec(v) for k, v in value.items()}

    @field_validator("default")
    @classmethod
    def _check_default(cls, value: Any) -> Any:
        return None if value is None else _spec(value)


@register_reward("route")
class Route(Reward):
    """Route each sample to a reward by a dataset column (e.g. ``task``: math → math, code → code)."""

    name = "route"
    Config = RouteConfig

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        cfg: RouteConfig = self.config  # type: ignore[assignment]
        self.routes = {k: build_reward(v) for k, v in cfg.routes.items()}
        self.default = build_reward(cfg.default) if cfg.default is not None else None
        if cfg.name:
            self.__name__ = cfg.name

    def _plan(self, rows: list[dict[str, Any]]) -> dict[str | None, list[int]]:
        plan: dict[str | None, list[int]] = {}
        for i, row in enumerate(rows):
            key = row.get(self.config.column)  # type: ignore[attr-defined]
            key = key if isinstance(key, str) and key in self.routes else None
            plan.setdefault(key, []).append(i)
        return plan

    def _target(self, key: str | None) -> Reward | None:
        return self.routes[key] if key is not None else self.default

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        out: list[RewardResult | None] = [None] * len(rows)
        for key, idx in self._plan(rows).items():
            target = self._target(key)
            results = (
                target.score_rows([completions[i] for i in idx], [rows[i] for i in idx])
                if target is not None
                else [self._unrouted(rows[i]) for i in idx]
            )
            for i, r in zip(idx, results, strict=False):
                out[i] = r
        return out  # type: ignore[return-value]

    async def ascore_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        plan = list(self._plan(rows).items())

        async def run(key: str | None, idx: list[int]) -> list[RewardResult]:
            target = self._target(key)
            if target is None:
                return [self._unrouted(rows[i]) for i in idx]
            return await target.ascore_rows([completions[i] for i in idx], [rows[i] for i in idx])

        results = await asyncio.gather(*(run(k, idx) for k, idx in plan))
        out: list[RewardResult | None] = [None] * len(rows)
        for (_, idx), res in zip(plan, results, strict=False):
            for i, r in zip(idx, res, strict=False):
                out[i] = r
        return out  # type: ignore[return-value]

    def _unrouted(self, row: dict[str, Any]) -> RewardResult:
        column = self.config.column  # type: ignore[attr-defined]
        return RewardResult.unscorable(f"no route for {column}={row.get(column)!r}")
