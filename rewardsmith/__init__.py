"""rewardsmith: verifiable rewards and LLM judges for RL post-training of language models."""

from rewardsmith.compose import Gate, Route, WeightedSum
from rewardsmith.registry import get_reward, list_rewards, register_reward, reward_class
from rewardsmith.reward import AsyncReward, ConfigError, Reward, RewardConfig
from rewardsmith.types import RewardResult, completion_text

__version__ = "0.1.0"

__all__ = [
    "AsyncReward",
    "ConfigError",
    "Gate",
    "Reward",
    "RewardConfig",
    "RewardResult",
    "Route",
    "WeightedSum",
    "__version__",
    "completion_text",
    "get_reward",
    "list_rewards",
    "register_reward",
    "reward_class",
]
