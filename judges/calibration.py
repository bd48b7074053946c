"""Contextual calibration of a pairwise judge (Zhao et al. 2021, "Calibrate Before Use").

A small judge has a prior over the option letters that does not depend on the responses: SmolLM2-135M
says "A" with 0.84-0.97 whatever is shown. Contextual calibration measures that prior on a content-free
input (the same prompt and question with both responses replaced by ``"N/A"``) and divides it out:
``q(A) ∝ p(A) / prior(A)``, ``q(B) ∝ p(B) / prior(B)``, i.e. the calibrated log-odds are the raw log-odds
minus the prior's. Each presentation order is calibrated, then the two are averaged as usual.

What it changes, measured on the mixed audit set and the demo pairs (bench/judge_accuracy.py): the
per-order decisions agree more often (SmolLM2 on the mixed audit set: 0% -> 25% of pairs swap-consistent;
on the demo pairs 0% -> 0%); the both-order accuracy cannot move. The content-free prior is the same for
both orders, so it shifts both orders' log-odds alike, and the both-order decision depends only on which
order's log-odds is larger. Use it to read a judge's per-order verdicts, not to make a weak judge accurate.

>>> round(calibrate(0.90, prior=0.93), 3)  # "A" at 0.90 is below this judge's content-free 0.93: a slight "B"
0.404
"""

from __future__ import annotations

import asyncio
import math
from collections import OrderedDict

from rewardsmith.bridge import run_sync
from rewardsmith.judges.base import JudgeError, OrderVerdict, PairwiseVerdict
from rewardsmith.judges.strategy import JudgeStrategy

CONTENT_FREE = "N/A"


def calibrate(p_first: float, prior: float) -> float:
    """``P(first)`` with the content-free ``prior`` of "first" divided out (two options, renormalised)."""
    if not 0.0 < prior < 1.0:
        raise ValueError(f"the content-free prior must be strictly between 0 and 1, got {prior}")
    if p_first <= 0.0 or p_first >= 1.0:
        return float(p_first)  # a certain answer stays certain
    first, second = p_first / prior, (1.0 - p_first) / (1.0 - prior)
    return first / (first + second)


def log_odds(p: float) -> float:
    return math.log(p / (1.0 - p))


def calibrate_order(order: OrderVerdict, prior: float | None) -> OrderVerdict:
    """One order's verdict with its probability calibrated (unchanged when there is no probability or prior)."""
    if order.prob_first is None or prior is None or order.source != "logprobs":
        return order
    p = calibrate(order.prob_first, prior)
    choice = "first" if p > 0.5 else "second" if p < 0.5 else None
    return order.model_copy(update={"prob_first": p, "choice": choice})


class CalibratedPairwiseJudge(JudgeStrategy):
    """A :class:`~rewardsmith.judges.pairwise.PairwiseJudge` whose option prior is measured and divided out.

    The prior is measured once per (prompt, question) with both responses set to ``content_free`` (one extra
    request per prompt, cached for ``cache_size`` prompts); ``per_prompt=False`` measures it once per question
    with the prompt content-free too. An order read from parsed text (no log-probs) is left as it is.
    """

    def __init__(
        self, judge, *, content_free: str = CONTENT_FREE, per_prompt: bool = True, cache_size: int = 4096
    ) -> None:
        self.inner = judge
        self.client = judge.client
        self.content_free = content_free
        self.per_prompt = per_prompt
        self.cache_size = cache_size
        self._priors: OrderedDict[tuple[str, str | None], float | None] = OrderedDict()
        self.template = getattr(judge, "template", None)
        self.use_logprobs = getattr(judge, "use_logprobs", None)
        self.chain_of_thought = getattr(judge, "chain_of_thought", None)

    @property
    def model(self) -> str:
        return self.inner.model

    def __repr__(self) -> str:
        return f"CalibratedPairwiseJudge({self.inner!r}, per_prompt={self.per_prompt})"

    def _key(self, prompt: str, question: str | None) -> tuple[str, str | None]:
        return (prompt if self.per_prompt else self.content_free, question)

    def _remember(self, key: tuple[str, str | None], prior: float | None) -> float | None:
        self._priors[key] = prior
        while len(self._priors) > self.cache_size:
            self._priors.popitem(last=False)
        return prior

    def _prior_messages(self, key: tuple[str, str | None]) -> list[dict[str, str]]:
        prompt, question = key
        return self.inner.messages(prompt, self.content_free, self.content_free, question)

    def _read_prior(self, order: OrderVerdict) -> float | None:
        p = order.prob_first if order.source == "logprobs" else None
        return p if p is not None and 0.0 < p < 1.0 else None

    def prior(self, prompt: str, question: str | None = None) -> float | None:
        """P("first") on the content-free input, or ``None`` when it cannot be read (no calibration then)."""
        return run_sync(self.aprior(prompt, question), close=self.client)

    async def aprior(self, prompt: str, question: str | None = None) -> float | None:
        key = self._key(prompt, question)
        if key in self._priors:
            return self._priors[key]
        try:
            result = await self.client.acomplete(self._prior_messages(key), self.inner.params)
        except JudgeError:
            return None  # not cached: the next pair asks again
        return self._remember(key, self._read_prior(self.inner.read(result)))

    def calibrated(self, verdict: PairwiseVerdict, prior: float | None) -> PairwiseVerdict:
        from rewardsmith.judges.pairwise import combine_orders

        if prior is None:
            return verdict
        ab, ba = calibrate_order(verdict.ab, prior), calibrate_order(verdict.ba, prior)
        require_both = getattr(self.inner, "require_both_orders", True)
        return combine_orders(ab, ba, principle=verdict.principle, model=verdict.model, require_both=require_both)

    async def ajudge(
        self, prompt: str, response_a: str, response_b: str, *, question: str | None = None
    ) -> PairwiseVerdict:
        verdict, prior = await asyncio.gather(
            self.inner.ajudge(prompt, response_a, response_b, question=question), self.aprior(prompt, question)
        )
        return self.calibrated(verdict, prior)
