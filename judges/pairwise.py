"""Pairwise judging in both presentation orders (Constitutional AI / RLAIF style).

For one comparison the judge is asked twice: A = ``response_a``, B = ``response_b`` and then swapped.
Each order yields ``P(first shown is better)``:

- from the log-probs at the token that states the verdict, normalised over the options (a soft
  label), when the endpoint returns them and the answer's text states one verdict that they agree with;
- else from the parsed verdict (1.0 or 0.0);
- with ``chain_of_thought=True`` the judge reasons first and the parsed verdict is clamped to
  ``cot_clamp`` (0.4/0.6 by default), because CoT labels collapse to 0/1 and are over-confident.

``prob_a = mean(P_ab(first), 1 - P_ba(first))``; ``flipped`` records that the two orders picked
different responses (a position-driven judgment). An order whose text states no single verdict (also
when log-probs are on), whose log-probs contradict its text, or whose endpoint failed, is an explicit
abstain: the pair's ``prob_a`` is ``None`` and it has no winner.

>>> judge = PairwiseJudge(make_client("embedded"))  # doctest: +SKIP
>>> verdict = judge.judge("What is 2+2?", "4", "5", question="Which answer is correct?")  # doctest: +SKIP
>>> verdict.prob_a, verdict.ab.source, verdict.flipped  # doctest: +SKIP
(0.62, 'logprobs', False)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rewardsmith.judges.base import ChatClient, ChatParams, ChatResult, JudgeError, OrderVerdict, PairwiseVerdict
from rewardsmith.judges.parsing import read_choice, verdict_distribution
from rewardsmith.judges.strategy import JudgeStrategy
from rewardsmith.judges.templates import check_template, render_messages

LABELS = ("A", "B")


class PairwiseJudge(JudgeStrategy):
    """Both-orders pairwise judge over any :class:`ChatClient`; implements ``PairwiseJudgeProtocol``."""

    method = "pairwise"  # asks which response is better (the likelihood judge's is "likelihood")

    def __init__(
        self,
        client: ChatClient,
        *,
        template: str | None = None,
        use_logprobs: bool = True,
        chain_of_thought: bool = False,
        cot_clamp: tuple[float, float] = (0.4, 0.6),
        top_logprobs: int = 20,
        max_tokens: int | None = None,
        require_both_orders: bool = True,
    ) -> None:
        low, high = cot_clamp
        if not 0.0 <= low <= 0.5 <= high <= 1.0:
            raise ValueError(f"cot_clamp must satisfy 0 <= low <= 0.5 <= high <= 1, got {cot_clamp}")
        self.client = client
        self.template = template or ("pairwise_cot" if chain_of_thought else "pairwise")
        self.use_logprobs = use_logprobs
        self.chain_of_thought = chain_of_thought
        self.cot_clamp = (float(low), float(high))
        self.require_both_orders = require_both_orders
        self.params = ChatParams(
            temperature=0.0,
            max_tokens=max_tokens or (384 if chain_of_thought else 8),
            top_logprobs=top_logprobs if use_logprobs and not chain_of_thought else 0,
        )
        check_template(self.template, prompt="p", first="a", second="b", question=None)

    @property
    def model(self) -> str:
        return self.client.model

    def __repr__(self) -> str:
        return f"PairwiseJudge(model={self.model!r}, template={self.template!r}, cot={self.chain_of_thought})"

    def messages(self, prompt: str, first: str, second: str, question: str | None) -> list[dict[str, str]]:
        return render_messages(self.template, prompt=prompt, first=first, second=second, question=question)

    async def ajudge(
        self, prompt: str, response_a: str, response_b: str, *, question: str | None = None
    ) -> PairwiseVerdict:
        ab, ba = await asyncio.gather(
            self._aorder(self.messages(prompt, response_a, response_b, question)),
            self._aorder(self.messages(prompt, response_b, response_a, question)),
        )
        return combine_orders(ab, ba, principle=question, model=self.model, require_both=self.require_both_orders)

    async def _aorder(self, messages: list[dict[str, str]]) -> OrderVerdict:
        try:
            result = await self.client.acomplete(messages, self.params)
        except JudgeError as exc:
            return OrderVerdict(source="error", reason=str(exc))
        return self.read(result)

    def read(self, result: ChatResult) -> OrderVerdict:
        return read_order(result, chain_of_thought=self.chain_of_thought, cot_clamp=self.cot_clamp)


def judge_settings(judge: object) -> dict[str, Any]:
    """How the judge reaches verdicts: its method and the options that change them (template file name,
    log-probs, CoT), when the judge exposes them.

    Runs record them so that a resumed run refuses a judge configured differently instead of mixing verdicts.
    The method matters on its own: the embedded judge's default is the likelihood judge, whose model is the
    letter judge's, so the model name alone does not tell the two apart.
    """
    settings: dict[str, Any] = {"method": getattr(judge, "method", "pairwise")}
    template = getattr(judge, "template", None)
    if isinstance(template, str):
        settings["template"] = Path(template).name
    for name in ("use_logprobs", "chain_of_thought", "cot_clamp"):
        value = getattr(judge, name, None)
        if value is not None:
            settings[name] = list(value) if isinstance(value, tuple) else value
    return settings


def same_judge_settings(recorded: Any, current: dict[str, Any]) -> bool:
    """Whether a run recorded with judge settings ``recorded`` may go on with a judge whose settings are ``current``.

    Runs recorded before the method was part of the settings lack it, and are compared without it: the
    letter judge recorded its template and log-prob options and the likelihood judge recorded none, so the
    other settings already tell those methods apart, and an unchanged old run stays resumable.
    """
    if isinstance(recorded, dict) and "method" not in recorded:
        current = {key: value for key, value in current.items() if key != "method"}
    return recorded == current


def read_order(
    result: ChatResult, *, chain_of_thought: bool = False, cot_clamp: tuple[float, float] = (0.4, 0.6)
) -> OrderVerdict:
    """One order's answer -> ``P(first is better)``: log-prob soft label, parsed verdict, or abstain.

    The text decides whether there is a verdict at all, with or without log-probs: an answer that
    states no single verdict ("Neither A nor B is better", "A or B, hard to say") abstains, whatever
    its tokens' probabilities. The soft label is read at the token that states the verdict, not at
    the first option letter the answer mentions. When that token's probabilities favour the other
    option than the text states, the two readings of one answer conflict and the order abstains.
    """
    raw = result.text
    reading = read_choice(raw, LABELS)
    if reading.choice is None:
        if result.finish_reason == "length":
            return OrderVerdict(source="abstain", raw=raw, reason="answer cut off before a verdict (max_tokens)")
        return OrderVerdict(source="abstain", raw=raw, reason=reading.reason)
    label = reading.choice
    choice = "first" if label == "A" else "second"
    note = ""
    if not chain_of_thought and result.logprobs:
        distribution = None if reading.at is None else verdict_distribution(result.logprobs, LABELS, raw, reading.at)
        if distribution is not None:
            p_first = distribution["A"]
            favoured = "first" if p_first > 0.5 else "second" if p_first < 0.5 else choice
            if favoured != choice:
                return OrderVerdict(
                    source="abstain",
                    raw=raw,
                    reason=f"log-probs and text disagree: the text says {label}, "
                    f"the log-probs give P({label}) = {distribution[label]:.2f}",
                )
            return OrderVerdict(prob_first=p_first, choice=choice, source="logprobs", raw=raw)
        note = "no log-probs at the verdict token; parsed verdict used"
    low, high = cot_clamp if chain_of_thought else (0.0, 1.0)
    return OrderVerdict(prob_first=high if label == "A" else low, choice=choice, source="parsed", raw=raw, reason=note)


def combine_orders(
    ab: OrderVerdict,
    ba: OrderVerdict,
    *,
    principle: str | None = None,
    model: str = "",
    require_both: bool = True,
) -> PairwiseVerdict:
    """Average the two orders into ``P(response_a is better)``; abstain unless both (or, if allowed, one) answered."""
    p_a = [p for p in (ab.prob_first, None if ba.prob_first is None else 1.0 - ba.prob_first) if p is not None]
    winner_ab = {"first": "a", "second": "b"}.get(ab.choice or "")
    winner_ba = {"first": "b", "second": "a"}.get(ba.choice or "")
    flipped = winner_ab is not None and winner_ba is not None and winner_ab != winner_ba
    missing = [name for name, order in (("A-first", ab), ("B-first", ba)) if order.prob_first is None]
    common = {"ab": ab, "ba": ba, "flipped": flipped, "principle": principle, "model": model}
    if not p_a or (missing and require_both):
        reasons = "; ".join(
            f"{name}: {order.reason or order.source}"
            for name, order in (("A-first", ab), ("B-first", ba))
            if order.prob_first is None
        )
        return PairwiseVerdict(prob_a=None, abstained=True, reason=f"abstain ({reasons})", **common)
    prob_a = sum(p_a) / len(p_a)
    if missing:
        reason = f"only one order answered ({', '.join(missing)} missing)"
    elif flipped:
        reason = "the orders disagree (position-dependent verdict)"
    else:
        reason = "both orders agree" if winner_ab is not None and winner_ab == winner_ba else "no clear preference"
    return PairwiseVerdict(prob_a=min(1.0, max(0.0, prob_a)), abstained=False, reason=reason, **common)
