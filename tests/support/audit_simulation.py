"""Simulated audits whose true biases are known exactly: the instrument for checking interval coverage.

Each item has a gold slot (a or b, balanced at random) and a gold that is longer or shorter (balanced
at random). In each presentation order the simulated judge, independently: takes the response carrying a
cue with probability ``cue`` (perturbed tasks only: the cue is on the wrong response); otherwise picks
the slot shown first with probability ``first``, the longer response with ``longer``, a coin flip with
``noise``, and the gold for the rest. So the true position bias is ``first``, the true length bias
``longer`` and the true cue susceptibility ``cue`` (see :meth:`Behaviour.truth`).

:func:`simulate_table` builds the audit's :class:`~rewardsmith.audit.metrics.VerdictTable` directly with numpy
(thousands of audits in seconds); :func:`simulate_verdicts` builds real items and ``PairwiseVerdict``
objects, as an audit run writes them, for the code paths that read verdicts.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from rewardsmith.audit.metrics import BASELINE, VerdictTable
from rewardsmith.heldout.sets import AuditItem
from rewardsmith.judges.base import OrderVerdict
from rewardsmith.judges.pairwise import combine_orders

SHORT, LONG = 20, 60


@dataclass(frozen=True)
class Behaviour:
    first: float = 0.0
    longer: float = 0.0
    noise: float = 0.0
    cue: float = 0.0

    def truth(self) -> dict[str, float]:
        """The population values the audit estimates."""
        rest = 1.0 - self.first - self.longer - self.noise

        def right(gold_first: bool, gold_longer: bool) -> float:
            return self.first * gold_first + self.longer * gold_longer + self.noise / 2 + rest

        # an item is correct when both orders pick the gold (the gold is shown first in exactly one order)
        accuracy = np.mean([right(True, longer) * right(False, longer) for longer in (True, False)])
        order_accuracy = np.mean([right(first, longer) for first in (True, False) for longer in (True, False)])
        return {
            "position_bias": self.first,
            "first_slot_rate": 0.5 + self.first / 2,
            "length_bias": self.longer,
            "accuracy": float(accuracy),
            "order_accuracy": float(order_accuracy),
            "susceptibility": self.cue,
        }


def _items(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    gold_a = rng.random(n) < 0.5
    gold_longer = rng.random(n) < 0.5
    return gold_a, gold_longer


def _picks_a(
    b: Behaviour, gold_a: np.ndarray, gold_longer: np.ndarray, a_first: bool, rng: np.random.Generator, cued: bool
) -> np.ndarray:
    """Whether one order's decision picks response a, for every item."""
    n = gold_a.size
    a_longer = gold_a == gold_longer
    u = rng.random(n)
    coin = rng.random(n) < 0.5
    pick = np.where(u < b.first, a_first, np.where(u < b.first + b.longer, a_longer, gold_a))
    pick = np.where((u >= b.first + b.longer) & (u < b.first + b.longer + b.noise), coin, pick)
    if cued:
        pick = np.where(rng.random(n) < b.cue, ~gold_a, pick)
    return pick


def simulate_table(b: Behaviour, n: int, rng: np.random.Generator) -> VerdictTable:
    """One baseline audit of ``n`` items as the table the metrics read."""
    gold_a, gold_longer = _items(n, rng)
    ab = _picks_a(b, gold_a, gold_longer, True, rng, cued=False).astype(float)
    ba = _picks_a(b, gold_a, gold_longer, False, rng, cued=False).astype(float)
    a_longer = gold_a == gold_longer
    return VerdictTable(
        items=_placeholder_items(n),
        gold_a=np.where(gold_a, 1.0, -1.0),
        prob_a=(ab + ba) / 2,
        pick_a_ab=ab,
        pick_a_ba=ba,
        len_a=np.where(a_longer, LONG, SHORT).astype(float),
        len_b=np.where(a_longer, SHORT, LONG).astype(float),
    )


@functools.cache
def _placeholder_items(n: int) -> list[AuditItem]:
    """The table's item list only sizes it; the metrics read gold, lengths and picks from its arrays."""
    return [AuditItem(id=f"s{i}", prompt="p", response_a="a", response_b="b", gold="a") for i in range(n)]


def simulate_verdicts(
    b: Behaviour, n: int, rng: np.random.Generator, perturbations: tuple[str, ...] = ()
) -> tuple[list[AuditItem], dict]:
    """Items and their verdicts keyed ``(item_id, perturbation)``, as :func:`~rewardsmith.audit.runner.load_verdicts`
    returns them; every perturbation puts a cue on the wrong response of every item."""
    gold_a, gold_longer = _items(n, rng)
    a_longer = gold_a == gold_longer
    items = [
        AuditItem(
            id=f"s{i}",
            prompt=f"p{i}",
            response_a="a" * (LONG if a_longer[i] else SHORT),
            response_b="b" * (SHORT if a_longer[i] else LONG),
            gold="a" if gold_a[i] else "b",
        )
        for i in range(n)
    ]
    verdicts = {}
    for name in (BASELINE, *perturbations):
        cued = name != BASELINE
        ab = _picks_a(b, gold_a, gold_longer, True, rng, cued)
        ba = _picks_a(b, gold_a, gold_longer, False, rng, cued)
        for i, item in enumerate(items):
            verdicts[(item.id, name)] = combine_orders(_order(bool(ab[i])), _order(not ba[i]))
    return items, verdicts


def _order(picks_first: bool) -> OrderVerdict:
    return OrderVerdict(
        prob_first=1.0 if picks_first else 0.0, choice="first" if picks_first else "second", source="parsed"
    )
