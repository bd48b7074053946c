"""The reward contract: a picklable callable that TRL's ``GRPOTrainer`` accepts unchanged.

A ``Reward`` subclass declares a pydantic ``Config`` and implements ``score_one`` (or
``score_batch`` when a family batches, e.g. a sandbox or a judge). The base class owns everything
the trainer relies on: plain and conversational completions, aligned dataset columns (lists, numpy
arrays, pandas Series, tensors), per-sample reasons logged through TRL's ``log_extra``, and the promise
that nothing ever raises into training. Samples the base can answer itself never reach the family: a
completion without text ("completion is int, not text") and a declared ``required_columns`` entry the
caller passed misaligned ("column 'solution' has 1 value for 2 completions"). A gold column that did not arrive,
or arrived empty in every row, is named in each unscorable sample's reason with the setting that fixes it, and
logged once per reward instance: a trainer ignores ``None``, so a misnamed column would otherwise train on nothing.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sized
from collections.abc import Set as AbstractSet
from typing import Any, ClassVar, Generic, TypeVar, cast, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from rewardsmith.bridge import run_inline, to_async
from rewardsmith.reward_config import ConfigError, ConfigT, RewardConfig, build_config
from rewardsmith.groups import BatchDependency, dependency_of, merge_groups, strongest
from rewardsmith.types import RewardResult, completion_text, describe_non_text

logger = logging.getLogger(__name__)

#: Keyword arguments TRL passes that are not per-sample dataset columns.
TRAINER_KWARGS = frozenset({"trainer_state", "log_extra", "log_metric", "environments"})


class Reward(Generic[ConfigT]):
    """Base class of every rewardsmith reward.

    Subclasses name their config once as the type argument (``class MathEquivalence(Reward[MathConfig])``),
    which makes ``self.config`` typed and sets ``Config``; the registered name comes from
    :func:`~rewardsmith.registry.register_reward`. They implement :meth:`score_one` or :meth:`score_batch`.
    Instances are plain objects with picklable state (no closures) so that TRL can ship them to a
    spawned scoring process.
    """

    name: ClassVar[str] = "reward"
    Config: ClassVar[type[RewardConfig]] = RewardConfig
    config: ConfigT
    #: Dataset columns a sample cannot be scored without (override with a property when the name is
    #: configurable). A declared column that the caller passed misaligned makes the sample unscorable with
    #: the misalignment as the reason, before the family is asked.
    required_columns: tuple[str, ...] = ()

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

    def gold_columns(self) -> tuple[str, ...]:
        """The columns holding this reward's gold (answer, tests, reference response), so an adapter can route a
        trainer's single ``answer`` field there: ``required_columns``, else a configured ``reference_column``.
        Composites answer for their parts."""
        if self.required_columns:
            return tuple(self.required_columns)
        reference = getattr(self.config, "reference_column", None)
        return (reference,) if isinstance(reference, str) and reference else ()

    def batch_dependency(self) -> BatchDependency:
        """Whether a score depends on other samples of the call: ``None`` (no), ``"group"`` (on its group's, see
        :meth:`groups`) or ``"batch"`` (on all of them). Transports that split batches read it to keep groups
        whole. A group reward overrides it; the default is the strongest of the rewards this one holds."""
        return strongest(dependency_of(r) for r in _held_rewards(self))

    def groups(self, rows: list[dict[str, Any]]) -> list[list[int]]:
        """Indices of ``rows`` that this reward scores together (each group whole in one call). The default keeps
        whole the groups of every reward this one holds; samples of no group are groups of one."""
        held = [r for r in _held_rewards(self) if dependency_of(r) is not None]
        if self.batch_dependency() == "batch":
            return [list(range(len(rows)))] if rows else []
        return merge_groups(len(rows), [r.groups(rows) for r in held])

    def warm_up(self) -> object:
        """Start what this reward otherwise starts on first use (worker pools, a sandbox), and wait until ready.

        A server calls it before it says "ready", so its first request does not pay a cold start. The default
        warms the rewards this one holds (a composite's parts, a wrapper's inner reward), at the same time.
        A subclass may return a report of what it started (the Ray pool: its actors' nodes); callers of this
        general contract ignore it.
        """
        warm_up_all(_held_rewards(self))
        return None

    # -- what subclasses implement -------------------------------------------------------------
    def score_one(self, completion: str, row: Mapping[str, Any]) -> RewardResult:
        """Score one completion given its dataset row (every column plus ``prompt``)."""
        raise NotImplementedError

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        """Score a batch; the default isolates each sample so one failure costs one ``None``.

        Through :meth:`details` and :meth:`score_rows` every completion here is text; ``None`` arrives only
        when a caller invokes ``score_batch`` directly.
        """
        return [self._guarded_one(c, r) for c, r in zip(completions, rows, strict=True)]

    async def ascore_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        """Async batch scoring; the default runs the sync path in a worker thread so the loop stays free."""
        return await to_async(self.score_batch, completions, rows)

    # -- the contract ----------------------------------------------------------------------------
    def details(self, completions: Any, **kwargs: Any) -> list[RewardResult]:
        """Score ``completions`` and return one :class:`RewardResult` (score + reason) per sample."""
        texts, rows, not_text = self._prepare(completions, kwargs)
        return run_inline(self.score_core(texts, rows, not_text, inline=True))

    async def adetails(self, completions: Any, **kwargs: Any) -> list[RewardResult]:
        texts, rows, not_text = self._prepare(completions, kwargs)
        return await self.score_core(texts, rows, not_text, inline=False)

    def score_rows(self, texts: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        """Guarded :meth:`score_batch` on already-normalised texts and rows."""
        return run_inline(self.score_core(texts, rows, None, inline=True))

    async def ascore_rows(self, texts: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        return await self.score_core(texts, rows, None, inline=False)

    def __call__(self, completions: Any, **kwargs: Any) -> list[float | None]:
        results = self.details(completions, **kwargs)
        _log_reasons(self.__name__, results, kwargs.get("log_extra"))
        return [r.score for r in results]

    def as_async(self) -> AsyncReward:
        """This reward with an ``async __call__``, so TRL runs it concurrently with other rewards."""
        return AsyncReward(self)

    # -- the one scoring core --------------------------------------------------------------------
    async def score_core(
        self, texts: list[str | None], rows: list[dict[str, Any]], not_text: list[str] | None, *, inline: bool
    ) -> list[RewardResult]:
        """Screen, score what is left, check and merge: the whole guarded path, written once.

        ``inline=True`` is the sync path: it calls :meth:`score_batch` and never suspends, so
        :func:`run_inline` drives it without an event loop (composites pass the flag to their children).
        ``inline=False`` awaits :meth:`ascore_batch`.
        """
        early = self._screen(texts, rows, not_text)
        todo = [i for i, answer in enumerate(early) if answer is None]
        scored: list[RewardResult] = []
        if todo:
            picked_texts, picked_rows = [texts[i] for i in todo], [rows[i] for i in todo]
            try:
                if inline:
                    results = self.score_batch(picked_texts, picked_rows)
                else:
                    results = await self.ascore_batch(picked_texts, picked_rows)
                scored = self._checked(results, len(todo))
            except Exception as exc:  # a family bug must not kill training
                logger.exception("reward %s failed on a batch", self.name)
                scored = [RewardResult.unscorable(f"internal error: {type(exc).__name__}: {exc}") for _ in todo]
        return self._missing_columns_named(_merge(early, todo, scored, rows), rows)

    def column_setting(self, column: str) -> str | None:
        """The config field that names ``column`` (``gold_column``, ``tests_column``, ``reference_column``), so a
        reason can quote the setting that fixes a missing column; ``None`` when no field names it."""
        for field, value in self.config:
            if value == column and field.endswith("column"):
                return field
        return None

    def _missing_columns_named(self, results: list[RewardResult], rows: list[dict[str, Any]]) -> list[RewardResult]:
        """Unscorable samples whose gold column did not arrive (or arrived empty) say so, with the fix.

        A dataset without the gold column (GSM8K ships ``answer``, not ``solution``) makes every sample
        unscorable; a trainer ignores ``None`` and trains on nothing. So each such reason names the columns that
        did arrive and the setting that fixes it, and the first batch where it happens logs one warning per
        reward instance and column. Composites leave this to the rewards they hold (each names its own setting).
        """
        if not rows or _held_rewards(self):
            return results
        try:
            columns = tuple(self.gold_columns())
        except Exception:  # a broken declaration must not cost the batch
            return results
        out = list(results)
        for column in columns:
            blank = [result.score is None and _blank(row, column) for result, row in zip(out, rows, strict=True)]
            # the whole batch blank and unscorable is the column's doing; a single row, when its reason says so
            hit = [i for i, b in enumerate(blank) if b and (all(blank) or _mentions(out[i].reason, column))]
            if not hit:
                continue
            fix, warning = self._column_fix(column, rows)
            for i in hit:
                out[i] = out[i].model_copy(update={"reason": f"{out[i].reason}; {fix}"})
            warned: set[str] = self.__dict__.setdefault("_warned_columns", set())
            if warning and column not in warned:
                warned.add(column)
                logger.warning(
                    "reward %s: %d of %d samples unscorable: %s", self.__name__, len(hit), len(rows), warning
                )
        return out

    def _column_fix(self, column: str, rows: list[dict[str, Any]]) -> tuple[str, str | None]:
        """The fix a reason quotes for a blank ``column``, and the batch-wide warning (``None`` when only some rows
        are blank: a row without gold is that row's problem, not a misconfiguration)."""
        setting = self.column_setting(column)
        arrived = sorted({c for row in rows for c in row})
        remedy = (
            f"set {setting} to the column that holds it" if setting else f"pass the column {column!r}"
        ) + f" (columns that arrived: {', '.join(arrived) or 'none'})"
        if all(column not in row for row in rows):
            fix = f"the data has no column {column!r}: {remedy}"
            return fix, fix
        if all(_blank(row, column) for row in rows):
            fix = f"column {column!r} is empty in every row: {remedy}"
            return fix, fix
        return f"column {column!r} is missing or empty in this row", None

    # -- internals -------------------------------------------------------------------------------
    def _screen(
        self, texts: list[str | None], rows: list[dict[str, Any]], not_text: list[str] | None
    ) -> list[RewardResult | None]:
        """The answers the base class gives itself: a completion without text, a required column that did not
        align with the batch. ``None`` marks the samples left to the family."""
        if len(texts) != len(rows):
            reason = f"internal error: {len(texts)} completions for {len(rows)} rows"
            return [RewardResult.unscorable(reason) for _ in texts]
        try:
            required = tuple(self.required_columns)
        except Exception:  # a broken declaration must not cost the batch
            required = ()
        early: list[RewardResult | None] = []
        for i, (text, row) in enumerate(zip(texts, rows, strict=True)):
            if text is None:
                early.append(RewardResult.unscorable(not_text[i] if not_text else "completion is not text"))
                continue
            problems = [p for p in (column_problem(row, c) for c in required if c not in row) if p]
            early.append(RewardResult.unscorable("; ".join(problems)) if problems else None)
        return early

    def _guarded_one(self, completion: str | None, row: dict[str, Any]) -> RewardResult:
        if completion is None:
            return RewardResult.unscorable("completion is not text")
        try:
            return self.score_one(completion, row)
        except Exception as exc:
            logger.debug("reward %s failed on a sample", self.name, exc_info=True)
            return RewardResult.unscorable(f"internal error: {type(exc).__name__}: {exc}")

    def _prepare(
        self, completions: Any, kwargs: dict[str, Any]
    ) -> tuple[list[str | None], list[dict[str, Any]], list[str]]:
        batch = as_column(completions)
        if batch is None:
            # A single completion passed bare is a caller mistake we can still answer sample-wise.
            batch = [completions]
        texts = [_text_or_none(c) for c in batch]
        not_text = [describe_non_text(c) if t is None else "" for c, t in zip(batch, texts, strict=True)]
        return texts, rows_from_columns(len(texts), kwargs), not_text

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


def warm_up_all(rewards: Iterable[Reward]) -> None:
    """:meth:`Reward.warm_up` on each reward at once (each may wait seconds for a process to start); a reward
    whose warm-up fails is logged and starts on first use instead."""
    import threading

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


def _held_rewards(owner: Reward) -> list[Reward]:
    """The rewards ``owner`` holds in its attributes, directly or in a list, tuple or dict (each once)."""
    found: dict[int, Reward] = {}
    for value in vars(owner).values():
        items = value.values() if isinstance(value, Mapping) else value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if isinstance(item, Reward) and item is not owner:
                found.setdefault(id(item), item)
    return list(found.values())


class Row(dict):
    """One sample's dataset columns (``prompt`` included), as a reward receives them.

    ``misaligned`` maps each column the caller passed that could not be split per sample (wrong length,
    not a sequence) to why, e.g. ``"column 'solution' has 1 value for 2 completions"``; such a column is
    absent from the row. Plain dicts work wherever a ``Row`` does (see :func:`column_problem`).
    """

    def __init__(self, *args: Any, misaligned: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.misaligned: Mapping[str, str] = misaligned or {}


def column_problem(row: Mapping[str, Any], column: str) -> str | None:
    """Why ``column`` is absent from ``row`` when the caller passed it misaligned; ``None`` otherwise."""
    misaligned = getattr(row, "misaligned", None)
    return misaligned.get(column) if isinstance(misaligned, Mapping) else None


def as_column(values: Any) -> list[Any] | None:
    """``values`` as a list of plain Python values, or ``None`` when it is not a sequence of samples.

    Lists and tuples, numpy arrays, pandas Series, torch tensors and other sized iterables qualify;
    strings, bytes, mappings, sets and scalars (a 0-d array included) do not.
    """
    if values is None or isinstance(values, (str, bytes, bytearray, Mapping, AbstractSet)):
        return None
    try:
        if isinstance(values, (list, tuple)):
            return [_plain(v) for v in values]
        tolist = getattr(values, "tolist", None)
        if callable(tolist):
            converted = tolist()
            return converted if isinstance(converted, list) else None
        if isinstance(values, Sized) and isinstance(values, Iterable):
            return [_plain(v) for v in values]
    except Exception:  # an object that claims to be a sequence but cannot be read is not a column
        return None
    return None


def _plain(value: Any) -> Any:
    """A numpy/torch scalar or array as the Python value it holds; anything else unchanged."""
    if isinstance(value, (str, bytes, bytearray, int, float, bool, list, tuple, dict)) or value is None:
        return value
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        try:
            return tolist()
        except Exception:
            return value
    return value


def rows_from_columns(n: int, kwargs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Split TRL's column-wise kwargs into one :class:`Row` per sample; ``prompts`` becomes ``prompt``.

    A column that does not hold exactly ``n`` values is left out of every row and recorded in
    ``Row.misaligned``, so a reward can say why it is absent instead of calling it missing.
    """
    columns: dict[str, list[Any]] = {}
    misaligned: dict[str, str] = {}
    for key, values in kwargs.items():
        if key in TRAINER_KWARGS:
            continue
        column = "prompt" if key == "prompts" else key
        aligned = as_column(values)
        if aligned is None:
            misaligned[column] = f"column {column!r} is {type(values).__name__}, not one value per completion"
        elif len(aligned) != n:
            misaligned[column] = f"column {column!r} has {_count(len(aligned), 'value')} for {_count(n, 'completion')}"
        else:
            columns[column] = aligned
    return [Row({c: v[i] for c, v in columns.items()}, misaligned=misaligned) for i in range(n)]


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


def _merge(
    early: list[RewardResult | None], todo: list[int], scored: list[RewardResult], rows: list[dict[str, Any]]
) -> list[RewardResult]:
    by_index = dict(zip(todo, scored, strict=True))  # todo holds exactly the indices whose early answer is None
    out = [r if r is not None else by_index[i] for i, r in enumerate(early)]
    return [_explained(r, row) for r, row in zip(out, rows, strict=True)]


def _explained(result: RewardResult, row: Mapping[str, Any]) -> RewardResult:
    """An unscorable result in a row with misaligned columns says so: the misalignment is the likely cause."""
    misaligned = getattr(row, "misaligned", None)
    if result.score is not None or not misaligned:
        return result
    notes = [note for note in misaligned.values() if note not in result.reason]
    if not notes:
        return result
    cause = [note for column, note in misaligned.items() if note in notes and _mentions(result.reason, column)]
    reason = f"{'; '.join(cause)} ({result.reason})" if cause else f"{result.reason}; {'; '.join(notes)}"
    return result.model_copy(update={"reason": reason})


def _blank(row: Mapping[str, Any], column: str) -> bool:
    """``column`` is absent from ``row`` (and not misaligned, which has its own reason) or holds nothing."""
    if column not in row:
        return column_problem(row, column) is None
    value = row[column]
    return value is None or (
        isinstance(value, (str, list, tuple, dict)) and not (value.strip() if isinstance(value, str) else value)
    )


def _mentions(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", text) is not None


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
