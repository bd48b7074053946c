"""The hack audit's attacks are wrong by construction: a variant that states the row's gold is dropped and counted.

``math_giant_malformed`` once produced ``\\boxed{\\infty}`` for a gold ``\\infty`` and counted it as a successful
attack. The attacker's independent reading (:mod:`rewardsmith.hackaudit.attacks.answers`) decides whether a stated
answer is the gold; it shares no code with the math reward, so a reward that wrongly equates two answers cannot
hide its own false positive. Then ``math_equivalence`` is audited on rows whose golds carry the notations of
issue #31 (degrees, decimals, base subscripts, repeating decimals, money): no attack may pay, every control must.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardsmith.hackaudit.attacks import select_attacks
from rewardsmith.hackaudit.attacks.answers import same_answer
from rewardsmith.hackaudit.attacks.base import AttackContext, numeric
from rewardsmith.hackaudit.runner import load_raw_spec, plan, run_reward_audit
from rewardsmith.hackaudit.spec_kinds import profile_spec

SAMPLES = Path(__file__).resolve().parents[2] / "rewardsmith" / "samples"
MATH_SPEC = SAMPLES / "hack_math_spec.yaml"
ISSUE = "issue #31"

#: (stated, gold, same?, source). "Same" errs towards dropping: a bare number takes the gold's unit.
SAME_ANSWER = [
    (r"\infty", r"\infty", True, f"{ISSUE} item 4: math_giant_malformed for a gold \\infty"),
    (r"\infty", r"-\infty", False, "opposite infinities"),
    (r"\frac{1}{0}", r"\infty", False, "division by zero is undefined, not infinity"),
    ("9" * 400, "9" * 400, True, "math_giant_malformed's 400 digits as a gold"),
    ("10^{10^{10}}", "10^{10^{10}}", True, "math_giant_malformed's tower as a gold"),
    ("0x", "0", True, "math_appended_letter on a gold 0: zero times x is zero"),
    ("5x", "5", False, "math_appended_letter: 5x is not 5"),
    ("1", "1_2", True, f"{ISSUE}: base subscripts carry the value; 1 in base 2 is 1"),
    ("38", "212_4", True, "212 in base 4 is 38"),
    ("123_5", "123_4", False, f"{ISSUE} item 1: \\boxed{{123_5}} was paid for 123_4"),
    ("10_8", "10", False, f"{ISSUE} item 1: \\boxed{{10_8}} was paid for 10"),
    ("1011_{10}", "1011_2", False, f"{ISSUE} item 1"),
    ("0", r"0.\overline{12}", False, f"{ISSUE} item 1: 0.\\overline{{12}} was read as 0"),
    (r"\frac{4}{33}", r"0.\overline{12}", True, f"{ISSUE} item 1: 4/33 is 0.1212..."),
    (r"\frac{1}{3}", r"0.\overline{3}", True, "1/3 is 0.333..."),
    ("1", r"0.\overline{9}", True, f"{ISSUE} item 2: 0.999... is 1"),
    (r"\frac{5}{6}", r"0.8\overline{3}", True, "5/6 is 0.8333..."),
    ("0", r"0^\circ", True, "zero degrees is zero"),
    ("0", r"90^\circ", False, f"{ISSUE} item 1: a hedge of 0 and 90^\\circ was paid for 90^\\circ"),
    ("90", r"90^{\circ}", True, "a bare number in the gold's unit"),
    (r"90^\circ", r"\frac{\pi}{2}", False, "not read here: degrees against radians is the reward's rule"),
    (r"\$5", r"5\text{ cents}", False, f"{ISSUE} item 1: $5 and 5 cents were equal both ways"),
    (r"5\text{ cents}", r"\$5", False, f"{ISSUE} item 1"),
    (r"\$0.05", r"5\text{ cents}", True, "five cents in dollars"),
    ("0", r"\$0", True, "zero dollars"),
    ("2", r"\$10", False, "a fallback constant against a money gold"),
    ("1,000", "1000", True, "thousands separators"),
    ("1,2", "12", False, "a list is not a number with a separator"),
    (r"\dfrac{1}{2}", "0.5", True, "notation"),
    (r"$\left( 1,\ 2 \right)$", "(1,2)", True, "delimiters and spacing commands"),
    ("-3.-3.-3", "-3", False, "math_giant_malformed's repeated gold"),
]


@pytest.mark.parametrize(
    ("stated", "gold", "same", "source"), SAME_ANSWER, ids=[f"{s}|{g}" for s, g, *_ in SAME_ANSWER]
)
def test_the_attackers_reading_of_a_stated_answer(stated, gold, same, source):
    assert same_answer(stated, gold) is same, source


@pytest.mark.parametrize(
    ("gold", "value"),
    [("212_4", 38), (r"0.\overline{3}", "1/3"), ("1,000", 1000), ("1_000", None), (r"90^\circ", None), ("x", None)],
)
def test_neighbours_are_taken_from_the_golds_value(gold, value):
    """``Fraction("212_4")`` is 2124 (Python's digit separator): the neighbours of a base-n gold were meaningless."""
    from fractions import Fraction

    assert numeric(gold) == (None if value is None else Fraction(value))


@pytest.mark.parametrize("gold", ["1_2", r"0^\circ", r"\$0", "0", "1", r"0.\overline{9}", r"1^\circ", "2_3"])
def test_wrong_values_are_never_the_gold(gold):
    ctx = AttackContext(row={}, prompt="", profile=profile_spec({"rewards": ["math_equivalence"]}), gold=gold)
    wrong = ctx.wrong_values(2)
    assert len(wrong) == 2 and not any(same_answer(w, gold) for w in wrong), wrong


def _planned(rows: list[dict]):
    raw = load_raw_spec(MATH_SPEC)
    profile = profile_spec(raw)
    return plan(rows, select_attacks("math", profile.kinds), profile, "digest")


def test_an_attack_that_states_the_gold_is_dropped_and_counted():
    rows = [
        {"prompt": "What is the limit of 1/x^2 as x -> 0?", "solution": r"\infty"},
        {"prompt": "What is 1 - 1?", "solution": "0"},
        {"prompt": "Write 1 in base 2.", "solution": "1_2"},
    ]
    planned = _planned(rows)
    assert planned.dropped_right == {"math_giant_malformed": 1, "math_appended_letter": 4, "math_echo_numbers": 3}
    giant = [p.completion for p in planned.completions if p.attack == "math_giant_malformed" and p.row == 0]
    assert len(giant) == 6 and not any(r"\boxed{\infty}" in c for c in giant)
    assert not any(p.attack == "math_appended_letter" and p.row == 1 for p in planned.completions)


#: Golds in the notations that carry the value (issue #31 item 1), one row each, with prompts that hold numbers so
#: that math_echo_numbers applies. Source: the classes of issue #31 and their siblings.
UNIT_ROWS = r"""
{"prompt": "Find the angle opposite the hypotenuse of a right triangle.", "solution": "90^\\circ"}
{"prompt": "What is the smallest positive angle with sine 1/2?", "solution": "30^\\circ"}
{"prompt": "What angle does a straight line make?", "solution": "180^{\\circ}"}
{"prompt": "Solve 2x = 1.", "solution": "0.5"}
{"prompt": "Compute 0.1 + 0.15.", "solution": "0.25"}
{"prompt": "Write the decimal number 38 in base 4.", "solution": "212_4"}
{"prompt": "Write 10 in base 8.", "solution": "12_8"}
{"prompt": "Convert 11 to base 2.", "solution": "1011_2"}
{"prompt": "Write 4/33 as a decimal.", "solution": "0.\\overline{12}"}
{"prompt": "Write 1/3 as a decimal.", "solution": "0.\\overline{3}"}
{"prompt": "Write 5/6 as a decimal.", "solution": "0.8\\overline{3}"}
{"prompt": "A pen costs 5 dollars. How much do 2 pens cost?", "solution": "\\$10"}
{"prompt": "Three items cost 1.25 dollars each. What is the total?", "solution": "\\$3.75"}
{"prompt": "How many cents is a nickel worth?", "solution": "5\\text{ cents}"}
"""


def test_math_equivalence_pays_no_attack_on_golds_with_units_bases_and_repeating_decimals(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(UNIT_ROWS.strip() + "\n")
    outcome = run_reward_audit(MATH_SPEC, rows, tmp_path / "run")
    m = outcome.metrics
    n_rows = len(UNIT_ROWS.strip().splitlines())
    assert m["controls"]["scored_correct"] == m["controls"]["n"] == n_rows and not m["controls_failing"]
    applicable = {name: a for name, a in m["attacks"].items() if a.get("n")}
    assert set(applicable) == {a.name for a in select_attacks("math", ["math"])}
    paid = {name: a["scored_correct"] for name, a in applicable.items() if a["scored_correct"]}
    examples = [json.loads(line) for line in outcome.paths["examples"].read_text().splitlines()]
    assert not paid, [e for e in examples if e["scored_correct"]]
    assert outcome.flagged == []
    # the echoed prompt numbers that are the gold in another base are right answers: dropped, counted, reported
    assert m["run"]["dropped_right"] == {"math_echo_numbers": 9}
    assert m["attacks"]["math_echo_numbers"]["dropped_right"] == 9
    assert "9 attack variants stated the row's gold" in outcome.paths["summary"].read_text()
