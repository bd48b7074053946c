"""Ranking N candidates: listwise (one prompt, a parsed permutation) or by pairwise round-robin.

``method="pairwise"`` judges every pair in both orders with :class:`PairwiseJudge` and ranks by each
candidate's mean probability of winning (soft Copeland): N(N-1) calls, robust to position bias.
``method="listwise"`` asks once for a best-first order: one call, but the judge sees every
candidate in one fixed order. An unparseable ranking abstains (``order is None``).

>>> ranker = RankJudge(make_client("embedded"), method="pairwise")  # doctest: +SKIP
>>> ranker.judge("What is 2+2?", ["5", "4", "four"]).order  # doctest: +SKIP
[1, 2, 0]
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Literal

from pydantic import BaseModel, Field

from rewardsmith.judges.base import ChatClient, ChatParams, JudgeError, PairwiseVerdict
from rewardsmith.judges.pairwise import PairwiseJudge
from rewardsmith.judges.parsing import parse_ranking
from rewardsmith.judges.strategy import JudgeStrategy
from rewardsmith.judges.templates import check_template, render_messages


class RankVerdict(BaseModel):
    order: list[int] | None = Field(None, description="candidate indices (0-based), best first")
    scores: list[float | None] | None = Field(None, description="pairwise: mean P(win) per candidate")
    pairs: list[PairwiseVerdict] = Field(default_factory=list)
    raw: str = ""
    reason: str = ""
    model: str = ""

    @property
    def abstained(self) -> bool:
        return self.order is None


class RankJudge(JudgeStrategy):
    def __init__(
        self,
        client: ChatClient,
        *,
        method: Literal["pairwise", "listwise"] = "pairwise",
        template: str = "rank",
        pairwise: PairwiseJudge | None = None,
        max_tokens: int = 48,
    ) -> None:
        if method not in ("pairwise", "listwise"):
            raise ValueError(f"method must be 'pairwise' or 'listwise', got {method!r}")
        self.client = client
        self.method = method
        self.template = template
        self.pairwise = pairwise or PairwiseJudge(client)
        self.params = ChatParams(temperature=0.0, max_tokens=max_tokens)
        if method == "listwise":
            check_template(template, prompt="p", candidates=["a", "b"], question=None)

    @property
    def model(self) -> str:
        return self.client.model

    async def ajudge(self, prompt: str, candidates: list[str], *, question: str | None = None) -> RankVerdict:
        if len(candidates) < 2:
            return RankVerdict(order=list(range(len(candidates))), reason="fewer than two candidates", model=self.model)
        if self.method == "listwise":
            return await self._listwise(prompt, candidates, question)
        return await self._round_robin(prompt, candidates, question)

    async def _listwise(self, prompt: str, candidates: list[str], question: str | None) -> RankVerdict:
        messages = render_messages(self.template, prompt=prompt, candidates=candidates, question=question)
        try:
            result = await self.client.acomplete(messages, self.params)
        except JudgeError as exc:
            return RankVerdict(reason=str(exc), model=self.model)
        ranking = parse_ranking(result.text, len(candidates))
        if ranking is None:
            return RankVerdict(
                raw=result.text, reason=f"no valid ranking in answer: {result.text[:120]!r}", model=self.model
            )
        return RankVerdict(order=[i - 1 for i in ranking], raw=result.text, reason="listwise", model=self.model)

    async def _round_robin(self, prompt: str, candidates: list[str], question: str | None) -> RankVerdict:
        pairs = list(itertools.combinations(range(len(candidates)), 2))
        verdicts = await asyncio.gather(
            *(self.pairwise.ajudge(prompt, candidates[i], candidates[j], question=question) for i, j in pairs)
        )
        return rank_from_pairs(len(candidates), pairs, list(verdicts), model=self.model)


def rank_from_pairs(
    n: int, pairs: list[tuple[int, int]], verdicts: list[PairwiseVerdict], *, model: str = ""
) -> RankVerdict:
    """Soft Copeland: each candidate's mean P(win) over its answered pairs; abstain if any candidate has none."""
    wins: list[list[float]] = [[] for _ in range(n)]
    for (i, j), verdict in zip(pairs, verdicts, strict=True):
        if verdict.prob_a is not None:
            wins[i].append(verdict.prob_a)
            wins[j].append(1.0 - verdict.prob_a)
    scores = [sum(w) / len(w) if w else None for w in wins]
    unjudged = [i for i, s in enumerate(scores) if s is None]
    if unjudged:
        return RankVerdict(
            scores=scores, pairs=verdicts, reason=f"candidates {unjudged} have no answered pair", model=model
        )
    order = sorted(range(n), key=lambda i: (-(scores[i] or 0.0), i))  # every score is set (no unjudged)
    abstained = sum(v.abstained for v in verdicts)
    return RankVerdict(
        order=order,
        scores=scores,
        pairs=verdicts,
        reason=f"{len(pairs) - abstained}/{len(pairs)} pairs answered",
        model=model,
    )
