"""Metric definitions on hand-built verdict tables (exact values), and judge-vs-judge agreement."""

from __future__ import annotations

import pytest

from rewardkit.audit.generators import generate_set
from rewardkit.audit.metrics import BASELINE, compute_metrics, order_pick_first
from rewardkit.audit.runner import AuditRunner, load_verdicts
from rewardkit.heldout.sets import AuditItem
from rewardkit.judges.base import OrderVerdict
from rewardkit.judges.pairwise import combine_orders
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
