"""The audit's verdict table: one row per item, both presentation orders' decisions as numbers.

Every audit metric (:mod:`rewardsmith.audit.metrics`, :mod:`rewardsmith.audit.biases`) is a pure function of this table,
so the decoding of a verdict into "picked a / picked b / undecided" happens once, here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rewardsmith.audit.stats import Estimate
from rewardsmith.heldout.sets import AuditItem
from rewardsmith.judges.base import OrderVerdict, PairwiseVerdict

BASELINE = "none"
NAN = float("nan")


def order_pick_first(order: OrderVerdict) -> float:
    """1.0 if this order chose the response shown first, 0.0 if the second, NaN if undecided."""
    if order.source in ("abstain", "error"):
        return NAN
    if order.choice is not None:
        return 1.0 if order.choice == "first" else 0.0
    if order.prob_first is None or order.prob_first == 0.5:
        return NAN
    return 1.0 if order.prob_first > 0.5 else 0.0


@dataclass(frozen=True)
class VerdictTable:
    """Per-item arrays aligned with ``items`` (NaN where undecided)."""

    items: list[AuditItem]
    gold_a: np.ndarray  # +1 gold a, -1 gold b, 0 tie
    prob_a: np.ndarray
    pick_a_ab: np.ndarray  # order ab (a shown first): 1 if it picked a
    pick_a_ba: np.ndarray  # order ba (b shown first): 1 if it picked a
    len_a: np.ndarray
    len_b: np.ndarray

    @classmethod
    def build(cls, items: Sequence[AuditItem], verdicts: Mapping[str, PairwiseVerdict]) -> VerdictTable:
        kept = [it for it in items if it.id in verdicts]
        v = [verdicts[it.id] for it in kept]
        return cls(
            items=kept,
            gold_a=np.array([{"a": 1.0, "b": -1.0}.get(it.gold, 0.0) for it in kept]),
            prob_a=np.array([NAN if x.abstained or x.prob_a is None else x.prob_a for x in v]),
            pick_a_ab=np.array([order_pick_first(x.ab) for x in v]),
            pick_a_ba=np.array([1.0 - order_pick_first(x.ba) for x in v]),
            len_a=np.array([len(it.response_a) for it in kept], dtype=float),
            len_b=np.array([len(it.response_b) for it in kept], dtype=float),
        )

    def __len__(self) -> int:
        return len(self.items)

    def subset(self, rows: np.ndarray) -> VerdictTable:
        """The table of the items at ``rows`` (e.g. one category)."""
        return VerdictTable(
            items=[self.items[i] for i in rows],
            gold_a=self.gold_a[rows],
            prob_a=self.prob_a[rows],
            pick_a_ab=self.pick_a_ab[rows],
            pick_a_ba=self.pick_a_ba[rows],
            len_a=self.len_a[rows],
            len_b=self.len_b[rows],
        )

    @property
    def has_gold(self) -> np.ndarray:
        return self.gold_a != 0

    def picks_gold(self) -> tuple[np.ndarray, np.ndarray]:
        """Per order: 1 if the decision picked the gold (NaN for undecided or tie-gold items)."""
        g = np.where(self.gold_a == 0, NAN, self.gold_a)
        return np.where(g > 0, self.pick_a_ab, 1 - self.pick_a_ab), np.where(g > 0, self.pick_a_ba, 1 - self.pick_a_ba)

    def winner_labels(self) -> list[str]:
        return ["abstain" if math.isnan(p) else ("a" if p > 0.5 else "b" if p < 0.5 else "tie") for p in self.prob_a]


def ratio(num: np.ndarray, den: np.ndarray) -> Any:
    def stat(idx: np.ndarray) -> float:
        d = den[idx].sum()
        return float(num[idx].sum() / d) if d > 0 else NAN

    return stat


def nan0(x: np.ndarray) -> np.ndarray:
    return np.nan_to_num(x, nan=0.0)


def dump(e: Estimate) -> dict[str, Any]:
    return e.model_dump()


def with_p(est: Estimate, p_value: float) -> Estimate:
    return est if est.value is None else est.model_copy(update={"p_value": p_value})


def rate_dump(found: Any) -> Estimate:
    return Estimate(value=None) if found is None else found.estimate()
