"""Per-step rewards inside TRL's ``GRPOTrainer``: a reward function that scores each completion turn by turn.

TRL (1.16) trains one number per completion, but a tool-calling rollout is a transcript: TRL hands reward functions
the completion's messages (assistant turns with ``tool_calls``, the ``tool`` results). :class:`StepRewardFunc` scores
them with :func:`rewardsmith.steps.step_details`, returns each completion's return (the sum of its per-turn values,
or their mean, or the last turn's), and logs the per-turn values in TRL's completions table as
``<name>_per_turn`` (a JSON list per completion) with their reasons as ``<name>_per_turn_reason``, so what each turn
earned is visible beside the number the trainer used.

>>> from rewardsmith import get_reward
>>> func = StepRewardFunc(get_reward("tool_call_validity", {"tools_column": "declared_tools"}))
>>> # GRPOTrainer(..., reward_funcs=[func], environment_factory=...)   # the dataset has a declared_tools column
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

from rewardsmith.reward import Reward
from rewardsmith.steps import Credit, step_details
from rewardsmith.types import RewardResult

Aggregate = Literal["sum", "mean", "last"]
#: keyword arguments TRL adds beside the dataset's columns (not columns a reward reads)
_TRL_KEYWORDS = frozenset({"prompts", "completion_ids", "trainer_state", "log_extra", "log_metric", "environments"})


class StepRewardFunc:
    """A TRL reward function: per-turn values of ``reward`` folded into one number per completion, logged per turn."""

    def __init__(
        self,
        reward: Reward,
        *,
        credit: Credit = "final",
        gamma: float = 1.0,
        aggregate: Aggregate = "sum",
        name: str | None = None,
    ) -> None:
        if aggregate not in ("sum", "mean", "last"):
            raise ValueError(f"aggregate={aggregate!r}: use sum, mean or last")
        self.reward, self.credit, self.gamma, self.aggregate = reward, credit, gamma, aggregate
        self.__name__ = name or f"{reward.__name__}_steps"

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        columns = {k: v for k, v in kwargs.items() if k not in _TRL_KEYWORDS}
        details = step_details(self.reward, list(completions), credit=self.credit, gamma=self.gamma, **columns)
        log_extra: Callable[[str, list[Any]], None] | None = kwargs.get("log_extra")
        if log_extra is not None:
            log_extra(f"{self.__name__}_per_turn", [json.dumps([r.score for r in turns]) for turns in details])
            log_extra(f"{self.__name__}_per_turn_reason", [" | ".join(r.reason for r in turns) for turns in details])
        return [fold(turns, self.aggregate) for turns in details]


def fold(turns: list[RewardResult], aggregate: Aggregate) -> float | None:
    """One number from per-turn values: ``None`` when any turn is unscorable (the sample carries no signal), 0.0
    for a completion without assistant turns (it did nothing the reward could pay)."""
    if any(r.score is None for r in turns):
        return None
    scores = [r.score for r in turns if r.score is not None]
    if not scores:
        return 0.0
    if aggregate == "mean":
        return sum(scores) / len(scores)
    if aggregate == "last":
        return scores[-1]
    return sum(scores)
