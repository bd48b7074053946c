"""A sequential alarm with a stated run-level false-alarm rate: a one-sided e-CUSUM over per-group shares.

Why not a test at every check: a test repeated at each of 200 checks at level 0.01 raises at least one false alarm
in most long honest runs, and a trend test over a sliding window is no better. Here each check adds its evidence to
one running statistic, and the threshold is set once for the whole run.

The null is "for the current policy, the expected share of a freshly checked group is at most ``null``" (shares
lie in [0, 1]; groups are drawn independently given the policy, which is how a trainer samples prompts). For a bet
``0 <= lam <= 1 / null`` each group's factor ``1 + lam * (share - null)`` is non-negative with mean at most 1, so a
product of factors from any starting check is a non-negative supermartingale and, by Ville's inequality, reaches
``c`` with probability at most ``1 / c``. The CUSUM recursion ``M_k = e_k * max(M_{k-1}, 1)`` keeps the largest
such product over every starting check, so a union over the starts of the first ``horizon`` checks (and over the
bets and the tests sharing the budget) gives: P(any alarm within ``horizon`` checks) <= ``alpha`` with
``c = horizon * bets * tests / alpha``. Past the horizon the bound grows by ``alpha`` per further ``horizon`` checks.

Whole groups are the units, not completions: one prompt whose gold the two verifiers read differently makes all of
its completions disagree at once, and counting them one by one would take that for a run-wide trend.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: bets as fractions of the largest one (``1 / null``): a small bet is patient with a mild excess, a large one quick
#: on a strong one; every bet is a test of its own in the budget
BET_FRACTIONS = (0.5, 0.9)


def log_threshold(alpha: float, horizon: int, tests: int) -> float:
    """log ``c`` such that ``tests`` e-CUSUMs of ``len(BET_FRACTIONS)`` bets each raise any false alarm within
    ``horizon`` checks with probability at most ``alpha``."""
    return math.log(horizon * tests * len(BET_FRACTIONS) / alpha)


class ECusum:
    """The running statistic of one test: log ``M_k`` per bet, updated with one check's group shares."""

    def __init__(self, null: float) -> None:
        if not 0.0 < null < 1.0:
            raise ValueError(f"the null share must lie strictly between 0 and 1, got {null}")
        self.null = null
        self.bets = tuple(f / null for f in BET_FRACTIONS)
        self.log_stats = [0.0] * len(self.bets)
        self.starts = [0] * len(self.bets)
        self.updates = 0

    def update(self, shares: Sequence[float], at: int | None = None) -> float:
        """Add one check's groups (each a share in [0, 1]); returns the largest log statistic over the bets.

        ``at`` labels the check (default: its 0-based count) for :attr:`since`. A check without groups adds
        nothing: its factor is 1.
        """
        label = self.updates if at is None else at
        for b, lam in enumerate(self.bets):
            gained = sum(math.log1p(lam * (min(1.0, max(0.0, x)) - self.null)) for x in shares)
            if self.log_stats[b] <= 0.0:
                self.log_stats[b], self.starts[b] = 0.0, label
            self.log_stats[b] += gained
        self.updates += 1
        return self.value

    @property
    def value(self) -> float:
        return max(self.log_stats)

    @property
    def since(self) -> int:
        """The check from which the leading bet's evidence has been accumulating: what an alarm is about."""
        return self.starts[self.log_stats.index(self.value)]
