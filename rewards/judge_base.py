"""The base of the judge-backed rewards: what every reward that asks a judge does the same way, written once.

``llm_judge``, ``llm_rubric``, ``llm_judge_group`` and ``reward_model`` differ in what they ask; they agree on

- the judge client: built on first use, once (threads arriving together share one client, one embedded server),
  dropped on pickling (a spawned scoring process opens its own connections) and, for a chat client, closed with the
  event loop the bridge keeps for the calling thread;
- which completions reach the judge: one that is not text is unscorable; one longer than ``max_completion_chars``
  is not sent and scores 0.0 (what the completion's own size makes uncheckable is its verdict: a trainer ignores
  ``None``, so a completion that escaped to it by overflowing the judge's context would be taught to). Every
  completion shown is quoted between keyed tags and has its chat control tokens defused by the prompt templates
  (:mod:`rewardsmith.judges.untrusted`), never here;
- what a failure scores: ``None`` with the reason (a timeout, an endpoint failing after retries, a judge bug, a
  missing reference), never 0.0, since an infrastructure failure must not look like a bad completion.

A reward writes ``ascore_batch`` (async judging) or ``score_batch`` (blocking work, the reward model), the judge
strategies' rule (:mod:`rewardsmith.judges.strategy`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from rewardsmith.bridge import run_sync
from rewardsmith.first_use import build_once
from rewardsmith.reward import Reward
from rewardsmith.reward_config import RewardConfig
from rewardsmith.types import RewardResult, completion_text

#: default ``max_completion_chars`` of the judge rewards: about 8k tokens, inside a common judge's context
MAX_COMPLETION_CHARS = 32_000

ConfigT = TypeVar("ConfigT", bound=RewardConfig)
T = TypeVar("T")


def too_long_for_judge(completion: str, limit: int) -> RewardResult | None:
    """The 0.0 of a completion too long to show the judge, or ``None`` when it fits."""
    if len(completion) <= limit:
        return None
    return RewardResult(score=0.0, reason=f"{len(completion)} chars > max_completion_chars={limit}: not judged")


class JudgeReward(Reward[ConfigT]):
    """Base of the rewards that ask a judge: the client, the completions shown, and what a failure scores."""

    #: attributes rebuilt after unpickling instead of copied (a subclass adds what it builds from the client)
    _TRANSIENT: tuple[str, ...] = ("_client", "_strategy")
    _client: Any = None
    _strategy: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in self._TRANSIENT}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in self._TRANSIENT:
            setattr(self, name, None)

    # -- the client ---------------------------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        """Built on first use, once: threads arriving together share one client (one embedded server)."""
        return build_once(self, "_client", self.build_client)

    def build_client(self) -> Any:
        """The judge client of this reward's config (``client``: a judge client config); a subclass may override."""
        return self.config.client.build()  # type: ignore[attr-defined]  # every chat judge reward's config has one

    @property
    def strategy(self) -> Any:
        """The judging strategy over :attr:`client` (:mod:`rewardsmith.judges`), built on first use, once."""
        return build_once(self, "_strategy", self.build_strategy)

    def build_strategy(self) -> Any:
        """The judging strategy this reward asks; a reward that asks none (a reward model) leaves it."""
        raise NotImplementedError(f"{type(self).__name__} asks no judging strategy")

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        """:meth:`ascore_batch` on the thread's kept loop, which reuses the client's connections across batches and
        closes them when it closes. A reward whose work blocks writes ``score_batch`` itself instead."""
        if type(self).ascore_batch is Reward.ascore_batch:
            raise NotImplementedError(f"{type(self).__name__} writes neither ascore_batch nor score_batch")
        return run_sync(self.ascore_batch(completions, rows), close=self.client)

    # -- what is shown, what a failure scores -------------------------------------------------------------------
    def not_shown(self, completion: str | None) -> RewardResult | None:
        """The result of a completion the judge is not shown (not text; longer than ``max_completion_chars``), or
        ``None`` when it may be shown."""
        if completion is None:
            return RewardResult.unscorable("completion is not text")
        return too_long_for_judge(completion, self.config.max_completion_chars)  # type: ignore[attr-defined]

    @staticmethod
    def reference(row: dict[str, Any], column: str, missing: str) -> tuple[str | None, RewardResult | None]:
        """The reference response in ``row[column]`` (a conversational one read like a completion: its assistant
        turns), or the unscorable result ``missing`` names when the cell holds none."""
        reference = completion_text(row.get(column))
        if not reference:
            return None, RewardResult.unscorable(missing)
        return reference, None

    @staticmethod
    async def asked(call: Awaitable[T], timeout: float, what: str = "judge") -> T | RewardResult:
        """``await call`` bounded by ``timeout`` seconds; a timeout or any failure is the unscorable result naming
        ``what`` (a judge bug costs its samples, never the training step)."""
        try:
            return await asyncio.wait_for(call, timeout=timeout)
        except asyncio.TimeoutError:
            return RewardResult.unscorable(f"{what} timed out after {timeout:g}s")
        except Exception as exc:
            return RewardResult.unscorable(f"{what} failed: {type(exc).__name__}: {exc}")
