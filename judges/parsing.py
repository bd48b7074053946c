"""Reading a judge's answer: option choices, rubric scores, rankings, and soft labels from log-probs.

Pure functions over text and :class:`TokenLogprob` lists, so verdict tables test them directly.
A structured answer is validated by a pydantic model; anything that does not validate is ``None``
(an abstain upstream), never a default winner.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

from pydantic import BaseModel, Field, ValidationError, model_validator

from rewardkit.judges.base import TokenLogprob

_TOKEN_JUNK = " \t\n\r()[]{}*\"'`:.,;-_#>"


class ChoiceAnswer(BaseModel):
    """A pairwise answer: one of the option labels."""

    choice: str = Field(min_length=1, max_length=8)


class ScoreAnswer(BaseModel):
    """A rubric answer: an integer score in ``1..scale``."""

    score: int
    scale: int = Field(ge=2)

    @model_validator(mode="after")
    def _in_range(self) -> ScoreAnswer:
        if not 1 <= self.score <= self.scale:
            raise ValueError(f"score {self.score} outside 1..{self.scale}")
        return self


class RankingAnswer(BaseModel):
    """A listwise answer: a permutation of candidate numbers ``1..n``, best first."""

    order: list[int]
    n: int = Field(ge=2)

    @model_validator(mode="after")
    def _is_permutation(self) -> RankingAnswer:
        if sorted(self.order) != list(range(1, self.n + 1)):
            raise ValueError(f"ranking {self.order} is not a permutation of 1..{self.n}")
        return self


def normalise_token(token: str) -> str:
    """A token stripped of spaces, brackets and punctuation: ``" (A"`` -> ``"A"``."""
    return token.strip(_TOKEN_JUNK)


def _json_object(text: str) -> dict | None:
    match = re.search(r"\{.*\}", text, flags=re.DOTALL)
    if not match:
        return None
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def parse_choice(text: str, labels: Sequence[str] = ("A", "B")) -> str | None:
    """The option label a judge chose, or ``None`` when the answer names none or several.

    Accepted: a JSON object ``{"verdict": "A"}`` (or ``choice``/``answer``), a final line
    ``Verdict: A`` / ``Answer: (B)``, or an answer that is just the label (``"A"``, ``"(B)."``,
    ``"Response A"``). An answer naming both labels without a verdict line is ambiguous -> ``None``.
    """
    allowed = {label.upper(): label for label in labels}
    obj = _json_object(text)
    if obj is not None:
        for key in ("verdict", "choice", "answer", "winner", "better"):
            if key in obj:
                try:
                    answer = ChoiceAnswer(choice=normalise_token(str(obj[key])).removeprefix("Response ").strip())
                except ValidationError:
                    return None
                return allowed.get(answer.choice.upper())
    label_group = "|".join(re.escape(label) for label in labels)
    verdicts = re.findall(
        rf"(?:verdict|answer|better response|winner|choice)\s*(?:is)?\s*[:=]?\s*\**\s*"
        rf"\(?\s*(?:response\s+)?({label_group})\b",
        text,
        flags=re.IGNORECASE,
    )
    if verdicts:
        return allowed.get(verdicts[-1].upper())
    stripped = normalise_token(text)
    stripped = re.sub(r"^(?:response|option)\s+", "", stripped, flags=re.IGNORECASE)
    if stripped.upper() in allowed:
        return allowed[stripped.upper()]
    # The answer opens with a bare label followed by separator text ("A: ...", "(B) because ...").
    lead = re.match(rf"^\s*\(?\s*({label_group})\s*[\):.\s]", text + " ")
    if lead:
        return lead.group(1)
    return None


def parse_score(text: str, scale: int) -> int | None:
    """An integer score in ``1..scale``: JSON ``{"score": 4}``, ``Score: 4``, ``4/5`` or a bare ``4``."""
    obj = _json_object(text)
    candidates: list[str] = []
    if obj is not None and "score" in obj:
        candidates.append(str(obj["score"]))
    candidates += re.findall(r"(?:score|rating)\s*(?:is|of)?\s*[:=]?\s*\**\s*(\d+)", text, flags=re.IGNORECASE)
    candidates += re.findall(rf"\b(\d+)\s*/\s*{scale}\b", text)
    bare = re.fullmatch(r"\s*\**\s*(\d+)\s*\**\s*\.?\s*", text)
    if bare:
        candidates.append(bare.group(1))
    for candidate in candidates:
        try:
            return ScoreAnswer(score=int(candidate), scale=scale).score
        except (ValueError, ValidationError):
            continue
    return None


def parse_ranking(text: str, n: int) -> list[int] | None:
    """A best-first permutation of ``1..n``: JSON ``{"ranking": [2, 1, 3]}`` or ``2 > 1 > 3``."""
    obj = _json_object(text)
    numbers: list[int] | None = None
    if obj is not None:
        for key in ("ranking", "order", "rank"):
            value = obj.get(key)
            if isinstance(value, list) and all(isinstance(v, (int, str)) and str(v).strip().isdigit() for v in value):
                numbers = [int(v) for v in value]
                break
    if numbers is None:
        chain = re.search(r"\[?\s*(\d+(?:\s*(?:>|,)\s*\d+)+)\s*\]?", text)
        if not chain:
            return None
        numbers = [int(v) for v in re.findall(r"\d+", chain.group(1))]
    try:
        return RankingAnswer(order=numbers, n=n).order
    except (ValueError, ValidationError):
        return None


def option_distribution(
    logprobs: Sequence[TokenLogprob] | None, options: Sequence[str]
) -> tuple[dict[str, float], int] | None:
    """Normalised probabilities of ``options`` at the first generated token that is one of them.

    Each alternative in the top log-probs that normalises to an option (``"A"``, ``" A"``, ``"(A"``)
    adds its probability mass to that option; the masses are then normalised over the options only.
    An option absent from the top alternatives gets no mass. Returns ``(distribution, position)``
    or ``None`` when no generated token is an option.
    """
    if not logprobs:
        return None
    wanted = {option.upper(): option for option in options}
    for position, entry in enumerate(logprobs):
        if normalise_token(entry.token).upper() not in wanted:
            continue
        mass = dict.fromkeys(options, 0.0)
        alternatives = dict(entry.top)
        alternatives.setdefault(entry.token, entry.logprob)
        for token, logprob in alternatives.items():
            option = wanted.get(normalise_token(token).upper())
            if option is not None and math.isfinite(logprob):
                mass[option] += math.exp(logprob)
        total = sum(mass.values())
        if total <= 0.0:
            return None
        return {option: value / total for option, value in mass.items()}, position
    return None


def expected_score(distribution: dict[str, float]) -> float:
    """The probability-weighted score (G-Eval): ``sum_s s * p(s)`` over integer-labelled options."""
    return sum(int(option) * p for option, p in distribution.items())
