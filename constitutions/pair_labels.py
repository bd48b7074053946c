"""Labelling one RLAIF pair: per-principle verdicts become keep (a winner) or drop (a reason)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rewardsmith.constitutions.pair_building import PairsConfig, PairTask
from rewardsmith.judges.base import OrderVerdict, PairwiseVerdict


@dataclass(frozen=True)
class Decision:
    """The outcome of one pair: ``winner`` is ``"a"``/``"b"`` when kept, else ``reason`` says why not."""

    winner: str | None
    reason: str
    prob_a: float | None
    verdicts: tuple[PairwiseVerdict, ...]
    principles: tuple[str, ...]

    @property
    def kept(self) -> bool:
        return self.winner in ("a", "b")


def clamp_verdict(verdict: PairwiseVerdict, low: float, high: float) -> PairwiseVerdict:
    """Clamp each order's probability into ``[low, high]`` and re-average (chain-of-thought labels)."""
    if verdict.prob_a is None:
        return verdict

    def clamp(p: float) -> float:
        return min(max(p, low), high)

    def clamp_order(order: OrderVerdict) -> OrderVerdict:
        return order.model_copy(update={"prob_first": None if order.prob_first is None else clamp(order.prob_first)})

    ab, ba = clamp_order(verdict.ab), clamp_order(verdict.ba)
    if ab.prob_first is not None and ba.prob_first is not None:
        prob_a = (ab.prob_first + (1.0 - ba.prob_first)) / 2.0
    else:
        prob_a = clamp(verdict.prob_a)
    return verdict.model_copy(update={"ab": ab, "ba": ba, "prob_a": prob_a})


def infrastructure_failure(verdict: PairwiseVerdict) -> str | None:
    """Why an order failed at the endpoint (not a verdict: the pair must be retried, not dropped), or ``None``."""
    errors = [order.reason or "judge endpoint error" for order in (verdict.ab, verdict.ba) if order.source == "error"]
    return "; ".join(errors) if errors else None


def is_abstain(verdict: PairwiseVerdict) -> bool:
    return verdict.abstained or verdict.prob_a is None


def decide(
    task: PairTask, verdicts: Sequence[PairwiseVerdict], principles: Sequence[str], config: PairsConfig
) -> Decision:
    """Combine the per-principle verdicts of one pair into keep (winner) or drop (reason)."""
    if config.chain_of_thought:
        low, high = config.cot_clamp
        verdicts = [clamp_verdict(v, low, high) for v in verdicts]
    verdicts = tuple(verdicts)
    principles = tuple(principles)
    usable = [v.prob_a for v in verdicts if v.prob_a is not None and not v.abstained]  # not is_abstain(v)
    if not usable:
        reasons = "; ".join(sorted({v.reason for v in verdicts if v.reason})) or "judge abstained"
        return Decision(None, f"abstain: {reasons}", None, verdicts, principles)
    prob_a = sum(usable) / len(usable)
    if config.drop_flipped and any(v.flipped for v in verdicts if not is_abstain(v)):
        return Decision(None, "flipped", prob_a, verdicts, principles)
    if abs(prob_a - 0.5) <= config.margin:
        return Decision(None, "tie", prob_a, verdicts, principles)
    return Decision("a" if prob_a > 0.5 else "b", "", prob_a, verdicts, principles)


def precheck(task: PairTask) -> str | None:
    """A reason to drop the pair without asking the judge, or ``None``."""
    if not task.response_a.strip() or not task.response_b.strip():
        return "empty"
    if task.response_a.strip() == task.response_b.strip():
        return "identical"
    return None
