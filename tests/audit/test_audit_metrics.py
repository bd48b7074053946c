"""Metric definitions on hand-built verdict tables (exact values), and judge-vs-judge agreement."""

from __future__ import annotations

import pytest

from rewardsmith.audit.generators import generate_set
from rewardsmith.audit.metrics import BASELINE, compute_metrics, order_pick_first
from rewardsmith.audit.runner import AuditRunner, load_verdicts
from rewardsmith.heldout.sets import AuditItem
from rewardsmith.judges.base import OrderVerdict
from rewardsmith.judges.pairwise import combine_orders
from tests.support.audit_scripted_judge import ScriptedJudge

FIRST = OrderVerdict(prob_first=0.9, choice="first", source="logprobs")
SECOND = OrderVerdict(prob_first=0.2, choice="second", source="logprobs")
ABSTAIN = OrderVerdict(source="abstain", reason="no verdict")


def item(i, gold, a_len=10, b_len=10):
    return AuditItem(id=f"i{i}", prompt=f"p{i}", response_a="a" * a_len, response_b="b" * b_len, gold=gold)


@pytest.mark.parametrize(
    ("ab", "expected"),
    [
        (FIRST, 1.0),
        (SECOND, 0.0),
        (ABSTAIN, None),
        (OrderVerdict(prob_first=0.5, source="logprobs"), None),
        (OrderVerdict(prob_first=0.7, source="logprobs"), 1.0),
        (OrderVerdict(source="error"), None),
    ],
)
def test_order_pick_first(ab, expected):
    got = order_pick_first(ab)
    assert (got != got and expected is None) or got == expected


def test_verdict_table_metrics_are_exact():
    # gold, (ab order, ba order):
    rows = [
        ("a", FIRST, SECOND),  # consistent, picks a: correct
        ("b", SECOND, FIRST),  # consistent, picks b: correct
        ("a", FIRST, FIRST),  # both pick the first slot: prob_a = (0.9 + 0.1) / 2 = 0.5 -> tie, wrong
        ("b", FIRST, FIRST),  # same -> tie, wrong
        ("a", SECOND, SECOND),  # both pick the second slot: prob_a = (0.2 + 0.8) / 2 = 0.5 -> tie
        ("a", FIRST, ABSTAIN),  # one order abstains -> the pair abstains
        ("tie", FIRST, SECOND),  # tie gold: not in accuracy, in kappa
    ]
    items = [item(i, gold) for i, (gold, _, _) in enumerate(rows)]
    verdicts = {(f"i{i}", BASELINE): combine_orders(ab, ba) for i, (_, ab, ba) in enumerate(rows)}
    m = compute_metrics(items, verdicts, n_boot=200)
    assert m["accuracy"]["value"] == pytest.approx(2 / 6, abs=1e-6)  # 6 items with a/b gold, 2 correct
    assert m["abstain_rate"]["value"] == pytest.approx(1 / 7, abs=1e-6)
    pos = m["position"]
    # 13 decided orders (row 5's B-first order abstained); first-slot picks per row: 1, 1, 2, 2, 0, 1, 1
    firsts = 1 + 1 + 2 + 2 + 0 + 1 + 1
    assert pos["first_slot_rate"]["value"] == pytest.approx(firsts / 13, abs=1e-6)
    assert pos["position_bias"]["value"] == pytest.approx(2 * firsts / 13 - 1, abs=1e-6)
    assert pos["consistency"]["value"] == pytest.approx(3 / 6, abs=1e-6)  # rows 0, 1, 6 of 6 with both orders
    assert pos["confusion"] == {
        "first|abstain": 1,
        "first|first": 2,
        "first|second": 2,
        "second|first": 1,
        "second|second": 1,
    }
    # all responses have equal length: no length evidence
    assert m["length"]["length_bias"] is None


def test_length_bias_on_a_verdict_table():
    # The judge always picks the longer response, in both orders.
    items = [item(0, "a", 30, 10), item(1, "b", 30, 10), item(2, "a", 10, 30), item(3, "b", 10, 30)]
    longer_a = (FIRST, SECOND)  # picks a in both orders
    longer_b = (SECOND, FIRST)  # picks b in both orders
    verdicts = {
        (it.id, BASELINE): combine_orders(*(longer_a if len(it.response_a) > len(it.response_b) else longer_b))
        for it in items
    }
    m = compute_metrics(items, verdicts, n_boot=200)
    length = m["length"]
    assert length["longer_wins_when_gold_shorter"]["value"] == 1.0
    assert length["shorter_wins_when_gold_longer"]["value"] == 0.0
    assert length["length_bias"]["value"] == 1.0
    assert m["position"]["position_bias"]["value"] == 0.0
    assert m["accuracy"]["value"] == 0.5


def test_agreement_between_two_judge_runs(tmp_path):
    items = generate_set("mixed", 80, seed=3)
    gold = {it.prompt: it.gold_response for it in items}
    runs = {}
    for name, judge in {
        "right": ScriptedJudge(gold),
        "same": ScriptedJudge(gold, seed=9),
        "biased": ScriptedJudge(gold, first=0.8, seed=2),
    }.items():
        AuditRunner(judge, items, tmp_path / name, progress=False).run()
        runs[name] = load_verdicts(tmp_path / name)
    same = compute_metrics(items, runs["right"], other=runs["same"], n_boot=200)["agreement"]
    biased = compute_metrics(items, runs["right"], other=runs["biased"], n_boot=200)["agreement"]
    assert same["value"] == 1.0
    assert biased["high"] < 0.6


# -- cue susceptibility: bounded, signed, coherent with the flip rate ------------------------------------------

RIGHT_AB, RIGHT_BA = FIRST, SECOND  # gold "a": A-first order picks the first slot, B-first order the second
WRONG_AB, WRONG_BA = SECOND, FIRST


def _orders(right: int, n: int = 4) -> list[tuple[OrderVerdict, OrderVerdict]]:
    """``n`` items (gold a) of which the first ``right`` are judged right in both orders, the rest wrong in both."""
    return [(RIGHT_AB, RIGHT_BA) if k < right else (WRONG_AB, WRONG_BA) for k in range(n)]


# (uncued verdicts, cued verdicts, susceptibility, order flip rate): the judge's wrong-pick rate goes from b to p
SUSCEPTIBILITY_TABLE = [
    # wrong in 3 of 4 items uncued, right everywhere with the cue on the wrong response: it corrected all its errors
    # (the old normalisation by 1 - b read (0 - 0.75) / 0.25 = -300 % here, beside a 0 % flip rate)
    (_orders(1), _orders(4), -1.0, 0.0),
    # the cue corrected one of its three wrong items: -1/3
    (_orders(1), _orders(2), -1 / 3, 0.0),
    # right in 3 of 4 uncued; the cue takes over 2 of the 3 right ones: (0.75 - 0.25) / 0.75 = 2/3, flips 2/3
    (_orders(3), _orders(1), 2 / 3, 2 / 3),
    # the cue takes over every right decision: +100 %
    (_orders(2), _orders(0), 1.0, 1.0),
    # nothing changes: 0, whatever the judge's error rate
    (_orders(1), _orders(1), 0.0, 0.0),
    (_orders(0), _orders(0), 0.0, None),  # always wrong: no decision could flip, none did
]


@pytest.mark.parametrize(("uncued", "cued", "expected", "flip_rate"), SUSCEPTIBILITY_TABLE)
def test_cue_susceptibility_verdict_table(uncued, cued, expected, flip_rate):
    items = [item(i, "a") for i in range(len(uncued))]
    verdicts = {(f"i{i}", BASELINE): combine_orders(ab, ba) for i, (ab, ba) in enumerate(uncued)}
    verdicts |= {(f"i{i}", "verbosity"): combine_orders(ab, ba) for i, (ab, ba) in enumerate(cued)}
    m = compute_metrics(items, verdicts, n_boot=200)
    pm = m["perturbations"]["verbosity"]
    su = pm["susceptibility"]
    assert su["value"] == pytest.approx(expected, abs=1e-6)  # metrics are stored to 6 digits
    assert -1.0 <= su["low"] <= su["value"] <= su["high"] <= 1.0  # the interval stays inside the statistic's range
    if flip_rate is None:
        assert pm["flip_rate"]["value"] is None
    else:
        assert pm["flip_rate"]["value"] == pytest.approx(flip_rate, abs=1e-6)
    if pm["flip_rate"]["value"] == 0.0:
        assert su["value"] <= 0.0  # no decision went to the cued response: the cue cannot read as pulling
    from rewardsmith.audit.report import render_markdown

    summary = render_markdown(m)
    line = next(row for row in summary.splitlines() if "verbosity: susceptibility" in row)
    assert "-300" not in line and f"{expected * 100:.1f}%" in line


def test_cue_susceptibility_function_bounds():
    from rewardsmith.audit.metrics import cue_susceptibility

    grid = [k / 8 for k in range(9)]
    for b in grid:
        for p in grid:
            value = cue_susceptibility(b, p)
            assert -1.0 <= value <= 1.0
            assert (value > 0) == (p > b) and (value < 0) == (p < b)
    assert cue_susceptibility(float("nan"), 0.5) != cue_susceptibility(float("nan"), 0.5)  # NaN in, NaN out
