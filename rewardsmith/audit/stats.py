"""Small statistics for the audit, numpy only: interval estimates, Holm's correction, kappa, logistic regression.

Every audit number is an :class:`Estimate` (value, 95 % interval, items behind it, and for a bias the
p-value of "no bias"). Intervals are chosen for honest coverage at the sizes audits run (tens to hundreds
of items), where the percentile bootstrap covered 89–96 %:

- a rate (accuracy, abstain rate, flip rate, first-slot rate): the Wilson score interval. A rate over
  single-order decisions has two correlated decisions per item, so its Wilson interval uses the effective
  sample size (Kish; Korn & Graubard 1998): decisions over the design effect estimated from per-item
  totals, never fewer than a perfectly correlated sample would give (:func:`rate`);
- a difference of two rates over disjoint items (length bias, self-preference): Newcombe's hybrid score
  interval (1998, method 10) from the two Wilson intervals (:func:`rate_difference`);
- anything else (kappa, cue susceptibility, regression coefficients, mean shifts): the BCa bootstrap over
  items (Efron 1987; acceleration from the jackknife), so both orders and every perturbation of an item move
  together and correlated decisions never pass for independent evidence (:func:`bootstrap`).

A bias test's p-value comes from a sign-flip permutation test over items where the bias compares two
presentations of each item (position: the two slots; a cue: with and without it), which is exact under
"no effect" (:func:`sign_flip_p_value`); otherwise it inverts the metric's interval (the smallest level at
which it excludes the null, :func:`invert`). :func:`holm` adjusts the p-values of the bias tests so that
flagging any of them keeps the family-wise error at 5 %.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from pydantic import BaseModel, field_serializer, model_serializer

_NORMAL = NormalDist()
#: Interval methods, as recorded in ``metrics.json``.
METHODS = {
    "rates": "Wilson score interval (per-order rates: effective sample size from the item design effect)",
    "differences of rates": "Newcombe hybrid score interval (method 10)",
    "other statistics": "BCa bootstrap over items (jackknife acceleration)",
    "bias p-values": "sign-flip permutation test over items (position, cues); Newcombe interval inverted (length, "
    "self-preference)",
    "flags": "Holm–Bonferroni over the bias tests of the audit, family-wise alpha 0.05",
}


class Estimate(BaseModel):
    """A statistic with its interval; ``value is None`` when undefined (no data).

    ``p_value`` (bias metrics only) is the two-sided p-value of "no bias" (see the module docstring).
    """

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0
    p_value: float | None = None

    @field_serializer("value", "low", "high")
    def _finite(self, v: float | None) -> float | None:
        return None if v is None or not math.isfinite(v) else round(float(v), 6)

    @model_serializer(mode="wrap")
    def _compact(self, handler):  # estimates without a test keep their four fields
        data = handler(self)
        if data.get("p_value") is None:
            data.pop("p_value", None)
        else:
            data["p_value"] = float(f"{data['p_value']:.4g}")
        return data

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

    def affine(self, scale: float, shift: float) -> Estimate:
        """``scale * x + shift`` of the estimate and its interval (``scale > 0``); the p-value carries over."""
        moved = [None if v is None else scale * v + shift for v in (self.value, self.low, self.high)]
        return Estimate(value=moved[0], low=moved[1], high=moved[2], n=self.n, p_value=self.p_value)


def _z(alpha: float) -> float:
    return _NORMAL.inv_cdf(1.0 - alpha / 2.0)


def wilson(p: float, n: float, alpha: float = 0.05) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``p`` observed on ``n`` (possibly effective) trials."""
    z2 = _z(alpha) ** 2
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = math.sqrt(z2) * math.sqrt(max(0.0, p * (1 - p)) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Rate:
    """A proportion over items: ``value`` = successes / trials, with ``n_eff`` trials' worth of information."""

    value: float
    n_eff: float
    n_items: int

    def interval(self, alpha: float = 0.05) -> tuple[float, float]:
        return wilson(self.value, self.n_eff, alpha)

    def p_value(self, null: float) -> float:
        """Two-sided score test of ``rate == null`` (the Wilson interval excludes ``null`` exactly when p < alpha)."""
        if null in (0.0, 1.0):
            return 1.0 if self.value == null else 0.0
        z = abs(self.value - null) / math.sqrt(null * (1 - null) / self.n_eff)
        return 2.0 * (1.0 - _NORMAL.cdf(z))

    def estimate(self, alpha: float = 0.05, null: float | None = None) -> Estimate:
        low, high = self.interval(alpha)
        p = None if null is None else self.p_value(null)
        return Estimate(value=self.value, low=low, high=high, n=self.n_items, p_value=p)


def rate(successes: np.ndarray, trials: np.ndarray | None = None) -> Rate | None:
    """The rate ``sum(successes) / sum(trials)`` over items (``trials`` defaults to one per item); ``None`` if empty.

    With more than one trial on some item the trials are not independent; the effective sample size is
    ``p(1 - p) / v`` with ``v`` the item-level (ratio-estimator) variance of the rate, and never below
    ``(sum m)^2 / sum m^2``, the sample size of perfectly correlated trials within items. It may exceed the
    number of trials: a judge that picks the first slot in exactly one order of every pair varies less
    than coin flips would. A rate of 0 or 1 says nothing about the correlation and gets the floor.
    """
    successes = np.asarray(successes, dtype=float)
    trials = np.ones_like(successes) if trials is None else np.asarray(trials, dtype=float)
    used = trials > 0
    y, m = successes[used], trials[used]
    total = float(m.sum())
    if total <= 0:
        return None
    p = float(y.sum()) / total
    k = int(used.sum())
    if np.all(m == 1) or k < 2:
        return Rate(p, total, k)
    fewest = total**2 / float(np.sum(m**2))
    variance = k / (k - 1) * float(np.sum((y - p * m) ** 2)) / total**2
    if variance > 0:
        return Rate(p, max(fewest, p * (1 - p) / variance), k)
    # every item at the overall rate (e.g. one first-slot pick in two): no more spread than binomial
    return Rate(p, total if 0 < p < 1 else fewest, k)


def rate_estimate(successes: np.ndarray, trials: np.ndarray | None = None, *, null: float | None = None) -> Estimate:
    """:func:`rate` as an :class:`Estimate` with its Wilson interval (and p-value against ``null``)."""
    found = rate(successes, trials)
    return Estimate(value=None) if found is None else found.estimate(null=null)


def rate_difference(first: Rate | None, second: Rate | None, *, alpha: float = 0.05, test: bool = True) -> Estimate:
    """``first - second`` for rates over disjoint items: Newcombe's hybrid score interval, p-value of no difference."""
    if first is None or second is None:
        return Estimate(value=None, n=(first.n_items if first else 0) + (second.n_items if second else 0))
    difference = first.value - second.value

    def interval(level: float) -> tuple[float, float]:
        l1, u1 = first.interval(level)
        l2, u2 = second.interval(level)
        return (
            difference - math.sqrt((first.value - l1) ** 2 + (u2 - second.value) ** 2),
            difference + math.sqrt((u1 - first.value) ** 2 + (second.value - l2) ** 2),
        )

    low, high = interval(alpha)
    p = invert(interval, 0.0) if test else None
    return Estimate(value=difference, low=low, high=high, n=first.n_items + second.n_items, p_value=p)


def invert(interval: Callable[[float], tuple[float, float]], null: float, *, floor: float = 1e-12) -> float:
    """The p-value of ``null``: the smallest level ``alpha`` at which ``interval(alpha)`` excludes it (bisection)."""

    def excludes(alpha: float) -> bool:
        low, high = interval(alpha)
        return not low - 1e-12 <= null <= high + 1e-12

    if not excludes(1.0 - 1e-9):
        return 1.0
    if excludes(floor):
        return floor
    lo, hi = math.log(floor), math.log(1.0 - 1e-9)  # excludes at hi, not at lo
    for _ in range(60):
        mid = (lo + hi) / 2
        if excludes(math.exp(mid)):
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


def sign_flip_p_value(differences: np.ndarray, *, n_flips: int = 9999, seed: int = 0) -> float:
    """Two-sided p-value of "each item's difference is as likely negative as positive" (a paired permutation test).

    Under "no effect" (the cue, or the slot, changes nothing) the two halves of each item's comparison are
    exchangeable, so flipping the sign of its difference leaves the distribution of the total unchanged; the
    p-value is the share of ``n_flips`` random sign flips whose total is at least as far from 0 (counting the
    observed one), valid at every sample size, where interval-based p-values are only asymptotically so.
    """
    d = np.asarray(differences, dtype=float)
    d = d[d != 0]
    observed = abs(float(d.sum()))
    if d.size == 0 or observed == 0:
        return 1.0
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, n_flips, 2000):
        signs = rng.integers(0, 2, size=(min(2000, n_flips - start), d.size)) * 2 - 1
        extreme += int(np.sum(np.abs(signs @ d) >= observed - 1e-9))
    return (extreme + 1) / (n_flips + 1)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values: reject those below alpha and the family-wise error stays at alpha."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


Statistic = Callable[[np.ndarray], float]
#: Above this many items the acceleration comes from a delete-a-group jackknife with this many groups.
JACKKNIFE_GROUPS = 200


def bootstrap(
    statistic: Statistic,
    n_items: int,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    null: float | None = None,
) -> Estimate:
    """``statistic(indices)`` on all items, with a BCa interval from ``n_boot`` item resamples.

    Replicates where the statistic is undefined (NaN) are dropped; with fewer than 20 defined
    replicates the interval is left open (``None``). With ``null`` the estimate carries the p-value of
    ``statistic == null`` (no smaller than ``1 / (replicates + 1)``).
    """
    if n_items == 0:
        return Estimate(value=None, n=0)
    point = float(statistic(np.arange(n_items)))
    if not math.isfinite(point):
        return Estimate(value=None, n=n_items)
    rng = np.random.default_rng(seed)
    reps = np.array([statistic(rng.integers(0, n_items, n_items)) for _ in range(n_boot)], dtype=float)
    reps = np.sort(reps[np.isfinite(reps)])
    if reps.size < 20:
        return Estimate(value=point, n=n_items)
    interval = bca_interval(reps, point, _acceleration(statistic, n_items, seed))
    low, high = interval(alpha)
    p = None if null is None else max(invert(interval, null), 1.0 / (reps.size + 1))
    return Estimate(value=point, low=low, high=high, n=n_items, p_value=p)


def bca_interval(reps: np.ndarray, point: float, acceleration: float) -> Callable[[float], tuple[float, float]]:
    """``alpha -> (low, high)``: the BCa interval of bootstrap replicates ``reps`` around ``point``."""
    below = (np.sum(reps < point) + 0.5 * np.sum(reps == point)) / reps.size
    half_step = 0.5 / reps.size
    z0 = _NORMAL.inv_cdf(min(1.0 - half_step, max(half_step, float(below))))

    def level(z: float) -> float:
        w = z0 + z
        denominator = 1.0 - acceleration * w
        if denominator <= 0:
            return 1.0 if w > 0 else 0.0
        return _NORMAL.cdf(z0 + w / denominator)

    def interval(alpha: float) -> tuple[float, float]:
        z = _z(alpha)
        low, high = np.quantile(reps, [level(-z), level(z)])
        return float(low), float(high)

    return interval


def _acceleration(statistic: Statistic, n_items: int, seed: int) -> float:
    """BCa acceleration from jackknife skewness: leave one item out, or one of ``JACKKNIFE_GROUPS`` groups."""
    order = np.arange(n_items)
    if n_items > JACKKNIFE_GROUPS:
        order = np.random.default_rng(seed + 1).permutation(n_items)
    groups = np.array_split(order, min(n_items, JACKKNIFE_GROUPS))
    keep = np.ones(n_items, dtype=bool)
    values = []
    for group in groups:
        keep[group] = False
        values.append(statistic(np.flatnonzero(keep)))
        keep[group] = True
    jack = np.array(values, dtype=float)
    jack = jack[np.isfinite(jack)]
    if jack.size < 3:
        return 0.0
    spread = jack.mean() - jack
    scale = float(np.sum(spread**2))
    return float(np.sum(spread**3)) / (6.0 * scale**1.5) if scale > 0 else 0.0


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
