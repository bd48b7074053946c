"""A reward-model client with the operations a chat client gets from the managed client: cache, pacing, accounting.

:class:`~rewardsmith.judges.clients.factory.ManagedChatClient` puts the request cache, the rpm/tpm limiter and the
usage accountant around a chat transport; a reward model (local, OpenRLHF, vLLM) is asked for numbers, not chats,
but a rerun should cost it nothing either, a server's quota holds for it too, and a run reports what it asked. This
wrapper uses the same three pieces (:class:`~rewardsmith.judges.cache.RequestCache`,
:class:`~rewardsmith.judges.limits.RateLimiter`, :class:`~rewardsmith.judges.accounting.Accountant`) around any
:class:`~rewardsmith.judges.reward_model.RewardModelScorer`, and is one itself.

A pair's cache key is the model, the prompt (text or turns), the response and the label sent with it, as given; a
hit is the stored reward. Only the pairs that missed are sent, in one call, paced as one
request. Failures are not cached: a :class:`~rewardsmith.judges.base.JudgeError` is counted and raised.

>>> from rewardsmith.judges.reward_model import RemoteRewardModel
>>> client = ManagedRewardModel(RemoteRewardModel("http://127.0.0.1:9/get_reward"), cache=None)
>>> client.model
'http://127.0.0.1:9/get_reward'
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rewardsmith.judges.accounting import Accountant, UsageReport
from rewardsmith.judges.base import ChatParams, ChatResult, JudgeError, Usage
from rewardsmith.judges.cache import RequestCache, cache_key
from rewardsmith.judges.limits import RateLimiter

#: the sampling parameters a reward-model key is made with (a reward model samples nothing: fixed)
_NO_SAMPLING = ChatParams(max_tokens=0, seed=None)


class ManagedRewardModel:
    """A reward-model scorer wrapped with cache -> pacing -> accounting (itself a ``RewardModelScorer``)."""

    def __init__(
        self,
        scorer: Any,
        *,
        cache: RequestCache | None = None,
        limiter: RateLimiter | None = None,
        accountant: Accountant | None = None,
    ) -> None:
        self.scorer = scorer
        self.cache = cache
        self.limiter = limiter or RateLimiter()
        self.accountant = accountant or Accountant()

    @property
    def model(self) -> str:
        return self.scorer.model

    def __repr__(self) -> str:
        path = None if self.cache is None else str(self.cache.path)
        return f"ManagedRewardModel({self.scorer!r}, cache={path!r})"

    def report(self) -> UsageReport:
        return self.accountant.report()

    def key(self, prompt: Any, response: str, label: Any) -> str:
        """The cache key of one pair: the model, the prompt (text or turns), the response and the label, as given."""
        pair = [
            {"role": "prompt", "content": json.dumps(prompt, sort_keys=True, ensure_ascii=False, default=str)},
            {"role": "response", "content": response},
            {"role": "label", "content": json.dumps(label, sort_keys=True, ensure_ascii=False, default=str)},
        ]
        return cache_key(f"reward-model:{self.model}", pair, _NO_SAMPLING)

    def score(
        self, prompts: Sequence[Any], responses: Sequence[str], labels: Sequence[Any] | None = None
    ) -> list[float]:
        """One reward per pair: cached pairs from the cache, the others from the model in one call."""
        given = list(labels) if labels is not None else [None] * len(responses)
        keys = (
            [self.key(p, r, lab) for p, r, lab in zip(prompts, responses, given, strict=True)]
            if self.cache is not None
            else []
        )
        out: list[float | None] = [None] * len(responses)
        for i, key in enumerate(keys):
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is not None:
                out[i] = float(hit.text)
                self.accountant.record(self.model, Usage(), cached=True)
        todo = [i for i, value in enumerate(out) if value is None]
        if todo:
            if self.limiter.active:
                self.limiter.wait(0)
            try:
                scores = self.scorer.score(
                    [prompts[i] for i in todo],
                    [responses[i] for i in todo],
                    [given[i] for i in todo] if labels is not None else None,
                )
            except JudgeError:
                self.accountant.record_error(self.model)
                raise
            self.accountant.record(self.model, Usage(), cached=False)
            for i, value in zip(todo, scores, strict=True):
                out[i] = float(value)
                if self.cache is not None:
                    self.cache.put(keys[i], ChatResult(text=repr(float(value)), model=self.model))
        return [float(value) for value in out if value is not None]
