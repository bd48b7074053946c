"""verifiers adapters: rewardsmith rewards inside a verifiers environment.

- verifiers 0.4 (the v1 task API): :func:`task_reward`, :func:`task_metric` and :func:`task_rubric` give a v1
  ``Task`` its ``@vf.reward``/``@vf.metric`` members (:mod:`.tasks`).
- verifiers 0.1.3 to 0.3 (``vf.Rubric``): :func:`rubric` and :func:`reward_func` (:mod:`.rubric`).

Neither imports verifiers until a verifiers object is asked for.
"""

from .rubric import VerifiersReward, reward_func, rubric, rubric_class, rubric_funcs
from .tasks import TaskReward, task_metric, task_reward, task_rubric
from .terms import VerifiersOptions, gold_column, plain_messages

__all__ = [
    "TaskReward",
    "VerifiersOptions",
    "VerifiersReward",
    "gold_column",
    "plain_messages",
    "reward_func",
    "rubric",
    "rubric_class",
    "rubric_funcs",
    "task_metric",
    "task_reward",
    "task_rubric",
]
