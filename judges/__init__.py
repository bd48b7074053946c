"""LLM judges: clients (OpenAI-compatible, local transformers, embedded llama.cpp) and judging strategies.

Names are exported lazily so ``import rewardkit.judges`` stays light (no torch, no openai import).

>>> from rewardkit.judges import PairwiseJudge, make_client
>>> judge = PairwiseJudge(make_client("embedded", cache_dir=".judge-cache"))  # doctest: +SKIP
>>> judge.judge("What is 2+2?", "4", "5").prob_a  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from rewardkit.judges.base import (
    ChatClient,
    ChatParams,
    ChatResult,
    JudgeError,
    OrderVerdict,
    PairwiseJudgeProtocol,
    PairwiseVerdict,
    TokenLogprob,
    Usage,
)

if TYPE_CHECKING:  # what IDEs and type checkers resolve; at run time the names load lazily
    from rewardkit.judges.accounting import Accountant, UsageReport
    from rewardkit.judges.cache import RequestCache
    from rewardkit.judges.calibration import CalibratedPairwiseJudge
    from rewardkit.judges.clients.embedded import EmbeddedServer, embedded_client, packaged_model_path
    from rewardkit.judges.clients.factory import JudgeClientConfig, ManagedChatClient, make_client
    from rewardkit.judges.clients.openai_compat import OpenAIChatClient
    from rewardkit.judges.clients.transformers_local import TransformersChatClient
    from rewardkit.judges.criteria import CriteriaJudge, Criterion, Rubric, load_rubric
    from rewardkit.judges.ensemble import EnsembleJudge
    from rewardkit.judges.group import GroupJudge, GroupVerdict
    from rewardkit.judges.limits import RateLimiter
    from rewardkit.judges.pairwise import PairwiseJudge
    from rewardkit.judges.pointwise import LikelihoodJudge
    from rewardkit.judges.rank import RankJudge, RankVerdict
    from rewardkit.judges.reward_model import (
        LocalRewardModel,
        RemoteRewardModel,
        RewardModelPairwiseJudge,
        VLLMRewardModel,
        make_reward_model,
    )
    from rewardkit.judges.rubric import RubricJudge, RubricVerdict

_LAZY = {
    "make_client": "rewardkit.judges.clients.factory",
    "JudgeClientConfig": "rewardkit.judges.clients.factory",
    "ManagedChatClient": "rewardkit.judges.clients.factory",
    "PairwiseJudge": "rewardkit.judges.pairwise",
    "LikelihoodJudge": "rewardkit.judges.pointwise",
    "CalibratedPairwiseJudge": "rewardkit.judges.calibration",
    "RubricJudge": "rewardkit.judges.rubric",
    "RubricVerdict": "rewardkit.judges.rubric",
    "RankJudge": "rewardkit.judges.rank",
    "RankVerdict": "rewardkit.judges.rank",
    "GroupJudge": "rewardkit.judges.group",
    "GroupVerdict": "rewardkit.judges.group",
    "CriteriaJudge": "rewardkit.judges.criteria",
    "Criterion": "rewardkit.judges.criteria",
    "Rubric": "rewardkit.judges.criteria",
    "load_rubric": "rewardkit.judges.criteria",
    "EnsembleJudge": "rewardkit.judges.ensemble",
    "LocalRewardModel": "rewardkit.judges.reward_model",
    "RemoteRewardModel": "rewardkit.judges.reward_model",
    "RewardModelPairwiseJudge": "rewardkit.judges.reward_model",
    "VLLMRewardModel": "rewardkit.judges.reward_model",
    "make_reward_model": "rewardkit.judges.reward_model",
    "RequestCache": "rewardkit.judges.cache",
    "RateLimiter": "rewardkit.judges.limits",
    "Accountant": "rewardkit.judges.accounting",
    "UsageReport": "rewardkit.judges.accounting",
    "OpenAIChatClient": "rewardkit.judges.clients.openai_compat",
    "TransformersChatClient": "rewardkit.judges.clients.transformers_local",
    "EmbeddedServer": "rewardkit.judges.clients.embedded",
    "embedded_client": "rewardkit.judges.clients.embedded",
    "packaged_model_path": "rewardkit.judges.clients.embedded",
}

__all__ = [
    "Accountant",
    "CalibratedPairwiseJudge",
    "ChatClient",
    "ChatParams",
    "ChatResult",
    "CriteriaJudge",
    "Criterion",
    "EmbeddedServer",
    "EnsembleJudge",
    "GroupJudge",
    "GroupVerdict",
    "JudgeClientConfig",
    "JudgeError",
    "LikelihoodJudge",
    "LocalRewardModel",
    "ManagedChatClient",
    "OpenAIChatClient",
    "OrderVerdict",
    "PairwiseJudge",
    "PairwiseJudgeProtocol",
    "PairwiseVerdict",
    "RankJudge",
    "RankVerdict",
    "RateLimiter",
    "RemoteRewardModel",
    "RequestCache",
    "RewardModelPairwiseJudge",
    "Rubric",
    "RubricJudge",
    "RubricVerdict",
    "TokenLogprob",
    "TransformersChatClient",
    "Usage",
    "UsageReport",
    "VLLMRewardModel",
    "embedded_client",
    "load_rubric",
    "make_client",
    "make_reward_model",
    "packaged_model_path",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'rewardkit.judges' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
