"""The reward contract: a picklable callable that TRL's ``GRPOTrainer`` accepts unchanged.

A reward declares what it needs and implements one scoring method; the base class owns everything the trainer
relies on: plain and conversational completions, aligned dataset columns (:mod:`rewardsmith.columns`), per-sample
reasons logged through TRL's ``log_extra``, and the promise that nothing ever raises into training. Samples the base
can answer itself never reach the family: a completion without text ("completion is int, not text") and a declared
gold column the caller passed misaligned ("column 'solution' has 1 value for 2 completions"). A gold column that did
not arrive, or arrived empty in every row, is named in each unscorable sample's reason with the setting that fixes
it, and logged once per reward instance: a trainer ignores ``None``, so a misnamed column would otherwise train on
nothing.

The whole contract, by role:

- declared: ``name``, ``config`` (typed by ``Reward[Config]``), ``gold_columns``, ``batch_dependency``;
- implemented by a family: ``score_one`` (per sample) or ``score_batch`` / ``ascore_batch`` (a batch at once);
  by a reward made of other rewards: ``combine``, which scores its parts through :func:`ascore_rows`;
- called: ``__call__`` (TRL), ``details`` / ``adetails`` (results with reasons), ``as_async``, ``groups``,
  ``warm_up``.

Callers that hold rows already split per sample (a server, a Ray actor, a wrapper) use :func:`score_rows` and
:func:`ascore_rows`, the one guarded path.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Generic, cast, get_args

from rewardsmith.bridge import run_inline, to_async
from rewardsmith.columns import (
    as_column,
    explain_misaligned,
    misaligned_reasons,
    name_missing_columns,
    rows_from_columns,
)
from rewardsmith.groups import BatchDependency, dependency_of, merge_groups, strongest
from rewardsmith.reward_config import ConfigError, ConfigT, RewardConfig, build_config
from rewardsmith.types import RewardResult, completion_text, describe_non_text

__all__ = [
    "AsyncReward",
    "ConfigError",
    "Reward",
    "RewardConfig",
    "ascore_rows",
    "held_rewards",
    "score_rows",
    "warm_up_all",
]

logger = logging.getLogger(__name__)


class Reward(Generic[ConfigT]):
    """Base class of every rewardsmith reward.

    Subclasses name their config once as the type argument (``class MathEquivalence(Reward[MathConfig])``),
    which makes ``self.config`` typed and sets ``Config``; the registered name comes from
    :func:`~rewardsmith.registry.register_reward`. They implement :meth:`score_one` or :meth:`score_batch`
    (a reward made of other rewards: :meth:`combine`). Instances are plain objects with picklable state (no
    closures) so that TRL can ship them to a spawned scoring process.
    """

    name: ClassVar[str] = "reward"
    Config: ClassVar[type[RewardConfig]] = RewardConfig
    config: ConfigT

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "Config" in cls.__dict__:
            return
        for base in getattr(cls, "__orig_bases__", ()):
            args = [a for a in get_args(base) if isinstance(a, type) and issubclass(a, RewardConfig)]
            if args:
                cls.Config = args[0]
                return

    def __init__(self, config: ConfigT | Mapping[str, Any] | None = None, **overrides: Any) -> None:
        # build_config validates into self.Config, which __init_subclass__ took from the type argument ConfigT
        self.config = cast(ConfigT, build_config(self.Config, config, overrides, reward_name=self.name))
        self.__name__ = self.name

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.config.model_dump().items())
        return f"{type(self).__name__}({fields})"

    # -- what a reward declares ------------------------------------------------------------------
    @property
    def gold_columns(self) -> tuple[str, ...]:
        """The dataset columns holding this reward's gold (answer, tests, reference response).

        A family declares them (a class attribute, or a property when the column is configured: ``gold_column``);
        a sample whose gold column the caller passed misaligned is unscorable with the misalignment as its reason
        before the family is asked, and a gold column missing from the whole batch is named with its fix. An adapter
        routes a trainer's single ``answer`` field there. A reward made of others reads its parts' columns (the
        default), and leaves screening and naming them to its parts.
        """
        return tuple(dict.fromkeys(c for r in held_rewards(self) for c in r.gold_columns))

    @property
    def batch_dependency(self) -> BatchDependency:
        """Whether a score depends on other samples of the call: ``None`` (no), ``"group"`` (on its group's, see
        :meth:`groups`) or ``"batch"`` (on all of them). Transports that split batches read it to keep groups
        whole. A group reward declares it; the default is the strongest of the rewards this one holds."""
        return strongest(dependency_of(r) for r in held_rewards(self))

    def groups(self, rows: list[dict[str, Any]]) -> list[list[int]]:
        """Indices of ``rows`` that this reward scores together (each group whole in one call). The default keeps
        whole the groups of every reward this one holds; samples of no group are groups of one."""
        held = [r for r in held_rewards(self) if dependency_of(r) is not None]
        if self.batch_dependency == "batch":
            return [list(range(len(rows)))] if rows else []
        return merge_groups(len(rows), [r.groups(rows) for r in held])

    def warm_up(self) -> object:
        """Start what this reward otherwise starts on first use (worker pools, a sandbox), and wait until ready.

        A server calls it before it says "ready", so its first request does not pay a cold start. The default
        warms the rewards this one holds (a composite's parts, a wrapper's inner reward), at the same time.
        A subclass may return a report of what it started (the Ray pool: its actors' nodes); callers of this
        general contract ignore it.
        """
        warm_up_all(held_rewards(self))
        return None

    # -- what a family implements ----------------------------------------------------------------
    def score_one(self, completion: str, row: Mapping[str, Any]) -> RewardResult:
        """Score one completion given its dataset row (every column plus ``prompt``)."""
        raise NotImplementedError

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        """Score a batch; the default isolates each sample so one failure costs one ``None``.

        Through the contract every completion here is text; ``None`` arrives only when a caller invokes
        ``score_batch`` directly.
        """
        return [self._guarded_one(c, r) for c, r in zip(completions, rows, strict=True)]

    async def ascore_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        """Async batch scoring; the default runs the sync path in a worker thread so the loop stays free."""
        return await to_async(self.score_batch, completions, rows)

    async def combine(self, texts: list[str | None], rows: list[dict[str, Any]], *, inline: bool) -> list[RewardResult]:
        """Score the samples the base did not answer itself: the one hook of a reward made of other rewards.

        A composite, gate or wrapper overrides it and scores its parts with :func:`ascore_rows` passing ``inline``
        on, so each part keeps its own guards and the sync path (``inline=True``) never suspends: :func:`run_inline`
        drives it without an event loop. The default calls :meth:`score_batch` (sync) or :meth:`ascore_batch`.
        """
        if inline:
            return self.score_batch(texts, rows)
        return await self.ascore_batch(texts, rows)

    # -- the contract ----------------------------------------------------------------------------
    def details(self, completions: Any, **kwargs: Any) -> list[RewardResult]:
        """Score ``completions`` and return one :class:`RewardResult` (score + reason) per sample."""
        texts, rows, not_text = _prepare(completions, kwargs)
        return run_inline(ascore_rows(self, texts, rows, inline=True, not_text=not_text))

    async def adetails(self, completions: Any, **kwargs: Any) -> list[RewardResult]:
        texts, rows, not_text = _prepare(completions, kwargs)
        return await ascore_rows(self, texts, rows, not_text=not_text)

    def __call__(self, completions: Any, **kwargs: Any) -> list[float | None]:
        results = self.details(completions, **kwargs)
        _log_reasons(self.__name__, results, kwargs.get("log_extra"))
        return [r.score for r in results]

    def as_async(self) -> AsyncReward:
        """This reward with an ``async __call__``, so TRL runs it concurrently with other rewards."""
        return AsyncReward(self)

    def _guarded_one(self, completion: str | None, row: dict[str, Any]) -> RewardResult:
        if completion is None:
            return RewardResult.unscorable("completion is not text")
        try:
            return self.score_one(completion, row)
        except Exception as exc:
            logger.debug("reward %s failed on a sample", self.name, exc_info=True)
            return RewardResult.unscorable(f"internal error: {type(exc).__name__}: {exc}")


def score_rows(reward: Reward, texts: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
    """``reward`` on texts and rows already split per sample, through the whole guarded path (sync)."""
    return run_inline(ascore_rows(reward, texts, rows, inline=True))


async def ascore_rows(
    reward: Reward,
    texts: list[str | None],
    rows: list[dict[str, Any]],
    *,
    inline: bool = False,
    not_text: list[str] | None = None,
) -> list[RewardResult]:
    """Screen, score what is left, check and merge: the whole guarded path, written once.

    ``inline=True`` is the sync path: it calls :meth:`Reward.combine` with ``inline=True``, which never suspends,
    so :func:`run_inline` drives it without an event loop (composites pass the flag on to their parts).
    ``not_text`` holds, per sample, why a ``None`` text is not text (the reason its sample gets).
    """
    leaf = not held_rewards(reward)
    early = _screen(reward, texts, rows, not_text, leaf)
    todo = [i for i, answer in enumerate(early) if answer is None]
    scored: list[RewardResult] = []
    if todo:
        picked_texts, picked_rows = [texts[i] for i in todo], [rows[i] for i in todo]
        try:
            scored = _checked(await reward.combine(picked_texts, picked_rows, inline=inline), len(todo))
        except Exception as exc:  # a family bug must not kill training
            logger.exception("reward %s failed on a batch", reward.name)
            scored = [RewardResult.unscorable(f"internal error: {type(exc).__name__}: {exc}") for _ in todo]
    by_index = dict(zip(todo, scored, strict=True))  # todo holds exactly the indices whose early answer is None
    results = explain_misaligned([r if r is not None else by_index[i] for i, r in enumerate(early)], rows)
    if not rows or not leaf:  # a reward made of others leaves naming columns to its parts (each its own setting)
        return results
    try:
        columns = tuple(reward.gold_columns)
    except Exception:  # a broken declaration must not cost the batch
        return results
    warned: set[str] = reward.__dict__.setdefault("_warned_columns", set())
    results, warnings = name_missing_columns(results, rows, columns, reward.config, warned)
    for warning in warnings:
        logger.warning("reward %s: %s", reward.__name__, warning)
    return results


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


def warm_up_all(rewards: Iterable[Reward]) -> None:
    """:meth:`Reward.warm_up` on each reward at once (each may wait seconds for a process to start); a reward
    whose warm-up fails is logged and starts on first use instead."""

    def warm(reward: Reward) -> None:
        try:
            reward.warm_up()
        except Exception:
            logger.warning("warming up %s failed; it starts on first use", reward.__name__, exc_info=True)

    threads = [threading.Thread(target=warm, args=(r,), name=f"warm-{r.__name__}") for r in rewards]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def held_rewards(owner: Reward) -> list[Reward]:
    """The rewards ``owner`` holds in its attributes, directly or in a list, tuple or dict (each once)."""
    found: dict[int, Reward] = {}
    for value in vars(owner).values():
        items = value.values() if isinstance(value, Mapping) else value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if isinstance(item, Reward) and item is not owner:
                found.setdefault(id(item), item)
    return list(found.values())


def _screen(
    reward: Reward, texts: list[str | None], rows: list[dict[str, Any]], not_text: list[str] | None, leaf: bool
) -> list[RewardResult | None]:
    """The answers the base gives itself: a completion without text, a gold column that did not align with the
    batch (a leaf reward's own; a composite's parts screen theirs). ``None`` marks the samples left to the family."""
    if len(texts) != len(rows):
        reason = f"internal error: {len(texts)} completions for {len(rows)} rows"
        return [RewardResult.unscorable(reason) for _ in texts]
    try:
        declared = tuple(reward.gold_columns) if leaf else ()
    except Exception:  # a broken declaration must not cost the batch
        declared = ()
    misaligned = misaligned_reasons(rows, declared)
    early: list[RewardResult | None] = []
    for i, text in enumerate(texts):
        if text is None:
            early.append(RewardResult.unscorable(not_text[i] if not_text else "completion is not text"))
        else:
            problem = misaligned[i]
            early.append(RewardResult.unscorable(problem) if problem else None)
    return early


def _prepare(completions: Any, kwargs: dict[str, Any]) -> tuple[list[str | None], list[dict[str, Any]], list[str]]:
    batch = as_column(completions)
    if batch is None:
        # A single completion passed bare is a caller mistake we can still answer sample-wise.
        batch = [completions]
    texts = [_text_or_none(c) for c in batch]
    not_text = [describe_non_text(c) if t is None else "" for c, t in zip(batch, texts, strict=True)]
    return texts, rows_from_columns(len(texts), kwargs), not_text


def _checked(results: list[RewardResult], n: int) -> list[RewardResult]:
    results = list(results)
    if len(results) != n:
        reason = f"internal error: {len(results)} results for {n} samples"
        return [RewardResult.unscorable(reason) for _ in range(n)]
    return [_finite(r) for r in results]


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
