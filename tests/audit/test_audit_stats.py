"""Statistics behind the audit: Wilson and Newcombe intervals against published values, the BCa bootstrap,
Holm's correction, interval coverage measured on simulated audits of known truth, Cohen's kappa (verdict
table) and logistic regression."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rewardsmith.audit.metrics import accuracy, length_metrics, position_metrics
from rewardsmith.audit.stats import (
    Estimate,
    Rate,
    bootstrap,
    cohen_kappa,
    holm,
    logistic_regression,
    rate,
    rate_difference,
    rate_estimate,
    sigmoid,
    sign_flip_p_value,
    wilson,
)
from tests.support.audit_simulation import Behaviour, simulate_table


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


def test_wilson_and_newcombe_match_published_values():
    # Newcombe (1998), Statistics in Medicine 17: 81/263 (Wilson, method 3) and 56/70 - 48/80 (hybrid score, method 10)
    assert wilson(81 / 263, 263) == pytest.approx((0.2553, 0.3662), abs=5e-5)
    difference = rate_difference(Rate(56 / 70, 70, 70), Rate(48 / 80, 80, 80))
    assert (difference.low, difference.high) == pytest.approx((0.0524, 0.3339), abs=5e-5)
    assert wilson(0.0, 10) == pytest.approx((0.0, 0.2775), abs=5e-5)  # defined at 0 successes, unlike Wald


def test_rate_uses_the_effective_sample_size_of_correlated_decisions():
    items = 50
    # two decisions per item that always agree carry the information of one decision per item
    same = rate(np.repeat([0.0, 2.0], items // 2), np.full(items, 2.0))
    assert same.value == 0.5 and same.n_eff == pytest.approx(items)
    # one first-slot pick in every pair: less spread than coin flips, never less information than the decisions
    split = rate(np.ones(items), np.full(items, 2.0))
    assert split.n_eff == pytest.approx(2 * items)
    # independent decisions: about one decision each
    rng = np.random.default_rng(0)
    independent = rate((rng.random((4000, 2)) < 0.3).sum(axis=1).astype(float), np.full(4000, 2.0))
    assert independent.n_eff == pytest.approx(8000, rel=0.1)
    assert rate(np.zeros(0)) is None and rate_estimate(np.zeros(3), np.zeros(3)).value is None


def test_sign_flip_p_value_is_the_exact_permutation_probability():
    # 8 items that all lean the same way: 2 of the 2^8 sign patterns are as extreme
    assert sign_flip_p_value(np.ones(8), n_flips=200_000) == pytest.approx(2 / 256, rel=0.05)
    assert sign_flip_p_value(np.array([1.0, -1.0] * 10)) == 1.0
    assert sign_flip_p_value(np.zeros(5)) == 1.0  # no item differs: no evidence of any effect
    # valid at any size: under "no effect" it rejects at most 5 % of the time
    rng = np.random.default_rng(5)
    null_p = [sign_flip_p_value(rng.choice([-1.0, 0.0, 1.0], size=15), n_flips=999, seed=i) for i in range(400)]
    assert np.mean(np.array(null_p) < 0.05) <= 0.05 + 3.2 * (0.05 * 0.95 / 400) ** 0.5


def test_holm_adjusts_for_the_number_of_tests():
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([]) == [] and holm([0.5]) == [0.5]


@pytest.mark.parametrize("method", ["wilson", "newcombe", "bca"])
def test_p_value_below_alpha_exactly_when_the_interval_excludes_the_null(method):
    rng = np.random.default_rng(4)
    for _ in range(40):
        successes = float(rng.integers(0, 31))
        if method == "wilson":
            est = Rate(successes / 30, 30, 30).estimate(null=0.5)
            null = 0.5
        elif method == "newcombe":
            est = rate_difference(Rate(successes / 30, 30, 30), Rate(15 / 30, 30, 30))
            null = 0.0
        else:
            x = (rng.random(30) < successes / 30).astype(float) - 0.5
            est = bootstrap(lambda idx, x=x: x[idx].mean(), 30, n_boot=400, seed=1, null=0.0)
            null = 0.0
        if est.low is None or min(abs(est.low - null), abs(est.high - null)) < 1e-6:
            continue  # an interval touching the null: either answer is right at that precision
        assert (est.p_value < 0.05) is (not est.low <= null <= est.high), est


def test_bca_corrects_the_skew_the_percentile_interval_misses():
    # The mean of a skewed sample: BCa moves both ends up (the reference, scipy.stats.bootstrap(method="BCa")
    # on this sample with 20000 resamples, gives about [0.914, 1.625]; the percentile interval about [0.88, 1.56]).
    x = np.random.default_rng(0).lognormal(size=30)
    est = bootstrap(lambda idx: x[idx].mean(), 30, n_boot=20000, seed=1)
    assert est.low == pytest.approx(0.914, abs=0.012) and est.high == pytest.approx(1.625, abs=0.015)


# Coverage of the nominal 95 % intervals on simulated audits whose truth is known exactly
# (tests/support/audit_simulation.py): a judge that picks the first slot in 30 % of its decisions, the longer
# response in 10 % and flips a coin in 20 % (true accuracy 0.47). The expected coverage of every interval checked
# here is 0.9365-0.9515: exactly, for the per-item Wilson intervals (binomial sums; Wilson dips to 0.9365 at
# 66 items for this rate), and from 20000 simulated audits for the others. SIMULATIONS audits give a binomial
# standard error of at most sqrt(0.9365 * 0.0635 / SIMULATIONS) = 0.0039, so every measured coverage lies in
# COVERAGE_BOUNDS unless it strays by more than 3.0 standard errors (probability < 0.3 % per check), while
# the percentile bootstrap these intervals replace measured 0.90 on the 13-item categories of a 40-item audit.
SIMULATIONS = 4000
COVERAGE_BOUNDS = (0.925, 0.975)


def _covers(est, truth: float) -> bool:
    est = Estimate.model_validate(est) if isinstance(est, dict) else est
    return est.low is not None and est.contains(truth)


@pytest.mark.slow
@pytest.mark.parametrize("n_items", [40, 200])
def test_intervals_cover_the_truth_at_their_nominal_rate(n_items):
    judge = Behaviour(first=0.3, longer=0.1, noise=0.2)
    truth = judge.truth()
    rng = np.random.default_rng(2026 + n_items)
    covered = {"accuracy": 0, "position_bias": 0, "length_bias": 0, "category_accuracy": 0}
    for _ in range(SIMULATIONS):
        table = simulate_table(judge, n_items, rng)
        covered["accuracy"] += _covers(accuracy(table), truth["accuracy"])
        covered["position_bias"] += _covers(position_metrics(table)["position_bias"], truth["position_bias"])
        covered["length_bias"] += _covers(length_metrics(table, regression=False)["length_bias"], truth["length_bias"])
        # a category of a third of the items (the per-category rows of a report)
        third = table.subset(np.arange(n_items // 3))
        covered["category_accuracy"] += _covers(accuracy(third), truth["accuracy"])
    coverage = {name: hits / SIMULATIONS for name, hits in covered.items()}
    low, high = COVERAGE_BOUNDS
    assert all(low <= c <= high for c in coverage.values()), coverage


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
    tested = Estimate(value=0.3, low=0.1, high=0.5, n=9, p_value=0.0123456)
    assert tested.model_dump()["p_value"] == 0.01235
    assert tested.affine(2.0, -1.0).model_dump() == {
        "value": -0.4,
        "low": -0.8,
        "high": 0.0,
        "n": 9,
        "p_value": 0.01235,
    }
    good = Estimate(value=0.25, low=0.2, high=0.3, n=10)
    assert good.fmt(pct=True) == "25.0% [20.0, 30.0]"
    assert good.contains(0.21) and not good.contains(0.35) and good.excludes_zero()
    assert Estimate(value=None).fmt() == "n/a"
