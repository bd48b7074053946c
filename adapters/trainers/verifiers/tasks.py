"""rewardsmith rewards as the rewards and metrics of a verifiers 0.4 (v1 API) ``Task``.

verifiers 0.4 scores a rollout with its task's ``@vf.reward(weight=...)`` and ``@vf.metric`` members:
``Task.score`` finds them on the class, calls each with the arguments its signature names (``task``: the row's
``TaskData``; ``trace``: the rollout's ``Trace``), records a reward as ``Reward(score, weight)`` in
``trace.rewards`` (``trace.reward`` is their weighted sum) and a metric, unweighted, in ``trace.metrics``.
:func:`task_reward` and :func:`task_metric` give such a member for one rewardsmith spec; :func:`task_rubric` gives a
base class with one weighted reward per term of a spec list (what a legacy ``Rubric`` scored)::

    import verifiers.v1 as vf
    from rewardsmith.adapters.trainers.verifiers import task_metric, task_reward, task_rubric

    class MathData(vf.TaskData):
        answer: str

    class MathTask(vf.Task[MathData]):
        correct = task_reward("math_equivalence")            # recorded as "correct", weight 1.0
        formatted = task_reward("think_format", weight=0.2)
        tags = task_metric("tag_count")

    class RubricTask(task_rubric(["math_equivalence", {"name": "think_format", "weight": 0.2}]), vf.Task[MathData]):
        pass

The same member can be plugged by import path (``--env.taskset.task.rewards.correct.fn mymodule:correct``).

What the reward sees: the rollout's sampled assistant messages as the completion (the root agent's
``root_reply`` when verifiers set one), the task's system prompt and prompt as ``prompts``, and a row made of the
``TaskData`` fields beyond verifiers' own, where ``answer`` also fills the reward's gold column (``solution`` for
``math_equivalence``, ``tests`` for ``code_tests``; ``answer_column`` overrides) unless the data has a field of
that name. verifiers needs a number, so an unscorable sample scores ``unscorable_score`` (default 0.0); the
metric ``<name>_unscorable`` (1.0 or 0.0, so its mean is the unscorable rate) and ``trace.info["rewardsmith"][name]``
(score and reason) say which and why.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from rewardsmith.compose import build_reward, spec_weight
from rewardsmith.types import RewardResult

from .terms import VerifiersOptions, check_distinct, gold_column, options_of, plain_data, plain_messages, spec_terms

logger = logging.getLogger(__name__)

#: verifiers 0.4 is the release with the v1 task API; it pins openai<3, so it often needs its own environment.
V1_INSTALL_HINT = "pip install 'verifiers>=0.4,<0.5'"
#: ``TaskData``'s own fields in verifiers 0.4, used when verifiers is not importable (the row never sees them).
TASK_DATA_FIELDS = frozenset(
    {
        "idx", "id", "name", "description", "prompt", "system_prompt", "image", "workdir", "agent_user", "skills",
        "network_allow", "network_block", "artifacts", "artifact_max_bytes", "timeout", "resources",
    }
)  # fmt: skip


class TaskReward:
    """One rewardsmith reward with the call shape of a v1 task reward or metric: ``await fn(task, trace)``."""

    def __init__(
        self, spec: Any, options: VerifiersOptions | Mapping[str, Any] | None = None, *, name: str | None = None
    ) -> None:
        self.options = options_of(options)
        self.scorer = build_reward(spec)
        self.answer_column = self.options.answer_column or gold_column(self.scorer)
        self.__name__ = self.__qualname__ = name or self.scorer.__name__
        self.fixed_name = name is not None

    def __set_name__(self, owner: type, attribute: str) -> None:
        # `correct = task_reward(...)` records under "correct", as a `@vf.reward def correct` would.
        if not self.fixed_name:
            self.__name__ = self.__qualname__ = attribute

    def __repr__(self) -> str:
        return f"TaskReward({self.__name__!r}, {self.scorer!r}, answer_column={self.answer_column!r})"

    async def __call__(self, task: Any, trace: Any) -> float:
        result = await self.result(task, trace)
        self.record(trace, result)
        score = self.options.as_number(result.score)
        if result.score is None:
            logger.warning("%s: unscorable, scored %s: %s", self.__name__, score, result.reason)
        return score

    async def result(self, task: Any, trace: Any) -> RewardResult:
        """The reward's full verdict (score or ``None``, and the reason) for one rollout; never raises."""
        try:
            row = self.row(task)
            row["prompts"] = prompt_messages(task)
            texts = [completion_messages(trace)]
            [result] = await self.scorer.adetails(texts, **{k: [v] for k, v in row.items()})
            return result
        except Exception as exc:  # verifiers fails the whole rollout's scoring on an exception
            logger.warning("%s: could not score the rollout", self.__name__, exc_info=True)
            return RewardResult.unscorable(f"verifiers adapter: {type(exc).__name__}: {exc}")

    def row(self, task: Any) -> dict[str, Any]:
        """The reward's dataset columns for one task: its data fields beyond verifiers' own, ``answer`` also in
        the gold column."""
        data = task.model_dump() if callable(getattr(task, "model_dump", None)) else dict(task or {})
        own = task_data_fields()
        row = {k: v for k, v in data.items() if k not in own and plain_data(v)}
        answer = row.get("answer")
        if self.answer_column not in row and answer is not None and not (isinstance(answer, str) and not answer):
            row[self.answer_column] = answer
        return row

    def record(self, trace: Any, result: RewardResult) -> None:
        try:
            trace.info.setdefault("rewardsmith", {})[self.__name__] = {"score": result.score, "reason": result.reason}
            trace.record_metric(f"{self.__name__}_unscorable", float(result.score is None))
        except Exception:  # a trace that refuses the record must not cost the score
            logger.debug("could not record the reason on the trace", exc_info=True)


def task_reward(
    spec: Any,
    *,
    weight: float | None = None,
    priority: int = 0,
    name: str | None = None,
    answer_column: str | None = None,
    unscorable_score: float = 0.0,
) -> TaskReward:
    """A ``@vf.reward``-marked member for one rewardsmith spec; ``weight`` defaults to the spec's ``weight``."""
    fn = TaskReward(spec, {"answer_column": answer_column, "unscorable_score": unscorable_score}, name=name)
    return v1_api().reward(fn, weight=spec_weight(spec) if weight is None else weight, priority=priority)


def task_metric(
    spec: Any,
    *,
    priority: int = 0,
    name: str | None = None,
    answer_column: str | None = None,
    unscorable_score: float = 0.0,
) -> TaskReward:
    """A ``@vf.metric``-marked member (recorded, not summed into the reward) for one rewardsmith spec."""
    fn = TaskReward(spec, {"answer_column": answer_column, "unscorable_score": unscorable_score}, name=name)
    return v1_api().metric(fn, priority=priority)


def task_rubric(specs: Any, *, class_name: str = "RewardsmithRubric", **options: Any) -> type:
    """A base class holding one weighted ``@vf.reward`` per term of ``specs`` (the spec grammar of
    :func:`~rewardsmith.adapters.trainers.verifiers.rubric`), for ``class MyTask(task_rubric([...]), vf.Task[MyData])``.
    ``options`` (``answer_column``, ``unscorable_score``) apply to every term unless the term sets its own."""
    vf = v1_api()
    made = spec_terms(specs, "verifiers task_rubric", TaskReward, **options)
    names = [fn.__name__ for fn, _ in made]
    check_distinct(names, "verifiers task_rubric")
    taken = sorted(n for n in names if hasattr(vf.Task, n))
    if taken:
        raise ValueError(f"verifiers task_rubric: {', '.join(map(repr, taken))} would hide vf.Task members; label it")
    members = {fn.__name__: vf.reward(fn, weight=weight) for fn, weight in made}
    members["__doc__"] = f"rewardsmith rewards as weighted verifiers task rewards: {', '.join(names)}"
    return type(class_name, (), members)


def prompt_messages(task: Any) -> Any:
    """The task's prompt as rewardsmith's ``prompts`` column, its system prompt first."""
    prompt = plain_messages(getattr(task, "prompt", None), text_role="user")
    system = getattr(task, "system_prompt", None)
    if not system:
        return prompt
    turns = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt or [])
    return [{"role": "system", "content": system}, *turns]


def completion_messages(trace: Any) -> list[Any]:
    """What the policy wrote in the rollout: its sampled assistant messages, or the root agent's reply."""
    root = getattr(trace, "root_reply", None)
    if isinstance(root, str):
        return [{"role": "assistant", "content": root}]
    return plain_messages(list(trace.assistant_messages))


def task_data_fields() -> frozenset[str]:
    try:
        from verifiers.v1 import TaskData
    except ImportError:
        return TASK_DATA_FIELDS
    return frozenset(TaskData.model_fields)


def v1_api() -> Any:
    """``verifiers.v1``, or an ImportError that names the fix."""
    try:
        import verifiers.v1 as vf
    except ImportError as exc:
        raise ImportError(f"the v1 task adapter needs verifiers 0.4 ({exc}): {V1_INSTALL_HINT}") from None
    return vf


__all__ = ["TaskReward", "completion_messages", "prompt_messages", "task_metric", "task_reward", "task_rubric"]
