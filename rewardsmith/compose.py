"""Composition: the one reward-spec grammar, and weighted sums, gates and per-task routing built from it.

A spec is a registered name (``"think_format"``), a :class:`RewardTerm` mapping
(``{"name": ..., "config": {...}, "weight": w, "gate": ..., "label": ...}``) or a reward instance; the same
grammar is read by ``weighted_sum``/``gate``/``route``, by every trainer adapter's spec file, and by
``rewardsmith serve``. Validating a spec builds its reward, once: a composite's children are built when its
config is validated and reused by the composite, so ``weighted_sum(gate(a, b))`` constructs each leaf one time.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import math
import re
from collections.abc import Awaitable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from rewardsmith.bridge import run_inline
from rewardsmith.groups import merge_groups
from rewardsmith.registry import get_reward, register_reward
from rewardsmith.reward import ConfigError, Reward, RewardConfig, ascore_rows
from rewardsmith.reward_config import ConfigT
from rewardsmith.types import RewardResult

logger = logging.getLogger(__name__)


class RewardTerm(BaseModel):
    """One reward in a spec: ``weight * reward``, optionally counted only when ``gate`` passes.

    Validation builds the reward (so a typo fails when the spec is loaded, not mid-training) and keeps it:
    :meth:`build` returns that one instance.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field(description="registered reward name (`rewardsmith rewards list`)")
    config: dict[str, Any] = Field(default_factory=dict, description="the reward's config")
    weight: float = Field(1.0, description="weight in a weighted sum (the trainer's or weighted_sum's)")
    gate: str | dict[str, Any] | None = Field(None, description="reward spec that must pass for this term to count")
    gate_threshold: float = Field(1.0, description="gate passes when its score >= this")
    gate_otherwise: float | None = Field(0.0, description="score of this term when the gate fails")
    label: str | None = Field(None, description="logged name (default: the reward's name)")

    _built: Reward | None = PrivateAttr(None)

    @field_validator("weight", mode="before")
    @classmethod
    def _finite_weight(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"weight must be a finite number, got {value!r}")
        return value

    @field_validator("config", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value

    @model_validator(mode="after")
    def _build(self) -> RewardTerm:
        inner = get_reward(self.name, self.config)
        if self.gate is None:
            if self.label:
                inner.__name__ = self.label
            self._built = inner
        else:
            self._built = Gate(
                reward=inner,
                gate=self.gate,
                threshold=self.gate_threshold,
                otherwise=self.gate_otherwise,
                name=self.label or f"{self.name}_if_{spec_name(self.gate)}",
            )
        return self

    def build(self) -> Reward:
        """The reward of this term (without its weight), built once at validation."""
        assert self._built is not None  # set by the after-validator
        return self._built


Spec = str | Mapping[str, Any] | RewardTerm | Reward


def as_term(spec: Any) -> RewardTerm | Reward:
    """A spec parsed (and its reward built) once: a :class:`RewardTerm`, or a reward instance as given."""
    if isinstance(spec, (Reward, RewardTerm)):
        return spec
    if isinstance(spec, str):
        return RewardTerm(name=spec)
    if isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
        try:
            return RewardTerm.model_validate(dict(spec))
        except ValidationError as exc:
            problems = "; ".join(_problem(err) for err in exc.errors())
            raise ConfigError(f"reward spec {spec.get('name')!r}: {problems}") from None
    raise ConfigError(f"a reward spec is a name, a {{'name', 'config'}} mapping or a Reward; got {spec!r}")


def build_reward(spec: Any) -> Reward:
    """The reward of a spec: an instance as it is, a registered name, or a :class:`RewardTerm` mapping."""
    term = as_term(spec)
    return term if isinstance(term, Reward) else term.build()


def spec_weight(spec: Any) -> float:
    """The weight of a spec (1.0 for a name or an instance)."""
    term = as_term(spec)
    return term.weight if isinstance(term, RewardTerm) else 1.0


def spec_name(spec: Any) -> str:
    """A short name for a spec, for generated logged names like ``math_equivalence_if_think_format``."""
    if isinstance(spec, str):
        return spec
    if isinstance(spec, Mapping):
        return str(spec.get("name", "gate"))
    if isinstance(spec, RewardTerm):
        return spec.name
    return getattr(spec, "__name__", "gate")


def _problem(err: Any) -> str:
    loc = ".".join(str(p) for p in err["loc"])
    message = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        return f"unknown keys [{loc!r}]"
    return f"{loc}: {message}" if loc else message


async def _each(awaitables: list[Awaitable[Any]], inline: bool) -> list[Any]:
    """Await in turn on the inline (sync) path, concurrently on the async path."""
    if inline:
        return [await a for a in awaitables]
    return list(await asyncio.gather(*awaitables))


class _CompositeConfig(RewardConfig):
    model_config = RewardConfig.model_config | {"arbitrary_types_allowed": True}


class _Composite(Reward[ConfigT]):
    """A reward made of other rewards: one async core (:meth:`combine`), a thin sync shim."""

    async def combine(
        self, completions: list[str | None], rows: list[dict[str, Any]], *, inline: bool
    ) -> list[RewardResult]:
        raise NotImplementedError

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        return run_inline(self.combine(completions, rows, inline=True))

    async def ascore_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        return await self.combine(completions, rows, inline=False)


def _scores(reward: Reward, texts: list[str | None], rows: list[dict[str, Any]], inline: bool) -> Any:
    return ascore_rows(reward, texts, rows, inline=inline)


class WeightedSumConfig(_CompositeConfig):
    rewards: list[Any] = Field(min_length=1, description="sub-reward specs; a spec may carry 'weight'")
    weights: list[float] | None = Field(None, description="weights aligned with rewards (overrides spec weights)")
    missing: Literal["skip", "zero"] = Field("skip", description="an unscorable part is skipped or counts as 0")
    name: str | None = Field(None, description="logged name (default 'weighted_sum')")

    @field_validator("rewards")
    @classmethod
    def _parse(cls, value: list[Any]) -> list[Any]:
        return [as_term(v) for v in value]


@register_reward("weighted_sum")
class WeightedSum(_Composite[WeightedSumConfig]):
    """Weighted sum of sub-rewards: ``sum_i w_i * r_i`` over the parts that scored.

    ``None`` only when every part is unscorable (or, with ``missing="zero"``, never for partial data).
    Each result also carries ``components``: every part's own score by part name (:attr:`component_names`,
    ``None`` where that part was unscorable), so a trainer that normalises per component (GDPO) gets the terms
    from the same scoring pass that made the sum.

    >>> r = WeightedSum({"rewards": ["think_format", {"name": "tag_count", "weight": 0.5}]})
    """

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        cfg = self.config
        self.parts = [build_reward(s) for s in cfg.rewards]
        if cfg.weights is not None:
            if len(cfg.weights) != len(self.parts):
                raise ConfigError(f"weighted_sum: {len(cfg.weights)} weights for {len(self.parts)} rewards")
            self.weights = list(cfg.weights)
        else:
            self.weights = [spec_weight(s) for s in cfg.rewards]
        if cfg.name:
            self.__name__ = cfg.name
        self.component_names = _unique([p.__name__ for p in self.parts])

    async def combine(
        self, completions: list[str | None], rows: list[dict[str, Any]], *, inline: bool
    ) -> list[RewardResult]:
        per_part = await _each([_scores(p, completions, rows, inline) for p in self.parts], inline)
        out = []
        for sample in zip(*per_part, strict=False):
            total, scored, reasons = 0.0, 0, []
            for part, weight, result in zip(self.parts, self.weights, sample, strict=False):
                reasons.append(f"{part.__name__}={result.score} ({result.reason})")
                if result.score is None:
                    if self.config.missing == "zero":
                        scored += 1
                    continue
                total += weight * result.score
                scored += 1
            components = {name: r.score for name, r in zip(self.component_names, sample, strict=False)}
            out.append(RewardResult(score=total if scored else None, reason="; ".join(reasons), components=components))
        return out


def _unique(names: list[str]) -> list[str]:
    """``names`` with repeats told apart (``regex``, ``regex_2``), so each part's component has its own key."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    return out


class GateConfig(_CompositeConfig):
    reward: Any = Field(description="the reward that counts when the gate passes")
    gate: Any = Field(description="the reward that decides, e.g. think_format")
    threshold: float = Field(1.0, description="gate passes when its score >= threshold")
    otherwise: float | None = Field(0.0, description="score when the gate fails")
    name: str | None = Field(None, description="logged name (TRL's reward column and <name>_reason)")

    @field_validator("reward", "gate")
    @classmethod
    def _parse(cls, value: Any) -> Any:
        return as_term(value)


@register_reward("gate")
class Gate(_Composite[GateConfig]):
    """``reward`` counts only if ``gate`` scores at least ``threshold``; otherwise ``otherwise``.

    An unscorable gate makes the sample unscorable (an infrastructure failure is not a format failure).
    """

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self.inner = build_reward(self.config.reward)
        self.gate = build_reward(self.config.gate)
        if self.config.name:
            self.__name__ = self.config.name

    async def combine(
        self, completions: list[str | None], rows: list[dict[str, Any]], *, inline: bool
    ) -> list[RewardResult]:
        gates = await _scores(self.gate, completions, rows, inline)
        passed = [i for i, g in enumerate(gates) if g.score is not None and g.score >= self.config.threshold]
        inner = await _scores(self.inner, [completions[i] for i in passed], [rows[i] for i in passed], inline)
        by_index = dict(zip(passed, inner, strict=False))
        out = []
        for i, g in enumerate(gates):
            if g.score is None:
                out.append(RewardResult.unscorable(f"gate {self.gate.__name__} unscorable: {g.reason}"))
            elif i in by_index:
                out.append(RewardResult(score=by_index[i].score, reason=f"gate passed; {by_index[i].reason}"))
            else:
                reason = f"gate {self.gate.__name__} failed ({g.score}): {g.reason}"
                out.append(RewardResult(score=self.config.otherwise, reason=reason))
        return out


class PatternRoute(BaseModel):
    """A glob-mode route: the reward for column values that match any of ``match`` (fnmatch patterns)."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    match: list[str] = Field(min_length=1, description="fnmatch patterns (`*`, `?`, `[...]`) on the column's value")
    reward: Any = Field(description="reward spec for the values that match")

    @field_validator("reward")
    @classmethod
    def _parse(cls, value: Any) -> Any:
        return as_term(value)


class RouteConfig(_CompositeConfig):
    column: str = Field("task", description="dataset column whose value picks the reward")
    mode: Literal["exact", "glob"] = Field(
        "exact", description="exact: a route's key equals the value; glob: fnmatch patterns, first match wins"
    )
    routes: dict[str, Any] | list[PatternRoute] = Field(
        min_length=1,
        description="column value (glob: pattern) -> reward spec; glob also takes a list of {match: [...], reward}",
    )
    ignore_case: bool = Field(False, description="glob: patterns match regardless of case")
    default: Any | None = Field(None, description="reward for other values; None leaves them unscorable")
    name: str | None = Field(None, description="logged name (TRL's reward column and <name>_reason)")

    @field_validator("routes")
    @classmethod
    def _parse_routes(cls, value: dict[str, Any] | list[PatternRoute]) -> dict[str, Any] | list[PatternRoute]:
        return {k: as_term(v) for k, v in value.items()} if isinstance(value, dict) else value

    @field_validator("default")
    @classmethod
    def _parse_default(cls, value: Any) -> Any:
        return None if value is None else as_term(value)

    @model_validator(mode="after")
    def _mode_fits(self) -> RouteConfig:
        if self.mode == "exact" and isinstance(self.routes, list):
            raise ValueError("a list of {match, reward} routes needs mode: glob")
        if self.mode == "exact" and self.ignore_case:
            raise ValueError("ignore_case applies to mode: glob")
        return self

    def table(self) -> list[tuple[tuple[str, ...], Any]]:
        """The routes in order as ``(keys or patterns, spec)``."""
        if isinstance(self.routes, dict):
            return [((key,), spec) for key, spec in self.routes.items()]
        return [(tuple(route.match), route.reward) for route in self.routes]


@register_reward("route")
class Route(_Composite[RouteConfig]):
    """Route each sample to a reward by a dataset column (e.g. ``task``: math → math, code → code).

    ``mode: exact`` (the default) looks the value up among the routes' keys; ``mode: glob`` tries each route's
    fnmatch patterns in order and the first route that matches scores the sample (verl's ``data_source`` routes).
    A value no route takes goes to ``default``, or is unscorable with a reason naming the value (and the patterns).

    >>> Route({"column": "data_source", "mode": "glob", "routes": {"*gsm8k*": "math_equivalence"}})  # doctest: +SKIP
    """

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        cfg = self.config
        table = cfg.table()
        self.targets = [build_reward(spec) for _, spec in table]
        self.routes = {key: target for (keys, _), target in zip(table, self.targets, strict=True) for key in keys}
        self.default = build_reward(cfg.default) if cfg.default is not None else None
        self._patterns = [_compiled(keys, cfg.ignore_case) for keys, _ in table] if cfg.mode == "glob" else []
        self._exact = {keys[0]: i for i, (keys, _) in enumerate(table)} if cfg.mode == "exact" else {}
        if cfg.name:
            self.__name__ = cfg.name

    def route_index(self, value: Any) -> int | None:
        """The index of the route that takes ``value`` (in the order of ``routes``); ``None``: the default's."""
        if not isinstance(value, str):
            return None
        if self.config.mode == "exact":
            return self._exact.get(value)
        probe = value.lower() if self.config.ignore_case else value
        return next((i for i, pattern in enumerate(self._patterns) if pattern.match(probe)), None)

    def groups(self, rows: list[dict[str, Any]]) -> list[list[int]]:
        """Each part groups only the rows routed to it, as :meth:`combine` hands them over."""
        if self.batch_dependency != "group":
            return super().groups(rows)
        partitions = []
        for index, idx in self._plan(rows).items():
            target = self._target(index)
            if target is not None and target.batch_dependency is not None:
                partitions.append([[idx[i] for i in g] for g in target.groups([rows[i] for i in idx])])
        return merge_groups(len(rows), partitions)

    async def combine(
        self, completions: list[str | None], rows: list[dict[str, Any]], *, inline: bool
    ) -> list[RewardResult]:
        jobs = list(self._plan(rows).items())
        results = await _each([self._run(index, idx, completions, rows, inline=inline) for index, idx in jobs], inline)
        out: list[RewardResult] = [RewardResult.unscorable("not routed")] * len(rows)
        for (_, idx), res in zip(jobs, results, strict=True):
            for i, r in zip(idx, res, strict=False):
                out[i] = r
        return out

    def _target(self, index: int | None) -> Reward | None:
        return self.targets[index] if index is not None else self.default

    def _plan(self, rows: list[dict[str, Any]]) -> dict[int | None, list[int]]:
        """Row indices per route index (``None``: the default route)."""
        plan: dict[int | None, list[int]] = {}
        for i, row in enumerate(rows):
            plan.setdefault(self.route_index(row.get(self.config.column)), []).append(i)
        return plan

    async def _run(
        self,
        index: int | None,
        idx: list[int],
        completions: list[str | None],
        rows: list[dict[str, Any]],
        *,
        inline: bool,
    ) -> list[RewardResult]:
        target = self._target(index)
        if target is None:
            column = self.config.column
            if all(column not in row for row in rows):  # nothing to route by: a configuration error, said once
                return [RewardResult.unscorable(self._no_column(rows)) for _ in idx]
            return [RewardResult.unscorable(self._unrouted(rows[i].get(column))) for i in idx]
        return await _scores(target, [completions[i] for i in idx], [rows[i] for i in idx], inline)

    def _no_column(self, rows: list[dict[str, Any]]) -> str:
        """Why every row went unrouted when the data has no routing column, with the fix; logged once."""
        arrived = ", ".join(sorted({str(c) for row in rows for c in row})) or "none"
        reason = (
            f"the data has no column {self.config.column!r} to route by: set column to the column that names each "
            f"row's task, or give a default (columns that arrived: {arrived})"
        )
        if not self.__dict__.get("_warned_no_column"):
            self.__dict__["_warned_no_column"] = True
            logger.warning("reward %s: every sample unscorable: %s", self.__name__, reason)
        return reason

    def _unrouted(self, value: Any) -> str:
        column = self.config.column
        if self.config.mode == "exact":
            return f"no route for {column}={value!r}"
        patterns = [p for keys, _ in self.config.table() for p in keys]
        return f"no rewardsmith route for {column} {value!r} (matches none of {patterns})"


def _compiled(patterns: tuple[str, ...], ignore_case: bool) -> re.Pattern[str]:
    """One regular expression for a route's fnmatch patterns (``fnmatchcase`` semantics; lower-cased to ignore case)."""
    return re.compile("|".join(fnmatch.translate(p.lower() if ignore_case else p) for p in patterns))
