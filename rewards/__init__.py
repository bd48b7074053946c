"""Built-in reward families; importing this package registers them.

Each family imports its optional dependencies inside the functions that need them, so a light install still
imports every family; an import error here is a bug and fails loudly.
"""

from rewardsmith.rewards import (  # noqa: F401  (each registers on import)
    code,
    code_turns,
    format,
    instructions,
    judge,
    judge_criteria,
    judge_group,
    judge_reward_model,
    length,
    math,
    reasoning_gym,
    turns,
)
