"""Statistics behind the audit: Cohen's kappa (verdict table), item bootstrap, logistic regression."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rewardkit.audit.stats import Estimate, bootstrap, cohen_kappa, logistic_regression, sigmoid


def _labels(table):
    """Expand {(x, y): count} into two aligned label lists."""
    first, second = [], []
    for (x, y), count in table.items():
        first += [x] * count
        second += [y] * count
    return first, second


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ({("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15}, 0.4),  # textbook example
        ({("a", "a"): 10, ("b", "b"): 10}, 1.0),
        ({("a", "a"): 5, ("a", "b"): 5, ("b", "a"): 5, ("b", "b"): 5}, 0.0),
        ({("a", "b"): 10, ("b", "a"): 10}, -1.0),
        ({("a", "a"): 8, ("b", "b"): 6, ("tie", "tie"): 2, ("a", "tie"): 2, ("tie", "b"): 2}, 0.6875),
        ({("a", "a"): 7}, 1.0),  # both constant and equal: perfect agreement
    ],
)
def test_cohen_kappa_verdict_table(table, expected):
    assert cohen_kappa(*_labels(table)) == pytest.approx(expected)


def test_cohen_kappa_undefined_and_invalid_inputs():
    assert cohen_kappa(["a"] * 4, ["b"] * 4) == 0.0  # never agree, chance agreement 0
    assert math.isnan(cohen_kappa([], []))
    with pytest.raises(ValueError, match="equal length"):
        cohen_kappa(["a"], ["a", "b"])


def test_bootstrap_interval_covers_a_known_proportion():
    rng = np.random.default_rng(0)
    x = (rng.random(600) < 0.3).astype(float)
    est = bootstrap(lambda idx: x[idx].mean(), x.size, n_boot=1000, seed=1)
    assert est.value == pytest.approx(x.mean())
    assert est.low < 0.3 < est.high
    se = math.sqrt(0.3 * 0.7 / 600)
    assert 2.5 * se < est.high - est.low < 5 * se


def test_bootstrap_handles_no_data_and_undefined_statistics():
    assert bootstrap(lambda idx: 1.0, 0) == Estimate(value=None, n=0)
    assert bootstrap(lambda idx: float("nan"), 5).value is None
    # defined on the full sample but on almost no resample: the interval stays open
    est = bootstrap(lambda idx: 1.0 if len(set(idx.tolist())) == 3 else float("nan"), 3, n_boot=50)
    assert est.value == 1.0 and est.low is None


def test_logistic_regression_recovers_known_coefficients():
    rng = np.random.default_rng(1)
    n = 6000
    x = np.column_stack([np.ones(n), rng.normal(size=n), rng.choice([-1.0, 1.0], size=n)])
    beta = np.array([0.5, 1.5, -1.0])
    y = (rng.random(n) < sigmoid(x @ beta)).astype(float)
    fit = logistic_regression(x, y, l2=0.0)
    assert fit == pytest.approx(beta, abs=0.12)


def test_logistic_regression_stays_finite_on_separable_data():
    x = np.column_stack([np.ones(8), np.array([-2, -1.5, -1, -0.5, 0.5, 1, 1.5, 2])])
    y = (x[:, 1] > 0).astype(float)
    fit = logistic_regression(x, y)
    assert np.all(np.isfinite(fit)) and fit[1] > 0


def test_estimate_serializes_non_finite_values_as_null_and_formats():
    est = Estimate(value=float("nan"), low=0.1, high=float("inf"), n=3)
    assert json.loads(est.model_dump_json()) == {"value": None, "low": 0.1, "high": None, "n": 3}
    good = Estimate(value=0.25, low=0.2, high=0.3, n=10)
    assert good.fmt(pct=True) == "25.0% [20.0, 30.0]"
    assert good.contains(0.21) and not good.contains(0.35) and good.excludes_zero()
    assert Estimate(value=None).fmt() == "n/a"
