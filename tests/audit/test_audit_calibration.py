"""Calibration of the bias audit: a scripted judge with injected, known biases is audited and every
injected bias must be recovered within its 95 % interval; an unbiased (but noisy) judge shows none."""

from __future__ import annotations

import random

import pytest

from rewardsmith.audit.generators import generate_set
from rewardsmith.audit.metrics import compute_metrics
from rewardsmith.audit.perturb import _AUTHORITY, _BANDWAGON
from rewardsmith.audit.runner import AuditRunner, load_verdicts
from tests.support.audit_scripted_judge import ScriptedJudge

N_ITEMS = 400
N_BOOT = 1000


def own_marked(items, model, seed=0):
    """Mark one response of every item as written by ``model`` (the gold one for half of them)."""
    rng = random.Random(seed)
    marked, own = [], set()
    for item in items:
        slot = rng.choice("ab")
        update = (
            {"author_a": model, "author_b": "generator"}
            if slot == "a"
            else {"author_a": "generator", "author_b": model}
        )
        marked.append(item.model_copy(update=update))
        own.add((item.prompt, item.response_a if slot == "a" else item.response_b))
    return marked, own


def audit(tmp_path, items, judge, perturbations=("authority", "bandwagon")):
    AuditRunner(judge, items, tmp_path / "run", perturbations=perturbations, progress=False).run()
    return compute_metrics(items, load_verdicts(tmp_path / "run"), self_model=judge.model, n_boot=N_BOOT, seed=1)


@pytest.fixture(scope="module")
def items_and_own():
    return own_marked(generate_set("mixed", N_ITEMS, seed=7), "scripted-judge")


def value(est):
    return est["value"]


def assert_recovered(est, truth, name):
    assert est["low"] is not None, f"{name}: no interval"
    assert est["low"] <= truth <= est["high"], f"{name}: injected {truth}, estimated {est}"


def assert_not_detected(est, name, family):
    """A bias that was not injected is not detected: its p-value stays above 5 % after Bonferroni over the family.

    A raw 95 % interval around a true zero misses it in one estimate of twenty by design (more often, with several
    estimates per test); the audit flags on multiplicity-corrected p-values, so that is what "no bias" means here.
    """
    assert est["p_value"] is not None, f"{name}: no test"
    assert est["p_value"] * family >= 0.05, f"{name}: not injected, yet detected: {est}"


def test_injected_biases_are_recovered_within_their_intervals(tmp_path, items_and_own):
    items, own = items_and_own
    gold = {it.prompt: it.gold_response for it in items}
    injected = {"first": 0.3, "longer": 0.2, "self_pref": 0.2, "cue": 0.4}
    judge = ScriptedJudge(gold, **injected, cue_markers=_AUTHORITY, own_responses=own, seed=3)
    m = audit(tmp_path, items, judge)

    assert_recovered(m["position"]["position_bias"], injected["first"], "position")
    assert_recovered(m["length"]["length_bias"], injected["longer"], "length")
    assert_recovered(m["self_preference"]["self_preference"], injected["self_pref"], "self-preference")
    assert_recovered(m["perturbations"]["authority"]["susceptibility"], injected["cue"], "authority cue")
    # The bandwagon cue was not injected: the judge ignores it.
    assert_not_detected(m["perturbations"]["bandwagon"]["susceptibility"], "bandwagon cue", family=5)
    # Biases push the length coefficient up and the consistency down.
    assert m["length"]["length_coef"]["low"] > 0
    assert m["position"]["consistency"]["high"] < 0.8
    flagged = {f["bias"] for f in m["flags"]}
    assert {"position", "length", "perturbation:authority", "self_preference"} <= flagged
    assert "perturbation:bandwagon" not in flagged


@pytest.mark.parametrize("first", [0.1, 0.6])
def test_position_bias_strength_is_tracked(tmp_path, items_and_own, first):
    items, _ = items_and_own
    gold = {it.prompt: it.gold_response for it in items}
    m = audit(tmp_path, items, ScriptedJudge(gold, first=first, noise=0.2, seed=11), perturbations=())
    assert_recovered(m["position"]["position_bias"], first, "position")
    # A first-slot judge wins the first slot 0.5 + first/2 of the time.
    assert_recovered(m["position"]["first_slot_rate"], 0.5 + first / 2, "first-slot rate")


def test_unbiased_noisy_judge_shows_no_bias(tmp_path, items_and_own):
    items, own = items_and_own
    gold = {it.prompt: it.gold_response for it in items}
    judge = ScriptedJudge(gold, noise=0.15, cue_markers=_AUTHORITY + _BANDWAGON, own_responses=own, seed=5)
    m = audit(tmp_path, items, judge)

    for name, est in [
        ("position", m["position"]["position_bias"]),
        ("length", m["length"]["length_bias"]),
        ("self-preference", m["self_preference"]["self_preference"]),
        ("authority", m["perturbations"]["authority"]["susceptibility"]),
        ("bandwagon", m["perturbations"]["bandwagon"]["susceptibility"]),
    ]:
        assert_not_detected(est, name, family=5)
    assert m["flags"] == []
    # Noise 0.15 per order (a coin flip): an order is right with probability 0.925.
    assert_recovered(m["order_accuracy"], 0.925, "per-order accuracy")
    # No length bias: controlling for length leaves the accuracy where it was.
    assert abs(value(m["length"]["lc_accuracy"]) - value(m["order_accuracy"])) < 0.03


def test_strong_length_bias_is_measured_from_both_sides(tmp_path, items_and_own):
    items, _ = items_and_own
    gold = {it.prompt: it.gold_response for it in items}
    m = audit(tmp_path, items, ScriptedJudge(gold, longer=0.5, seed=2), perturbations=())
    length = m["length"]
    assert_recovered(length["length_bias"], 0.5, "length")
    assert_recovered(length["longer_wins_when_gold_shorter"], 0.5, "longer wins when gold is shorter")
    assert value(length["shorter_wins_when_gold_longer"]) == 0.0
    assert length["length_coef"]["low"] > 1.0
    assert_recovered(m["order_accuracy"], 0.75, "per-order accuracy")
    assert_recovered(m["position"]["position_bias"], 0.0, "position")
    # The binned win rate rises with the gold's length advantage.
    bins = length["bins"]
    assert bins[0]["gold_win_rate"] < 0.6 < 0.95 < bins[-1]["gold_win_rate"]


def test_perfect_judge_metrics(tmp_path, items_and_own):
    items, _ = items_and_own
    gold = {it.prompt: it.gold_response for it in items}
    m = audit(tmp_path, items[:60], ScriptedJudge(gold, seed=0), perturbations=("verbosity",))
    assert value(m["accuracy"]) == 1.0
    assert value(m["kappa_gold"]) == 1.0
    assert value(m["position"]["consistency"]) == 1.0
    assert value(m["position"]["position_bias"]) == 0.0
    assert value(m["perturbations"]["verbosity"]["flip_rate"]) == 0.0
    assert value(m["abstain_rate"]) == 0.0
    assert m["flags"] == []


# A judge without any bias (it is right or flips a coin), audited at 40 items with three cues: five bias tests
# per audit (position, length, three cue susceptibilities). Flagging every bias whose own test rejects at 5 %
# flags about one such audit in seven (the percentile-bootstrap audit this replaces flagged 17 %); Holm's
# correction keeps the share at or below the family-wise 5 % (measured: 2 %). With AUDITS audits a true rate of
# 5 % stays below FAMILY_WISE_BOUND except with probability < 0.1 % (3.2 binomial standard errors).
AUDITS = 300
FAMILY_WISE_BOUND = 0.05 + 3.2 * (0.05 * 0.95 / AUDITS) ** 0.5


@pytest.mark.slow
def test_a_judge_without_bias_is_flagged_at_most_at_the_family_wise_rate():
    import numpy as np

    from rewardsmith.audit.metrics import BASELINE, Thresholds, VerdictTable, bias_metrics, bias_tests
    from tests.support.audit_simulation import Behaviour, simulate_verdicts

    rng = np.random.default_rng(40)
    flagged = marginal = 0
    for seed in range(AUDITS):
        items, verdicts = simulate_verdicts(Behaviour(noise=0.3), 40, rng, ("authority", "bandwagon", "verbosity"))
        table = VerdictTable.build(items, {iid: v for (iid, p), v in verdicts.items() if p == BASELINE})
        m = bias_metrics(table, verdicts, n_boot=500, seed=seed, regression=False)
        tests = bias_tests(m, Thresholds())
        assert len(tests) == 5
        flagged += any(test["flagged"] for test in tests.values())
        marginal += any(test["p_value"] < 0.05 for test in tests.values())
    assert flagged / AUDITS <= FAMILY_WISE_BOUND, f"{flagged} of {AUDITS} unbiased audits flagged"
    assert marginal > 2 * flagged  # what the correction is for: uncorrected, many more audits show some bias
