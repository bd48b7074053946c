"""Small statistics for the audit, numpy only: item bootstrap, Cohen's kappa, logistic regression.

Every audit number is an :class:`Estimate` (value, 95 % interval, sample size). Intervals come from
a percentile bootstrap over *items* (both orders and every perturbation of an item move together),
so correlated decisions on one item never pass for independent evidence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence

import numpy as np
from pydantic import BaseModel, field_serializer


class Estimate(BaseModel):
    """A statistic with its bootstrap interval; ``value is None`` when undefined (no data)."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0

    @field_serializer("value", "low", "high")
    def _finite(self, v: float | None) -> float | None:
        return None if v is None or not math.isfinite(v) else round(float(v), 6)

    def contains(self, x: float) -> bool:
        return self.low is not None and self.high is not None and self.low - 1e-12 <= x <= self.high + 1e-12

    def excludes_zero(self) -> bool:
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)

    def fmt(self, pct: bool = False) -> str:
        if self.value is None or not math.isfinite(self.value):
            return "n/a"
        scale, unit = (100.0, "%") if pct else (1.0, "")
        if self.low is None or self.high is None:
            return f"{self.value * scale:.1f}{unit}" if pct else f"{self.value:.3f}"
        if pct:
            return f"{self.value * scale:.1f}{unit} [{self.low * scale:.1f}, {self.high * scale:.1f}]"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"


Statistic = Callable[[np.ndarray], float]


def bootstrap(
    statistic: Statistic, n_items: int, *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> Estimate:
    """``statistic(indices)`` on all items, with a percentile interval from ``n_boot`` item resamples.

    Replicates where the statistic is undefined (NaN) are dropped; with fewer than 20 defined
    replicates the interval is left open (``None``).
    """
    if n_items == 0:
        return Estimate(value=None, n=0)
    point = float(statistic(np.arange(n_items)))
    if not math.isfinite(point):
        return Estimate(value=None, n=n_items)
    rng = np.random.default_rng(seed)
    reps = np.array([statistic(rng.integers(0, n_items, n_items)) for _ in range(n_boot)], dtype=float)
    reps = reps[np.isfinite(reps)]
    if reps.size < 20:
        return Estimate(value=point, n=n_items)
    low, high = np.quantile(reps, [alpha / 2, 1 - alpha / 2])
    return Estimate(value=point, low=float(low), high=float(high), n=n_items)


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float:
    """Cohen's kappa of two label sequences: (p_o - p_e) / (1 - p_e); NaN when undefined.

    >>> cohen_kappa(["a", "b", "a", "b"], ["a", "b", "a", "b"])
    1.0
    """
    if len(first) != len(second):
        raise ValueError("kappa needs two label sequences of equal length")
    n = len(first)
    if n == 0:
        return float("nan")
    labels = sorted(set(first) | set(second), key=str)
    index = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for x, y in zip(first, second, strict=True):
        table[index[x], index[y]] += 1
    table /= n
    p_o = float(np.trace(table))
    p_e = float(table.sum(axis=1) @ table.sum(axis=0))
    if math.isclose(p_e, 1.0):
        return 1.0 if math.isclose(p_o, 1.0) else float("nan")
    return (p_o - p_e) / (1.0 - p_e)


def logistic_regression(x: np.ndarray, y: np.ndarray, *, l2: float = 1e-2, max_iter: int = 100) -> np.ndarray:
    """Coefficients of ``P(y=1) = sigmoid(x @ beta)`` by Newton's method (IRLS).

    A small ridge penalty ``l2`` (not applied to column 0, the intercept) keeps the fit finite when
    the data are separable, e.g. a judge that is always right.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n, k = x.shape
    beta = np.zeros(k)
    penalty = np.full(k, l2 * n)
    penalty[0] = 1e-8 * n
    for _ in range(max_iter):
        p = sigmoid(x @ beta)
        grad = x.T @ (y - p) - penalty * beta
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        beta = beta + step
        if np.max(np.abs(step)) < 1e-9:
            break
    return beta


def sigmoid(z: np.ndarray | float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))
