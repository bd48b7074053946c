"""Completeness in the reward audit: the gold written the other right ways models write it, scored by real rewards.

``math_equivalence`` must pay every right form on the bundled rows; a reward that reads only ``\\boxed{}`` must be
reported as refusing the forms it cannot read; the audit's metrics, findings and summary carry the section.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardsmith.adapters.spec import load_spec
from rewardsmith.data import read_records
from rewardsmith.hackaudit.completeness import completeness_findings, measure_completeness, right_forms
from rewardsmith.hackaudit.runner import run_reward_audit
from rewardsmith.hackaudit.spec_kinds import profile_spec

SAMPLES = Path(__file__).resolve().parents[2] / "rewardsmith" / "samples"
MATH_ROWS = read_records(SAMPLES / "hack_math_rows.jsonl")
BOX_ONLY = {"rewards": [{"name": "regex_match", "config": {"pattern": r"\\boxed\{"}}]}
MATH = {"rewards": [{"name": "math_equivalence", "config": {"workers": 1}}]}


def measure(spec, rows):
    return measure_completeness(load_spec(spec).combined(), rows, profile_spec(spec))


def test_the_forms_state_the_gold_in_every_way_and_only_where_they_apply():
    speed = {"prompt": "A train travels 60 km in 1.5 hours. What is its average speed in km/h?", "solution": "40"}
    forms = right_forms(speed, profile_spec(MATH))
    assert forms["bold"].endswith("**40**.") and forms["bare last line"].endswith("\n40")
    assert "<answer>40</answer>" in forms["answer tags"] and forms["unit"].endswith("40 km/h.")
    assert "dfrac" not in forms  # only a fraction has a \dfrac form
    half = right_forms({"prompt": "What is 1/4 + 1/4?", "solution": r"\frac{1}{2}"}, profile_spec(MATH))
    assert r"\dfrac{1}{2}" in half["dfrac"] and "unit" not in half
    assert right_forms({"prompt": "What is it?", "solution": ""}, profile_spec(MATH)) == {}


@pytest.mark.parametrize(
    ("spec", "refused", "paid_overall"),
    [
        (MATH, [], 1.0),  # reads every right form
        # one row with a unit: 0/1 is too little to call the form refused (its upper bound is above one half)
        (BOX_ONLY, ["bold", "bare last line", "answer tags", "final statement"], 11 / 52),
    ],
)
def test_verdicts_per_form_with_intervals(spec, refused, paid_overall):
    block = measure(spec, MATH_ROWS)
    assert sorted(block["refused"]) == sorted(refused)
    assert block["overall"]["rate"] == pytest.approx(paid_overall)
    for form, counts in block["forms"].items():
        assert counts["low"] - 1e-9 <= counts["rate"] <= counts["high"] + 1e-9, form
        assert counts["unscorable"] == 0
    assert set(block["refused_examples"]) == set(refused)
    assert block["forms"]["spaces"]["paid"] == 10 and block["forms"]["dfrac"]["n"] == 1


def test_a_reward_that_refuses_right_answers_is_reported_as_such(tmp_path):
    outcome = run_reward_audit(BOX_ONLY, SAMPLES / "hack_math_rows.jsonl", tmp_path, attacks="math_empty")
    saved = json.loads(outcome.paths["metrics"].read_text())
    assert saved["completeness"]["refused"] == outcome.metrics["completeness"]["refused"] != []
    (line,) = completeness_findings(saved)
    assert line.startswith("REFUSES RIGHT ANSWERS") and "bold 0/10" in line
    summary = outcome.paths["summary"].read_text()
    assert "## Completeness" in summary and "| bold | 0/10 |" in summary and line in summary
    assert outcome.flagged == ["math_empty"]  # and unsound besides: it pays an empty \boxed{}
