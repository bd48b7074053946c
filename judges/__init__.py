"""LLM judges: clients (OpenAI-compatible, local transformers, embedded llama.cpp) and judging strategies.

Names are exported lazily so ``import rewardkit.judges`` stays light (no torch, no openai import).

>>> from rewardkit.judges import PairwiseJudge, make_client
>>> judge = PairwiseJudge(make_client("embedded", cache_dir=".judge-cache"))  # doctest: +SKIP
>>> judge.judge("What is 2+2?", "4", "5").prob_a  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import Any

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

_LAZY = {
    "make_client": "rewardkit.judges.clients.factory",
    "JudgeClientConfig": "rewardkit.judges.clients.factory",
    "ManagedChatClient": "rewardkit.judges.clients.factory",
    "PairwiseJudge": "rewardkit.judges.pairwise",
    "RubricJudge": "rewardkit.judges.rubric",
    "RubricVerdict": "rewardkit.judges.rubric",
    "RankJudge": "rewardkit.judges.rank",
    "RankVerdict": "rewardkit.judges.rank",
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
    "ChatClient",
    "ChatParams",
    "ChatResult",
    "JudgeError",
    "OrderVerdict",
    "PairwiseJudgeProtocol",
    "PairwiseVerdict",
    "TokenLogprob",
    "Usage",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'rewardkit.judges' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
