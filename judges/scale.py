"""Pointwise scale judging: a score in ``1..scale``, probability-weighted (G-Eval) when log-probs exist.

The judge is shown one response and a ``guideline`` (what a good response does) and answers a number on a
``1..scale`` scale. (A *rubric* is another idea: a list of weighted criteria, each judged on its own, see
:mod:`~rewardsmith.judges.criteria`.)

The answer's text decides whether there is a score (see :func:`~rewardsmith.judges.parsing.read_score_answer`).
With log-probs, the score is the expectation over the score digits at the token that states the score,
``sum_s s * p(s)`` with ``p`` normalised over ``1..scale`` — finer-grained and less tie-prone than
the argmax. Without them, the parsed score (decimals kept: ``Rating: 4.5``).
``normalized = (score - 1) / (scale - 1)`` in [0, 1]. An unparseable, hedged, conflicting or out-of-range
answer, one whose score token favours another score than its text states, or a failed endpoint, is an
abstain (``score is None``), never a low grade.

>>> judge = ScaleJudge(make_client("embedded"), guideline="Is the answer correct?", scale=5)  # doctest: +SKIP
>>> judge.judge("What is 2+2?", "4").normalized  # doctest: +SKIP
0.71
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rewardsmith.judges.base import ChatClient, ChatParams, ChatResult, JudgeError
from rewardsmith.judges.parsing import expected_score, read_score_answer, verdict_distribution
from rewardsmith.judges.strategy import JudgeStrategy
from rewardsmith.judges.templates import check_template, render_messages

#: Above 9 a score spans several tokens ("10"), so the single-token distribution no longer covers it.
MAX_WEIGHTED_SCALE = 9


class ScaleVerdict(BaseModel):
    score: float | None = Field(None, description="1..scale; expected value when probability-weighted")
    normalized: float | None = Field(None, ge=0.0, le=1.0)
    distribution: dict[int, float] | None = None
    source: Literal["logprobs", "parsed", "abstain", "error"] = "abstain"
    raw: str = ""
    reason: str = ""
    model: str = ""

    @property
    def abstained(self) -> bool:
        return self.score is None


def scale_variables(
    prompt: str, response: str, *, guideline: str | None, scale: int, reference: str | None
) -> dict[str, object]:
    """What a scale template is rendered with; the guideline also as ``rubric``, its name in templates written
    before the scale judge had its own (a user's template file keeps rendering)."""
    return {
        "prompt": prompt, "response": response, "scale": scale, "guideline": guideline, "rubric": guideline,
        "reference": reference,
    }  # fmt: skip


def check_scale_template(template: str, *, guideline: str | None, scale: int) -> None:
    """Render a scale template once with sample values, so a broken one fails at construction."""
    check_template(template, **scale_variables("p", "r", guideline=guideline, scale=scale, reference=None))


class ScaleJudge(JudgeStrategy):
    """Pointwise judge: one call per response, a score on ``1..scale`` guided by ``guideline``.

    The template receives the guideline as ``guideline`` (and as ``rubric``, see :func:`scale_variables`).
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        guideline: str | None = None,
        scale: int = 5,
        template: str = "scale",
        use_logprobs: bool = True,
        top_logprobs: int = 20,
        max_tokens: int = 8,
    ) -> None:
        if not 2 <= scale <= 100:
            raise ValueError(f"scale must be in 2..100, got {scale}")
        self.client = client
        self.guideline = guideline
        self.scale = scale
        self.template = template
        weighted = use_logprobs and scale <= MAX_WEIGHTED_SCALE
        self.params = ChatParams(temperature=0.0, max_tokens=max_tokens, top_logprobs=top_logprobs if weighted else 0)
        check_scale_template(template, guideline=guideline, scale=scale)

    @property
    def model(self) -> str:
        return self.client.model

    def messages(self, prompt: str, response: str, reference: str | None = None) -> list[dict[str, str]]:
        variables = scale_variables(prompt, response, guideline=self.guideline, scale=self.scale, reference=reference)
        return render_messages(self.template, **variables)

    async def ajudge(self, prompt: str, response: str, *, reference: str | None = None) -> ScaleVerdict:
        try:
            result = await self.client.acomplete(self.messages(prompt, response, reference), self.params)
        except JudgeError as exc:
            return ScaleVerdict(source="error", reason=str(exc), model=self.model)
        return read_score(result, self.scale).model_copy(update={"model": self.model})


def read_score(result: ChatResult, scale: int) -> ScaleVerdict:
    """A judge answer -> scale verdict: weighted at the score token when log-probs exist, else parsed, else abstain.

    The text decides whether there is a score, with or without log-probs: a hedge ("between 3 and 4"),
    a range, conflicting or out-of-range scores abstain whatever the tokens' probabilities. The expectation
    is taken at the token that states the score ("I'd say 2 at first, but Score: 4" reads the 4), and
    when that token's most likely score is not the one the text states, the two readings of one answer
    conflict and the verdict abstains. A decimal score ("Rating: 4.5") is not one token: it is kept as parsed.
    """
    raw = result.text
    reading = read_score_answer(raw, scale)
    stated = reading.score
    if stated is None:
        if result.finish_reason == "length":
            return ScaleVerdict(source="abstain", raw=raw, reason="answer cut off before a score (max_tokens)")
        return ScaleVerdict(source="abstain", raw=raw, reason=reading.reason)
    note = ""
    if result.logprobs and scale <= MAX_WEIGHTED_SCALE:
        distribution = None
        if reading.at is not None and stated == int(stated):
            digits = [str(s) for s in range(1, scale + 1)]
            distribution = verdict_distribution(result.logprobs, digits, raw, reading.at)
        if distribution is not None:
            said = str(int(stated))
            favoured = max(distribution, key=distribution.__getitem__)
            by_score = {int(k): v for k, v in distribution.items()}
            if distribution[said] < distribution[favoured]:
                return ScaleVerdict(
                    source="abstain",
                    raw=raw,
                    distribution=by_score,
                    reason=f"log-probs and text disagree: the text says {said}, the log-probs favour {favoured} "
                    f"(P({said}) = {distribution[said]:.2f}, P({favoured}) = {distribution[favoured]:.2f})",
                )
            score = expected_score(distribution)
            return ScaleVerdict(
                score=score, normalized=(score - 1) / (scale - 1), distribution=by_score, source="logprobs", raw=raw
            )
        note = "no log-probs at a one-digit score token; parsed score used"
    return ScaleVerdict(score=stated, normalized=(stated - 1) / (scale - 1), source="parsed", raw=raw, reason=note)
