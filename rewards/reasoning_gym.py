"""reasoning-gym's procedural tasks as a reward and as training data: each task family's own scorer decides.

reasoning-gym (``pip install 'rewardsmith[reasoning-gym]'``) generates entries ``{question, answer, metadata}``
for ~100 task families and scores an answer with the family's ``score_answer(answer, entry)``, some with partial
credit. The reward rebuilds the entry from the row's columns, takes the answer out of the completion with
reasoning-gym's own ``extract_answer`` (the last ``<answer>...</answer>``) and returns that scorer's number, so a
run trains on exactly what reasoning-gym evaluates. Two rules are the reward's own: a completion without the answer
tag scores 0.0 without asking the scorer (fraction_simplification's and puzzle24's give ``None`` 0.01, which would
pay a policy for dropping the format), and only the text after the reasoning block (``reasoning_end``,
``</think>``) is read, as ``math_equivalence`` reads it (an ``<answer>`` written inside the reasoning and never
stated after it was paid: the verifier card's gold-in-think attack on every row), so an opened but never closed
block has no answer.

Through TRL the ``metadata`` column is a JSON string: a ``datasets`` table would unify the families' different
metadata dicts and add every other family's keys set to ``None``. :func:`dataset` writes it that way, tuples kept
(the ARC families compare tuple grids); a plain JSON object or a dict works too.

Scorers are third-party code run on model output (some parse it with sympy), so extraction and scoring run in a
worker process with a hard per-call timeout: a completion that makes checking overrun or crash scores 0.0, as
does one whose answer the scorer rejects by raising. ``None`` is kept for rows that name no task, an unknown
task or no metadata, and for workers that could not start.
"""

from __future__ import annotations

import functools
import json
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pydantic import Field

from rewardsmith.extras import missing_extra
from rewardsmith.hard_timeout import CallOutcome, CallStatus, HardTimeoutPool, shared_pool
from rewardsmith.registry import register_reward
from rewardsmith.reward import ConfigError, Reward, RewardConfig
from rewardsmith.transient import KeepsConfig
from rewardsmith.types import RewardResult

#: The key that marks a tuple in an encoded metadata column (JSON has lists only).
TUPLE_KEY = "__tuple__"


class ReasoningGymConfig(RewardConfig):
    metadata_column: str = Field("metadata", min_length=1, description="the entry's metadata (JSON string or dict)")
    answer_column: str = Field("answer", min_length=1, description="the entry's gold answer (None for some tasks)")
    question_column: str = Field("question", min_length=1, description="the entry's question text")
    task_column: str | None = Field(
        None, min_length=1, description="column naming the task family; None: the metadata's source_dataset"
    )
    answer_tag: str | None = Field(
        "answer", pattern=r"^[A-Za-z][A-Za-z0-9_.:-]*$", description="tag the answer is in; None: whole completion"
    )
    reasoning_end: str | None = Field(
        "</think>", min_length=1, description="only text after this tag is read; None: the whole completion"
    )
    timeout_s: float = Field(5.0, gt=0, description="hard limit on extracting and scoring one completion")
    workers: int = Field(1, ge=1, description="worker processes that run the scorers")
    memory_limit_mb: int | None = Field(2048, gt=0, description="address-space limit of each worker")


# -- metadata column ---------------------------------------------------------------------------------
def _tag_tuples(value: Any) -> Any:
    if isinstance(value, tuple):
        return {TUPLE_KEY: [_tag_tuples(v) for v in value]}
    if isinstance(value, list):
        return [_tag_tuples(v) for v in value]
    if isinstance(value, dict):
        return {k: _tag_tuples(v) for k, v in value.items()}
    return value


def _untag_tuples(obj: dict[str, Any]) -> Any:
    if len(obj) == 1 and TUPLE_KEY in obj and isinstance(obj[TUPLE_KEY], list):
        return tuple(obj[TUPLE_KEY])
    return obj


def encode_metadata(metadata: Mapping[str, Any]) -> str:
    """An entry's metadata as one JSON string that :func:`decode_metadata` turns back into equal values."""
    return json.dumps(_tag_tuples(dict(metadata)), ensure_ascii=False)


def decode_metadata(value: Any) -> dict[str, Any] | str:
    """The metadata dict of a column value (JSON string or dict), or the reason it is none."""
    if isinstance(value, Mapping):
        return dict(value)
    if not isinstance(value, str):
        return f"is {type(value).__name__}, not a JSON object"
    try:
        decoded = json.loads(value, object_hook=_untag_tuples)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than the parser goes
        return f"is not JSON ({type(exc).__name__}: {str(exc)[:80]})"
    return decoded if isinstance(decoded, dict) else "is not a JSON object"


# -- worker side ---------------------------------------------------------------------------------------
@functools.cache
def _scorer(task: str) -> Callable[[Any, dict[str, Any]], Any] | None:
    from reasoning_gym.factory import DATASETS, get_score_answer_fn

    return get_score_answer_fn(task) if task in DATASETS else None


def after_reasoning(completion: str, reasoning_end: str | None) -> str | None:
    """The text after the last ``reasoning_end``; the whole completion without one; None when a reasoning block was
    opened (``<think>`` for ``</think>``) and never closed."""
    if not reasoning_end:
        return completion
    cut = completion.rfind(reasoning_end)
    if cut >= 0:
        return completion[cut + len(reasoning_end) :]
    if reasoning_end.startswith("</") and "<" + reasoning_end[2:] in completion:
        return None
    return completion


def judge_answer(
    task: str, completion: str, entry: dict[str, Any], answer_tag: str | None, reasoning_end: str | None = "</think>"
) -> tuple[float | None, str]:
    """``(score, reason)`` of one completion by the task's own scorer; ``score`` is None for an unknown task."""
    from reasoning_gym.factory import DATASETS
    from reasoning_gym.utils import extract_answer

    scorer = _scorer(task)
    if scorer is None:
        return None, f"unknown reasoning-gym task {task!r} ({len(DATASETS)} known; check the row's task)"
    final = after_reasoning(completion, reasoning_end)
    if final is None:
        return 0.0, f"reasoning block never closed with {reasoning_end}: no answer after it"
    answer = final if answer_tag is None else extract_answer(final, tag_name=answer_tag)
    if answer is None:
        where = "after the reasoning" if reasoning_end and reasoning_end in completion else "in the completion"
        return 0.0, f"no <{answer_tag}>...</{answer_tag}> {where}"
    try:
        score = float(scorer(answer, entry))
    except Exception as exc:
        error = f"{type(exc).__name__}: {str(exc)[:120]}"
        if _fails_on_gold(scorer, entry):  # the row, not the answer: its metadata lacks what the scorer reads
            return None, f"{task} scorer fails on this row's own answer too ({error}): check the row's metadata"
        return 0.0, f"{task} scorer rejected the answer: {error}"  # int("zzz"): a wrong answer
    return score, f"{task} scorer: {score:g} for {_clip(answer)}"


def _fails_on_gold(scorer: Callable[[Any, dict[str, Any]], Any], entry: dict[str, Any]) -> bool:
    """Whether the scorer also raises on the entry's own gold answer (only asked once it raised on the completion's)."""
    gold = entry.get("answer")
    if not isinstance(gold, str):
        return False
    try:
        scorer(gold, entry)
    except Exception:
        return True
    return False


def _clip(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


# -- the reward ----------------------------------------------------------------------------------------
@register_reward("reasoning_gym")
class ReasoningGym(KeepsConfig, Reward[ReasoningGymConfig]):
    """A reasoning-gym task family's own scorer on the completion's ``<answer>``: its number, partial credit kept.

    The row carries the entry as columns (``question``, ``answer``, ``metadata``; :func:`dataset` writes them) and
    names its task by the metadata's ``source_dataset`` (or ``task_column``). No answer tag, a wrong answer, or an
    answer the scorer rejects or cannot check within ``timeout_s``: 0.0. No metadata, no task, an unknown task, a
    scorer that raises on the row's own gold answer too: ``None`` with the reason.
    """

    _PICKLED = ("config", "__name__")

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        problem = missing_extra("reasoning-gym", "the reasoning_gym reward")
        if problem:
            raise ConfigError(problem)
        self._rebuild()

    def _rebuild(self) -> None:
        # Shared by this process's instances with the same workers and memory limit; each call brings its own limit.
        lease = shared_pool(
            workers=self.config.workers,
            preload=("reasoning_gym", "rewardsmith.rewards.reasoning_gym"),
            memory_limit_mb=self.config.memory_limit_mb,
        )
        self.pool: HardTimeoutPool = lease.pool
        self._lease = lease
        self._let_go = weakref.finalize(self, lease.release)

    @property
    def gold_columns(self) -> tuple[str, ...]:
        return (self.config.metadata_column,)

    def warm_up(self) -> None:
        self.pool.warm_up()

    def close(self) -> None:
        """Stop the worker processes (unless other instances of this process share them)."""
        self._let_go.detach()
        self._lease.release()

    def entry_of(self, row: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | str:
        """``(task, entry)`` rebuilt from the row's columns, or the reason the row cannot be scored."""
        column = self.config.metadata_column
        metadata = decode_metadata(row.get(column))
        if isinstance(metadata, str):
            return f"column {column!r} {metadata}"
        if self.config.task_column is not None:
            task, where = row.get(self.config.task_column), f"column {self.config.task_column!r}"
        else:
            task, where = metadata.get("source_dataset"), f"{column}['source_dataset']"
        if not isinstance(task, str) or not task:
            return f"no reasoning-gym task name in {where}"
        entry = {
            "question": row.get(self.config.question_column) or "",
            "answer": row.get(self.config.answer_column),
            "metadata": metadata,
        }
        return task, entry

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        results: list[RewardResult | None] = [None] * len(completions)
        calls, where = [], []
        for i, (completion, row) in enumerate(zip(completions, rows, strict=True)):
            if completion is None:
                results[i] = RewardResult.unscorable("completion is not text")
                continue
            found = self.entry_of(row)
            if isinstance(found, str):
                results[i] = RewardResult.unscorable(found)
                continue
            task, entry = found
            calls.append((task, completion, entry, self.config.answer_tag, self.config.reasoning_end))
            where.append(i)
        for i, outcome in zip(where, self.pool.map(judge_answer, calls, timeout_s=self.config.timeout_s), strict=True):
            results[i] = self._verdict(outcome)
        return [r for r in results if r is not None]

    def _verdict(self, outcome: CallOutcome) -> RewardResult:
        if outcome.ok:
            score, reason = outcome.value
            return RewardResult(score=score, reason=reason)
        if not outcome.started:
            return RewardResult.unscorable(f"no scoring worker: {outcome.error or 'none started in time'}")
        if outcome.status is CallStatus.TIMEOUT:
            return RewardResult(score=0.0, reason=f"checking the answer took over {self.config.timeout_s:g} s")
        if outcome.status is CallStatus.CRASHED:
            return RewardResult(score=0.0, reason=f"checking the answer crashed its worker: {outcome.error}")
        return RewardResult.unscorable(f"scoring worker failed: {outcome.error}")


# -- training data ---------------------------------------------------------------------------------------
def dataset(
    tasks: Iterable[str] | Mapping[str, Mapping[str, Any]],
    size: int = 100,
    seed: int = 0,
    system_prompt: str | None = "default",
) -> list[dict[str, Any]]:
    """TRL-shaped rows from reasoning-gym tasks: ``prompt`` (chat messages) plus the columns the reward reads.

    ``tasks`` names the families, or maps each to its reasoning-gym config (``{"leg_counting": {"max_animals":
    5}}``); each gives ``size`` entries from ``seed``, interleaved so every batch mixes families. ``system_prompt``
    is a name in reasoning-gym's ``SYSTEM_PROMPTS`` (``"default"`` asks for ``<answer>`` tags), the text itself,
    or None. ``datasets.Dataset.from_list(rows)`` makes it a trainer's dataset.
    """
    problem = missing_extra("reasoning-gym", "rewardsmith.rewards.reasoning_gym.dataset")
    if problem:
        raise ConfigError(problem)
    import reasoning_gym
    from reasoning_gym.utils import SYSTEM_PROMPTS

    configs = dict(tasks) if isinstance(tasks, Mapping) else {name: {} for name in tasks}
    system = SYSTEM_PROMPTS.get(system_prompt, system_prompt) if system_prompt is not None else None
    families = [
        (name, reasoning_gym.create_dataset(name, size=size, seed=seed, **cfg)) for name, cfg in configs.items()
    ]
    rows = []
    for index in range(size):
        for name, data in families:
            entry = data[index]
            rows.append(_row(name, entry, system))
    return rows


def _row(task: str, entry: Mapping[str, Any], system: str | None) -> dict[str, Any]:
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": entry["question"]})
    return {
        "prompt": messages,
        "question": entry["question"],
        "answer": entry["answer"],
        "metadata": encode_metadata(entry["metadata"]),
        "task": task,
    }


def task_names() -> Sequence[str]:
    """The task families this reasoning-gym install has, sorted."""
    from reasoning_gym.factory import DATASETS

    return sorted(DATASETS)


__all__ = [
    "ReasoningGym",
    "ReasoningGymConfig",
    "dataset",
    "decode_metadata",
    "encode_metadata",
    "judge_answer",
    "task_names",
]
