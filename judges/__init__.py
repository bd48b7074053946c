"""LLM judges: clients (OpenAI-compatible, local transformers, embedded llama.cpp) and judging strategies.

Names are exported lazily so ``import rewardsmith.judges`` stays light (no torch, no openai import).

>>> from rewardsmith.judges import PairwiseJudge, make_client
>>> judge = PairwiseJudge(make_client("embedded", cache_dir=".judge-cache"))  # doctest: +SKIP
>>> judge.judge("What is 2+2?", "4", "5").prob_a  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from rewardsmith.judges.base import (
    AsyncTransport,
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
    from rewardsmith.judges.accounting import Accountant, UsageReport
    from rewardsmith.judges.cache import RequestCache
    from rewardsmith.judges.calibration import CalibratedPairwiseJudge
    from rewardsmith.judges.clients.embedded import EmbeddedServer, embedded_client, packaged_model_path
    from rewardsmith.judges.clients.factory import JudgeClientConfig, ManagedChatClient, make_client
    from rewardsmith.judges.clients.openai_compat import OpenAIChatClient
    from rewardsmith.judges.clients.transformers_local import TransformersChatClient
    from rewardsmith.judges.criteria import CriteriaJudge, Criterion, Rubric, load_rubric
    from rewardsmith.judges.ensemble import EnsembleJudge
    from rewardsmith.judges.group import GroupJudge, GroupVerdict
    from rewardsmith.judges.limits import RateLimiter
    from rewardsmith.judges.pairwise import PairwiseJudge
    from rewardsmith.judges.pointwise import LikelihoodJudge
    from rewardsmith.judges.rank import RankJudge, RankVerdict
    from rewardsmith.judges.reward_model import (
        LocalRewardModel,
        RemoteRewardModel,
        RewardModelPairwiseJudge,
        VLLMRewardModel,
        make_reward_model,
    )
    from rewardsmith.judges.scale import ScaleJudge, ScaleVerdict
    from rewardsmith.judges.strategy import JudgeStrategy

_LAZY = {
    "make_client": "rewardsmith.judges.clients.factory",
    "JudgeClientConfig": "rewardsmith.judges.clients.factory",
    "ManagedChatClient": "rewardsmith.judges.clients.factory",
    "PairwiseJudge": "rewardsmith.judges.pairwise",
    "LikelihoodJudge": "rewardsmith.judges.pointwise",
    "CalibratedPairwiseJudge": "rewardsmith.judges.calibration",
    "ScaleJudge": "rewardsmith.judges.scale",
    "ScaleVerdict": "rewardsmith.judges.scale",
    "JudgeStrategy": "rewardsmith.judges.strategy",
    "RankJudge": "rewardsmith.judges.rank",
    "RankVerdict": "rewardsmith.judges.rank",
    "GroupJudge": "rewardsmith.judges.group",
    "GroupVerdict": "rewardsmith.judges.group",
    "CriteriaJudge": "rewardsmith.judges.criteria",
    "Criterion": "rewardsmith.judges.criteria",
    "Rubric": "rewardsmith.judges.criteria",
    "load_rubric": "rewardsmith.judges.criteria",
    "EnsembleJudge": "rewardsmith.judges.ensemble",
    "LocalRewardModel": "rewardsmith.judges.reward_model",
    "RemoteRewardModel": "rewardsmith.judges.reward_model",
    "RewardModelPairwiseJudge": "rewardsmith.judges.reward_model",
    "VLLMRewardModel": "rewardsmith.judges.reward_model",
    "make_reward_model": "rewardsmith.judges.reward_model",
    "RequestCache": "rewardsmith.judges.cache",
    "RateLimiter": "rewardsmith.judges.limits",
    "Accountant": "rewardsmith.judges.accounting",
    "UsageReport": "rewardsmith.judges.accounting",
    "OpenAIChatClient": "rewardsmith.judges.clients.openai_compat",
    "TransformersChatClient": "rewardsmith.judges.clients.transformers_local",
    "EmbeddedServer": "rewardsmith.judges.clients.embedded",
    "embedded_client": "rewardsmith.judges.clients.embedded",
    "packaged_model_path": "rewardsmith.judges.clients.embedded",
}

__all__ = [
    "Accountant",
    "AsyncTransport",
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
    "JudgeStrategy",
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
    "ScaleJudge",
    "ScaleVerdict",
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
        raise AttributeError(f"module 'rewardsmith.judges' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
