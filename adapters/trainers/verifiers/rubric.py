"""rewardsmith rewards as the reward functions of a ``verifiers`` ``Rubric`` (verifiers 0.1.3 to 0.3).

verifiers' ``Rubric(funcs=[...], weights=[...])`` (``vf.Rubric`` in verifiers 0.1.3 to 0.3; 0.4 replaced it with the
v1 task API) calls each function once per rollout, passing only the keyword arguments its signature names, or all of
them when it takes ``**kwargs``: ``prompt``, ``completion``, ``answer``, ``info``, ``state``, ``task``, ``parser`` and
the dataset's other columns. It awaits the result when it is awaitable and adds ``weight * float(result)``.
:func:`reward_func` gives such a function (async, picklable) for one rewardsmith reward spec::

    import verifiers as vf
    from rewardsmith.adapters.trainers.verifiers import rubric

    rb = rubric([{"name": "math_equivalence"}, {"name": "think_format", "weight": 0.2}])
    env = vf.SingleTurnEnv(dataset=ds, rubric=rb)

What the reward sees: the assistant text of ``completion`` (plain text or chat messages, verifiers' message objects
included), ``prompt`` as the prompt column, and a row made of the dataset's other plain-valued columns, then the
entries of ``info``, then ``answer`` in the reward's gold column (``solution`` for ``math_equivalence``, ``tests``
for ``code_tests``, the reference column of a judge; ``answer_column`` overrides). An empty ``answer`` (verifiers'
default) leaves that column to the other sources.

A Rubric needs a number, so an unscorable sample (missing gold, sandbox failure, judge abstention) scores
``unscorable_score`` (default 0.0) and is logged with its reason; ``state["rewardsmith"][name]`` keeps every score and
reason of the rollout.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, MutableMapping
from typing import Any

from rewardsmith.compose import build_reward
from rewardsmith.reward import Reward
from rewardsmith.types import RewardResult

from .terms import VerifiersOptions, check_distinct, gold_column, options_of, plain_data, plain_messages, spec_terms

logger = logging.getLogger(__name__)

#: Keyword arguments of a Rubric call that are not dataset columns.
NOT_COLUMNS = frozenset({"prompt", "completion", "completions", "answer", "info", "state", "task", "parser"})
#: The verifiers releases that have ``Rubric`` and await async reward functions.
INSTALL_HINT = "pip install 'verifiers>=0.1.3,<0.4'"


class VerifiersReward:
    """One rewardsmith reward with the call shape of a verifiers reward function (async, one rollout per call)."""

    def __init__(self, spec: Any, options: VerifiersOptions | Mapping[str, Any] | None = None) -> None:
        self.options = options_of(options)
        self.reward: Reward = build_reward(spec)
        self.answer_column = self.options.answer_column or gold_column(self.reward)
        self.__name__ = self.reward.__name__  # the Rubric's metric name

    def __repr__(self) -> str:
        return f"VerifiersReward({self.reward!r}, answer_column={self.answer_column!r})"

    async def __call__(
        self,
        prompt: Any = None,
        completion: Any = None,
        answer: Any = None,
        info: Any = None,
        state: Any = None,
        task: Any = None,
        **columns: Any,
    ) -> float:
        result = await self.adetail(prompt, completion, answer=answer, info=info, task=task, **columns)
        if isinstance(state, MutableMapping):
            try:
                state.setdefault("rewardsmith", {})[self.__name__] = {"score": result.score, "reason": result.reason}
            except Exception:  # a state that refuses the record must not cost the score
                logger.debug("could not record the reason in the rollout state", exc_info=True)
        score = self.options.as_number(result.score)
        if result.score is None:
            logger.warning("%s: unscorable, scored %s: %s", self.__name__, score, result.reason)
        return score

    async def adetail(self, prompt: Any = None, completion: Any = None, **columns: Any) -> RewardResult:
        """The reward's full verdict (score or ``None``, and the reason) for one rollout."""
        row = self.row(**columns)
        row["prompts"] = plain_messages(prompt, text_role="user")
        [result] = await self.reward.adetails([plain_messages(completion)], **{k: [v] for k, v in row.items()})
        return result

    def row(self, answer: Any = None, info: Any = None, task: Any = None, **columns: Any) -> dict[str, Any]:
        """The reward's dataset columns for one rollout: plain-valued columns, a task name (verifiers 0.1/0.2 pass
        ``task`` as a string, which a ``route`` reward can read), then ``info``, then ``answer``."""
        row = {k: v for k, v in columns.items() if k not in NOT_COLUMNS and plain_data(v)}
        if isinstance(task, str):
            row["task"] = task
        if isinstance(info, str):  # some verifiers datasets keep info as JSON text
            try:
                info = json.loads(info)
            except json.JSONDecodeError:
                info = None
        if isinstance(info, Mapping):
            row.update(info)
        if answer is not None and not (isinstance(answer, str) and not answer):
            row[self.answer_column] = answer
        return row


def reward_func(spec: Any, *, answer_column: str | None = None, unscorable_score: float = 0.0) -> VerifiersReward:
    """A verifiers reward function for one rewardsmith spec (a name, ``{name, config}``, a term or a Reward).

    >>> fn = reward_func("math_equivalence")
    >>> await fn(completion=[{"role": "assistant", "content": "\\\\boxed{4}"}], answer="4")  # doctest: +SKIP
    1.0
    """
    return VerifiersReward(spec, {"answer_column": answer_column, "unscorable_score": unscorable_score})


def rubric(specs: Any, *, parser: Any = None, **options: Any) -> Any:
    """A ``verifiers.Rubric`` with one function per term, weighted by the terms' ``weight``.

    ``specs``: a spec, a list of specs, a mapping with ``rewards: [...]`` or a YAML/JSON spec file (the
    :class:`~rewardsmith.compose.RewardTerm` grammar). A term may also carry ``answer_column`` and
    ``unscorable_score``, which override ``options`` (the same two keys) for that term. ``parser`` is handed to
    the Rubric.
    """
    funcs, weights = rubric_funcs(specs, **options)
    kwargs: dict[str, Any] = {"funcs": funcs, "weights": weights}
    if parser is not None:
        kwargs["parser"] = parser
    return rubric_class()(**kwargs)


def rubric_funcs(specs: Any, **options: Any) -> tuple[list[VerifiersReward], list[float]]:
    """``(funcs, weights)`` for ``Rubric(funcs=..., weights=...)``; needs no verifiers install."""
    made = spec_terms(specs, "verifiers rubric", VerifiersReward, **options)
    funcs = [fn for fn, _ in made]
    check_distinct([f.__name__ for f in funcs], "verifiers rubric")
    return funcs, [weight for _, weight in made]


def rubric_class() -> type:
    """``verifiers.Rubric``, or an ImportError that names the fix."""
    try:
        import verifiers
    except ImportError as exc:
        raise ImportError(f"rubric() needs the verifiers package ({exc}): {INSTALL_HINT}") from None
    try:
        return verifiers.Rubric
    except ImportError as exc:  # verifiers 0.3 loads its Rubric on first touch, with its own dependencies
        raise ImportError(f"verifiers {_version(verifiers)} cannot load its Rubric ({exc}): {INSTALL_HINT}") from None
    except AttributeError:
        raise ImportError(
            f"verifiers {_version(verifiers)} has no Rubric (0.4 replaced it with v1 tasks): give the v1 Task "
            "task_reward(...)/task_metric(...) attributes or a task_rubric(...) base from "
            f"rewardsmith.adapters.trainers.verifiers, or {INSTALL_HINT} for rubric()"
        ) from None


def _version(module: Any) -> str:
    return str(getattr(module, "__version__", "?"))


__all__ = ["VerifiersOptions", "VerifiersReward", "gold_column", "plain_messages", "reward_func", "rubric"]
