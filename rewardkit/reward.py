"""The reward contract: a picklable callable that TRL's ``GRPOTrainer`` accepts unchanged.

A ``Reward`` subclass declares a pydantic ``Config`` and implements ``score_one`` (or
``score_batch`` when a family batches, e.g. a sandbox or a judge). The base class owns everything
the trainer relies on: plain and conversational completions, aligned dataset columns, per-sample
reasons logged through TRL's ``log_extra``, and the promise that nothing ever raises into training.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from rewardkit.types import RewardResult, completion_text

logger = logging.getLogger(__name__)

#: Keyword arguments TRL passes that are not per-sample dataset columns.
TRAINER_KWARGS = frozenset({"trainer_state", "log_extra", "log_metric", "environments"})


class RewardConfig(BaseModel):
    """Base for every reward's config: unknown fields are configuration errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ConfigError(ValueError):
    """Invalid reward configuration (unknown name, bad parameter). Raised at construction, never in training."""


class Reward:
    """Base class of every rewardkit reward.

    Subclasses set ``name`` and ``Config`` and implement :meth:`score_one` or :meth:`score_batch`.
    Instances are plain objects with picklable state (no closures) so that TRL can ship them to a
    spawned scoring process.
    """

    name: ClassVar[str] = "reward"
    Config: ClassVar[type[RewardConfig]] = RewardConfig

    def __init__(self, config: RewardConfig | Mapping[str, Any] | None = None, **overrides: Any) -> None:
        self.config = build_config(self.Config, config, overrides, reward_name=self.name)
        self.__name__ = self.name

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.config.model_dump().items())
        return f"{type(self).__name__}({fields})"

    # -- what subclasses implement -------------------------------------------------------------
    def score_one(self, completion: str, row: Mapping[str, Any]) -> RewardResult:
        """Score one completion given its dataset row (every column plus ``prompt``)."""
        raise NotImplementedError

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        """Score a batch; the default isolates each sample so one failure costs one ``None``."""
        return [self._guarded_one(c, r) for c, r in zip(completions, rows, strict=True)]

    async def ascore_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        """Async batch scoring; the default runs the sync path in a worker thread so the loop stays free."""
        return await asyncio.to_thread(self.score_batch, completions, rows)

    # -- the contract ----------------------------------------------------------------------------
    def details(self, completions: Any, **kwargs: Any) -> list[RewardResult]:
        """Score ``completions`` and return one :class:`RewardResult` (score + reason) per sample."""
        texts, rows = self._prepare(completions, kwargs)
        return self.score_rows(texts, rows)

    async def adetails(self, completions: Any, **kwargs: Any) -> list[RewardResult]:
        texts, rows = self._prepare(completions, kwargs)
        return await self.ascore_rows(texts, rows)

    def score_rows(self, texts: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        """Guarded :meth:`score_batch` on already-normalised texts and rows (used by composites)."""
        try:
            return self._checked(self.score_batch(texts, rows), len(texts))
        except Exception as exc:  # a family bug must not kill training
            logger.exception("reward %s failed on a batch", self.name)
            return [RewardResult.unscorable(f"internal error: {type(exc).__name__}: {exc}") for _ in texts]

    async def ascore_rows(self, texts: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        try:
            return self._checked(await self.ascore_batch(texts, rows), len(texts))
        except Exception as exc:
            logger.exception("reward %s failed on a batch", self.name)
            return [RewardResult.unscorable(f"internal error: {type(exc).__name__}: {exc}") for _ in texts]

    def __call__(self, completions: Any, **kwargs: Any) -> list[float | None]:
        results = self.details(completions, **kwargs)
        _log_reasons(self.__name__, results, kwargs.get("log_extra"))
        return [r.score for r in results]

    def as_async(self) -> AsyncReward:
        """This reward with an ``async __call__``, so TRL runs it concurrently with other rewards."""
        return AsyncReward(self)

    # -- internals -------------------------------------------------------------------------------
    def _guarded_one(self, completion: str | None, row: dict[str, Any]) -> RewardResult:
        if completion is None:
            return RewardResult.unscorable("completion is not text")
        try:
            return self.score_one(completion, row)
        except Exception as exc:
            logger.debug("reward %s failed on a sample", self.name, exc_info=True)
            return RewardResult.unscorable(f"internal error: {type(exc).__name__}: {exc}")

    def _prepare(self, completions: Any, kwargs: dict[str, Any]) -> tuple[list[str | None], list[dict[str, Any]]]:
        if not isinstance(completions, Sequence) or isinstance(completions, (str, bytes)):
            # A single completion passed bare is a caller mistake we can still answer sample-wise.
            completions = [completions]
        texts = [_text_or_none(c) for c in completions]
        return texts, rows_from_columns(len(texts), kwargs)

    def _checked(self, results: list[RewardResult], n: int) -> list[RewardResult]:
        results = list(results)
        if len(results) != n:
            reason = f"internal error: {len(results)} results for {n} samples"
            return [RewardResult.unscorable(reason) for _ in range(n)]
        return [_finite(r) for r in results]


class AsyncReward:
    """Wraps a :class:`Reward` with an ``async __call__`` (TRL awaits these concurrently)."""

    def __init__(self, reward: Reward) -> None:
        self.reward = reward
        self.__name__ = reward.__name__  # the logged name, including a composite's configured ``name``

    async def __call__(self, completions: Any, **kwargs: Any) -> list[float | None]:
        results = await self.reward.adetails(completions, **kwargs)
        _log_reasons(self.__name__, results, kwargs.get("log_extra"))
        return [r.score for r in results]

    def details(self, completions: Any, **kwargs: Any) -> list[RewardResult]:
        return self.reward.details(completions, **kwargs)

    async def adetails(self, completions: Any, **kwargs: Any) -> list[RewardResult]:
        return await self.reward.adetails(completions, **kwargs)


def build_config(
    model: type[RewardConfig],
    config: RewardConfig | Mapping[str, Any] | None,
    overrides: Mapping[str, Any],
    reward_name: str,
) -> RewardConfig:
    """Validate a reward config once, at construction, turning pydantic errors into readable ones."""
    if isinstance(config, model) and not overrides:
        return config
    data: dict[str, Any] = {}
    if isinstance(config, BaseModel):
        data.update(config.model_dump())
    elif isinstance(config, Mapping):
        data.update(config)
    elif config is not None:
        raise ConfigError(f"reward {reward_name!r}: config must be a mapping, got {type(config).__name__}")
    data.update(overrides)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<config>'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"reward {reward_name!r}: invalid config: {problems}") from None


def rows_from_columns(n: int, kwargs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Split TRL's column-wise kwargs into one dict per sample; ``prompts`` becomes ``prompt``."""
    rows: list[dict[str, Any]] = [{} for _ in range(n)]
    for key, values in kwargs.items():
        if key in TRAINER_KWARGS:
            continue
        column = "prompt" if key == "prompts" else key
        if isinstance(values, Sequence) and not isinstance(values, (str, bytes)) and len(values) == n:
            for row, value in zip(rows, values, strict=True):
                row[column] = value
    return rows


def _text_or_none(completion: Any) -> str | None:
    try:
        return completion_text(completion)
    except Exception:  # exotic objects (e.g. an array as a role) are not text, and must not raise
        return None


def _finite(result: RewardResult) -> RewardResult:
    if not isinstance(result, RewardResult):
        return RewardResult.unscorable(f"internal error: expected a RewardResult, got {type(result).__name__}")
    score = result.score
    if score is None:
        return result
    try:
        value = float(score)
    except (TypeError, ValueError):
        return RewardResult.unscorable(f"internal error: non-numeric score {score!r}")
    if value != value or value in (float("inf"), float("-inf")):
        return RewardResult.unscorable(f"non-finite score {value}; {result.reason}")
    return result


def _log_reasons(name: str, results: list[RewardResult], log_extra: Any) -> None:
    if not callable(log_extra):
        return
    try:
        log_extra(f"{name}_reason", [r.reason for r in results])
    except Exception:  # logging must never cost a training step
        logger.debug("log_extra failed", exc_info=True)
