"""One sample scored by every term of a spec: the combined reward, each term's score and reason.

Environment protocols carry one number per sample and a way to leave a sample out (Harbor: no reward file; NeMo
Gym: ``mask_sample``). So a verdict here is strict where the in-process weighted sum is lenient: the reward is
``sum_i w_i r_i`` only when *every* term scored. A term that could not score (missing gold, a judge that did not
answer) makes the whole sample unscorable, naming the term, because a sum over the remaining terms (the format
bonus without the correctness it was meant to accompany) is a plausible number that measures something else.
A non-finite term score counts as unscorable too: neither protocol accepts NaN or infinity as a reward.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.types import RewardResult


@dataclass(frozen=True)
class TermVerdict:
    """One term's score (``None``: unscorable) and reason, with the term's logged name and weight."""

    name: str
    weight: float
    score: float | None
    reason: str

    @classmethod
    def of(cls, name: str, weight: float, result: RewardResult) -> TermVerdict:
        score = result.score
        if score is not None and not math.isfinite(score):
            return cls(name, weight, None, f"the reward returned {score!r}, not a finite number ({result.reason})")
        return cls(name, weight, None if score is None else float(score), result.reason)


@dataclass(frozen=True)
class Verdict:
    """A sample's terms; the reward and reason follow from them."""

    terms: tuple[TermVerdict, ...]

    @property
    def unscorable_terms(self) -> list[TermVerdict]:
        return [t for t in self.terms if t.score is None]

    @property
    def reward(self) -> float | None:
        """``sum_i w_i r_i`` when every term scored, else ``None``."""
        if not self.terms or self.unscorable_terms:
            return None
        return float(sum(t.weight * t.score for t in self.terms if t.score is not None))

    @property
    def components(self) -> dict[str, float | None]:
        """Each term's own score (unweighted), by logged name."""
        return {t.name: t.score for t in self.terms}

    @property
    def reason(self) -> str:
        """Why: the unscorable terms first when there are any, else every term's score and reason."""
        missing = self.unscorable_terms
        if not self.terms:
            return "the spec has no terms"
        if missing:
            return "unscorable: " + "; ".join(f"{t.name}: {t.reason}" for t in missing)
        return "; ".join(f"{t.name}={t.score:g} ({t.reason})" for t in self.terms)

    def as_record(self) -> dict[str, Any]:
        """The verdict as JSON-ready data (what ``rewardsmith grade`` writes beside the reward)."""
        return {
            "reward": self.reward,
            "unscorable": self.reward is None,
            "reason": self.reason,
            "components": self.components,
            "weights": {t.name: t.weight for t in self.terms},
            "reasons": {t.name: t.reason for t in self.terms},
        }


def verdicts(
    names: Sequence[str], weights: Sequence[float], results: Sequence[Sequence[RewardResult]]
) -> list[Verdict]:
    """Per-sample verdicts from per-term results (``results[term][sample]``)."""
    if not (len(names) == len(weights) == len(results)):
        raise ValueError(f"{len(names)} names, {len(weights)} weights and {len(results)} result lists")
    samples = len(results[0]) if results else 0
    return [
        Verdict(tuple(TermVerdict.of(n, w, r[i]) for n, w, r in zip(names, weights, results, strict=True)))
        for i in range(samples)
    ]


#: Column names a row may not use: the reward call takes the completions under this name.
RESERVED_COLUMNS = frozenset({"completions"})


def check_columns(columns: Mapping[str, Any], where: str) -> None:
    """Refuse a gold column whose name the reward call itself uses (one line naming it)."""
    clash = sorted(RESERVED_COLUMNS & set(map(str, columns)))
    if clash:
        raise ValueError(f"{where}: {', '.join(map(repr, clash))} cannot be a column (the completions go there)")


def score_spec(spec: Any, completions: Sequence[Any], columns: Mapping[str, Sequence[Any]]) -> list[Verdict]:
    """Score ``completions`` with every term of a :class:`~rewardsmith.adapters.spec.RewardSpec`, in this process.

    Each term's reward is the instance the spec built (gates included); ``columns`` hold one value per completion.
    """
    check_columns(columns, "columns")
    rewards = [term.build() for term in spec.rewards]
    results = [reward.details(list(completions), **dict(columns)) for reward in rewards]
    return verdicts([r.__name__ for r in rewards], spec.reward_weights(), results)


__all__ = ["RESERVED_COLUMNS", "TermVerdict", "Verdict", "check_columns", "score_spec", "verdicts"]
