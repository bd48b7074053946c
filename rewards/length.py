"""Length rewards: DAPO's soft overlong punishment, open-r1's cosine length scaling, n-gram repetition.

Lengths are counted in tokens when TRL passes ``completion_ids`` (the exact budget the trainer
enforces) and in characters otherwise, so the same reward works in a trainer and on a data file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from rewardsmith.compose import as_term, build_reward
from rewardsmith.registry import register_reward
from rewardsmith.reward import Reward, RewardConfig, ascore_rows
from rewardsmith.types import RewardResult

LengthUnit = Literal["auto", "tokens", "chars"]


def completion_length(text: str, row: Mapping[str, Any], unit: str) -> tuple[int, str] | None:
    """``(length, unit used)``: tokens from ``row["completion_ids"]`` when asked/available, else characters.

    ``None`` when ``unit="tokens"`` and the row carries no token ids.
    """
    ids = row.get("completion_ids")
    token_ids = ids if isinstance(ids, Sequence) and not isinstance(ids, (str, bytes)) else None
    if unit == "chars" or (unit == "auto" and token_ids is None):
        return len(text), "chars"
    if token_ids is None:
        return None
    return len(token_ids), "tokens"


# -- soft_overlong -----------------------------------------------------------------------------------
class SoftOverlongConfig(RewardConfig):
    max_length: int = Field(4096, gt=0, description="hard length budget (tokens or chars)")
    buffer: int = Field(1024, gt=0, description="soft zone before max_length where the penalty ramps 0 -> -1")
    unit: LengthUnit = Field("auto", description="tokens (needs completion_ids), chars, or auto")

    @model_validator(mode="after")
    def _buffer_fits(self) -> SoftOverlongConfig:
        if self.buffer > self.max_length:
            raise ValueError(f"buffer ({self.buffer}) must not exceed max_length ({self.max_length})")
        return self


def soft_overlong_penalty(length: int, max_length: int, buffer: int) -> float:
    """DAPO's piecewise-linear penalty: 0, then a ramp to -1 over the last ``buffer`` units, then -1."""
    start = max_length - buffer
    if length <= start:
        return 0.0
    if length <= max_length:
        return (start - length) / buffer
    return -1.0


@register_reward("soft_overlong")
class SoftOverlong(Reward[SoftOverlongConfig]):
    """DAPO soft overlong punishment: no penalty up to ``max_length - buffer``, then linear down to -1.

    Formula (``L`` = completion length, ``s = max_length - buffer``): ``0`` if ``L <= s``;
    ``(s - L) / buffer`` if ``s < L <= max_length``; ``-1`` beyond. ``L`` counts tokens when the
    trainer passes ``completion_ids`` (``unit="auto"``), characters otherwise.

    >>> SoftOverlong(max_length=10, buffer=4, unit="chars")(["x" * 6, "x" * 8, "x" * 20])
    [0.0, -0.5, -1.0]
    """

    def score_one(self, completion: str, row: Mapping[str, Any]) -> RewardResult:
        measured = completion_length(completion, row, self.config.unit)
        if measured is None:
            return RewardResult.unscorable("unit='tokens' but no completion_ids were passed")
        length, unit = measured
        score = soft_overlong_penalty(length, self.config.max_length, self.config.buffer)
        zone = f"{self.config.max_length - self.config.buffer}-{self.config.max_length}"
        return RewardResult(score=score, reason=f"{length} {unit} (soft zone {zone})")


# -- cosine_length -----------------------------------------------------------------------------------
class CosineLengthConfig(RewardConfig):
    model_config = RewardConfig.model_config | {"arbitrary_types_allowed": True}

    correctness: Any = Field(description='the wrapped correctness reward spec, e.g. {"name": "math_equivalence"}')
    correct_threshold: float = Field(1.0, description="a wrapped score >= this counts as correct")
    min_value_correct: float = Field(0.5, description="reward of a correct answer at max_length")
    max_value_correct: float = Field(1.0, description="reward of a correct answer of length 0")
    min_value_wrong: float = Field(-1.0, description="reward of a wrong answer of length 0")
    max_value_wrong: float = Field(-0.5, description="reward of a wrong answer at max_length")
    max_length: int = Field(1000, gt=0, description="length at which the cosine reaches its end value")
    unit: LengthUnit = Field("auto", description="tokens (needs completion_ids), chars, or auto")

    @field_validator("correctness")
    @classmethod
    def _buildable(cls, spec: Any) -> Any:
        return as_term(spec)  # built once here; fails at construction with the wrapped reward's own message


def cosine_scaled(length: int, max_length: int, start: float, end: float) -> float:
    """``start`` at length 0 easing along a half cosine to ``end`` at ``max_length`` (clamped beyond)."""
    progress = min(length / max_length, 1.0)
    return end + 0.5 * (start - end) * (1.0 + math.cos(math.pi * progress))


@register_reward("cosine_length")
class CosineLength(Reward[CosineLengthConfig]):
    """Length-aware correctness (open-r1 cosine scaling): short right answers best, short wrong ones worst.

    Formula (``p = min(L / max_length, 1)``, ``c = (1 + cos(pi p)) / 2``): correct →
    ``min_value_correct + (max_value_correct - min_value_correct) c``; wrong →
    ``max_value_wrong + (min_value_wrong - max_value_wrong) c``. Correct means the wrapped
    ``correctness`` reward scored ``>= correct_threshold``. An unscorable wrapped verdict stays
    unscorable (open-r1 gives 1.0 when the gold cannot be parsed).

    Examples:
        >>> spec = {"name": "regex_match", "config": {"pattern": "42"}}
        >>> r = CosineLength(correctness=spec, max_length=100, unit="chars")
        >>> [round(x, 2) for x in r(["42", "41", "41" + " " * 98])]
        [1.0, -1.0, -0.5]
    """

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self.correctness = build_reward(self.config.correctness)

    async def combine(self, texts: list[str | None], rows: list[dict[str, Any]], *, inline: bool) -> list[RewardResult]:
        verdicts = await ascore_rows(self.correctness, texts, rows, inline=inline)
        out = []
        for text, row, verdict in zip(texts, rows, verdicts, strict=True):
            if verdict.score is None:
                out.append(RewardResult.unscorable(f"correctness unscorable: {verdict.reason}"))
                continue
            measured = completion_length(text, row, self.config.unit) if text is not None else None
            if measured is None:
                out.append(RewardResult.unscorable("no length to scale by"))
                continue
            length, unit = measured
            correct = verdict.score >= self.config.correct_threshold
            if correct:
                score = cosine_scaled(
                    length, self.config.max_length, self.config.max_value_correct, self.config.min_value_correct
                )
            else:
                score = cosine_scaled(
                    length, self.config.max_length, self.config.min_value_wrong, self.config.max_value_wrong
                )
            verdict_word = "correct" if correct else "wrong"
            out.append(RewardResult(score=score, reason=f"{verdict_word} at {length} {unit}: {verdict.reason}"))
        return out


# -- repetition_penalty ------------------------------------------------------------------------------
class RepetitionPenaltyConfig(RewardConfig):
    ngram_size: int = Field(3, ge=1, description="n of the word n-grams compared")
    max_penalty: float = Field(-1.0, le=0.0, description="score of a completion that is one n-gram repeated")


def repeated_ngram_fraction(text: str, n: int) -> tuple[float, int]:
    """``(1 - unique/total, total)`` over lower-cased whitespace-split word n-grams (``(0, 0)`` if too short)."""
    words = text.lower().split()
    total = len(words) - n + 1
    if total <= 0:
        return 0.0, 0
    unique = len({tuple(words[i : i + n]) for i in range(total)})
    return 1.0 - unique / total, total


@register_reward("repetition_penalty")
class RepetitionPenalty(Reward[RepetitionPenaltyConfig]):
    """N-gram repetition penalty (as in open-r1): ``max_penalty * (1 - unique_ngrams / total_ngrams)``.

    Words are lower-cased and whitespace-split; a completion shorter than ``ngram_size`` words scores 0.
    ``max_penalty`` must be ``<= 0``.

    >>> RepetitionPenalty(ngram_size=2)(["a b c d", "a b a b a b", "hi"])
    [0.0, -0.6, 0.0]
    """

    def score_one(self, completion: str, row: Mapping[str, Any]) -> RewardResult:
        fraction, total = repeated_ngram_fraction(completion, self.config.ngram_size)
        if total == 0:
            return RewardResult(score=0.0, reason=f"fewer than {self.config.ngram_size} words")
        score = self.config.max_penalty * fraction if fraction else 0.0
        return RewardResult(score=score, reason=f"{fraction:.0%} of {total} {self.config.ngram_size}-grams repeated")


__all__ = [
    "CosineLength",
    "RepetitionPenalty",
    "SoftOverlong",
    "completion_length",
    "cosine_scaled",
    "repeated_ngram_fraction",
    "soft_overlong_penalty",
]
