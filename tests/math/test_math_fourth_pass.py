r"""Verdict tables for the fourth pass of ``math_equivalence``: notation that carries the value (repeating decimals,
base subscripts, units that scale or change it, degrees against radians), hedges hidden in wrappers and
disjunctions, answers as models write them (bold, alone on the last line, a closing statement), and answers whose
own size, depth or cost makes checking impossible (0.0 with a reason, never an unscorable escape).

Every row is (gold, completion, expected score, source). "issue: …" rows are the reported cases; "sibling: …" rows
are the rest of their class. A false positive is the one error RL exploits, so each class is there with its
correct twin.
"""

from __future__ import annotations

import pytest

from rewardsmith.hackaudit.attacks import select_attacks
from rewardsmith.hackaudit.attacks.base import AttackContext
from rewardsmith.hackaudit.spec_kinds import SpecProfile
from rewardsmith.rewards.math.extract import Extraction
from rewardsmith.rewards.math.reward import MathEquivalence
from rewardsmith.rewards.math.verdict import Verdict
from tests.support.verdict_ids import case_id

REPEATING_DECIMALS = [
    (r"0.\overline{12}", r"\boxed{0}", 0.0, "issue: repeating decimals"),
    (r"0.\overline{3}", r"\boxed{0}", 0.0, "issue: repeating decimals"),
    (r"0.\overline{12}", r"\boxed{\frac{4}{33}}", 1.0, "issue: repeating decimals"),
    (r"0.\overline{12}", r"\boxed{0.12}", 0.0, "sibling: a repeating decimal is not its written digits"),
    (r"0.\overline{3}", r"\boxed{0.3}", 0.0, "sibling: a repeating decimal is not its written digits"),
    (r"0.\overline{3}", r"\boxed{\frac13}", 1.0, "sibling: the exact value"),
    (r"0.1\overline{6}", r"\boxed{\frac{1}{6}}", 1.0, "sibling: digits before the bar"),
    (r"1.\overline{3}", r"\boxed{1}", 0.0, "sibling: a whole part before the point"),
    (r"\frac{4}{33}", r"\boxed{0.\overline{12}}", 1.0, "sibling: the notation in the answer"),
    (r"\frac{4}{33}", r"\boxed{0.\overline{21}}", 0.0, "sibling: the notation in the answer"),
    (r"\frac{1}{3}", r"\boxed{0.\dot{3}}", 1.0, "sibling: dot notation"),
    (r"\frac{1}{3}", r"\boxed{0.\bar{3}}", 1.0, "sibling: \\bar notation"),
    ("1", r"\boxed{0.\overline{9}}", 1.0, "issue: false negatives"),
]

BASE_SUBSCRIPTS = [
    ("123_4", r"\boxed{123_5}", 0.0, "issue: base subscripts"),
    ("10", r"\boxed{10_8}", 0.0, "issue: base subscripts"),
    ("1011_2", r"\boxed{1011_{10}}", 0.0, "issue: base subscripts"),
    ("123_4", r"\boxed{123_{4}}", 1.0, "sibling: the same numeral"),
    ("123_4", r"\boxed{123}", 1.0, "sibling: MATH writes the answer in the asked base without its subscript"),
    ("123_4", r"\boxed{27}", 0.0, "sibling: the value in base ten is not the numeral asked for"),
    ("123_4", r"\boxed{\frac{246}{2}}", 0.0, "sibling: only a written numeral is read in the gold's base"),
    ("8", r"\boxed{10_8}", 0.0, "sibling: the question's own numeral copied back"),
    ("10", r"\boxed{10_{10}}", 1.0, "sibling: base ten written out"),
    ("129", r"\boxed{129_4}", 0.0, "sibling: a digit the base does not have"),
    ("1011_2", r"\boxed{1011_{(2)}}", 1.0, "sibling: the base in parentheses"),
    ("1011_2", r"\boxed{101_2}", 0.0, "sibling: a different numeral in the same base"),
]

UNITS = [
    (r"\$5", r"\boxed{5\text{ cents}}", 0.0, "issue: units that change the value"),
    (r"5\text{ cents}", r"\boxed{\$5}", 0.0, "issue: units that change the value"),
    (r"\$5", r"\boxed{5}", 1.0, "sibling: MATH's bare number for a money gold"),
    (r"\$5", r"\boxed{5 \text{ dollars}}", 1.0, "sibling: the same currency in words"),
    (r"5\text{ cents}", r"\boxed{5¢}", 1.0, "sibling: the cent sign"),
    ("€5", r"\boxed{\$5}", 0.0, "sibling: two currencies"),
    ("5", r"\boxed{5\text{ million}}", 0.0, "sibling: a multiplier word is part of the value"),
    ("5000000", r"\boxed{5\text{ million}}", 1.0, "sibling: a multiplier word is part of the value"),
    ("60", r"\boxed{5 \text{ dozen}}", 1.0, "sibling: a multiplier word is part of the value"),
    (r"30^\circ", r"\boxed{30\text{ rad}}", 0.0, "sibling: degrees and radians are different units"),
    (r"5\text{ cents}", r"\boxed{5\text{ cents}x}", 0.0, "sibling: a letter glued after a unit (hack audit)"),
]

HEDGES = [
    (r"90^\circ", r"\boxed{\text{either 0 or 90^\circ}}", 0.0, "issue: hedges inside wrappers"),
    (r"90^\circ", r"\boxed{\texttt{0, 90^\circ}}", 0.0, "issue: hedges inside wrappers"),
    ("0.5", r"\boxed{0.5 \lor \frac{3}{2}}", 0.0, "issue: disjunctions"),
    ("0.5", r"\boxed{\text{either \frac{3}{2} or 0.5}}", 0.0, "issue: hedges inside wrappers"),
    (r"90^\circ", r"\boxed{\text{90^\circ}}", 1.0, "sibling: a wrapper around the right answer alone"),
    ("0.5", r"\boxed{\texttt{\frac{3}{2}, 0.5}}", 0.0, "sibling: nested braces in a wrapper (hack audit)"),
    (r"90^\circ", r"\boxed{90^\circ \text{ (or } 0^\circ)}", 0.0, "sibling: a parenthesised alternative"),
    (r"90^\circ", r"\boxed{0 \mid 90}", 0.0, "sibling: math-verify reads one side of a bar"),
    (r"90^\circ", r"\boxed{0 | 90}", 0.0, "sibling: math-verify reads one side of a bar"),
    ("0.5", r"\boxed{0.5 \vee 1.5}", 0.0, "sibling: disjunctions"),
    ("0.5", r"\boxed{\textbf{0.5 or 1.5}}", 0.0, "sibling: hedges inside wrappers"),
    (r"90^\circ", r"\boxed{\mathrm{possibly}\ 90^\circ}", 0.0, "sibling: a hedge word"),
    ("0.5", r"\boxed{0 \text{ to } 0.5}", 0.0, "sibling: a range for one value"),
    ("1, 2", r"\boxed{1 \lor 2}", 1.0, "sibling: a disjunction of every solution lists them, as 'or' does"),
]

ANGLES = [
    (r"\frac{\pi}{6}", r"\boxed{30^\circ}", 1.0, "issue: degrees vs radians"),
    (r"\frac{\sqrt3}{2}", r"\boxed{\sin 60^\circ}", 1.0, "issue: degrees vs radians"),
    (r"30^\circ", r"\boxed{\frac{\pi}{6}}", 1.0, "sibling: degrees vs radians, the other way"),
    (r"\frac{1}{2}", r"\boxed{\cos(60^\circ)}", 1.0, "sibling: a trig function of degrees"),
    (r"\frac{\pi}{6}", r"\boxed{60^\circ}", 0.0, "sibling: degrees vs radians, a wrong angle"),
    (r"\frac{\pi}{6}", r"\boxed{30}", 0.0, "rule: a number without a degree mark is not in degrees"),
    ("30", r"\boxed{\frac{\pi}{6}}", 0.0, "rule: a number without a degree mark is not in degrees"),
    (r"90^\circ", r"\boxed{90}", 1.0, "rule: MATH's bare number for a degree gold"),
]

COMPLEX = [
    ("-1", r"\boxed{i^2}", 1.0, "issue: false negatives"),
    ("-1", r"\boxed{e^{i\pi}}", 1.0, "issue: false negatives"),
    ("1+i", r"\boxed{\sqrt2 e^{i\pi/4}}", 1.0, "issue: false negatives"),
    ("1-i", r"\boxed{\sqrt2 e^{i\pi/4}}", 0.0, "sibling: the conjugate"),
    ("1", r"\boxed{i^2}", 0.0, "sibling: i is the imaginary unit, not a variable"),
]

EXTRACTION = [
    ("Choice (A).", "My answer is (A).", 1.0, "issue: a multiple-choice gold with a label"),
    ("Choice (A).", "My answer is (B).", 0.0, "issue: a multiple-choice gold with a label"),
    ("3", "The result is $3$.", 1.0, "issue: a closing statement with no answer phrase"),
    ("3", "The result is not $3$.", 0.0, "sibling: a negated closing statement"),
    ("4", "The result is about 4.", 0.0, "sibling: a hedged closing statement"),
    ("4", "Thus the sum is **4**.", 1.0, "sibling: a closing statement in bold"),
    ("5", "<answer>3</answer> Wait, that is wrong.\n<answer>5</answer>", 1.0, "issue: two <answer> blocks"),
    ("3", "<answer>3</answer> Wait, that is wrong.\n<answer>5</answer>", 0.0, "issue: two <answer> blocks"),
    ("4", "Two and two make four.\n\n**4**", 1.0, "issue: markdown bold on the last line"),
    ("4", "We add them.\n2+2=4\n4", 1.0, "issue: alone on the last line"),
    ("4", "It is 3 or 4.\n**3 or 4**", 0.0, "sibling: a hedge on the last line"),
    ("4", "Answer:\n\\[\n4\n\\]", 1.0, "sibling: a display after an answer phrase"),
]

#: Answers whose own size or depth makes checking impossible: 0.0 with a reason, decided without sympy.
TOO_BIG = [
    ("5", r"\boxed{99999999999!}", 0.0, "issue 30: a factorial too large to evaluate"),
    ("120", r"\boxed{5!}", 1.0, "sibling: a small factorial is exact"),
    ("5", r"\boxed{10^{10^{10}}}", 0.0, "issue 30: a tower settled by size"),
    ("5", r"\boxed{" + "(x+" * 60 + "1" + ")" * 60 + "}", 0.0, "issue 30: a value nested too deep"),
    ("7", r"\boxed{" + "(" * 500 + "7" + ")" * 500 + "}", 1.0, "sibling: brackets around all of it, however deep"),
    ("5", r"\boxed{0." + "1" * 3000 + "}", 0.0, "issue 30: a number too long"),
    ("5", r"\boxed{" + "9" * 20000 + "}", 0.0, "issue 30: an integer too long for int()"),
]

TABLE = REPEATING_DECIMALS + BASE_SUBSCRIPTS + UNITS + HEDGES + ANGLES + COMPLEX + EXTRACTION + TOO_BIG


@pytest.fixture(scope="module")
def reward():
    reward = MathEquivalence(workers=1, timeout_s=10)  # one row at a time: one worker (and its spare) is enough
    reward.pool.warm_up()
    yield reward
    reward.close()


@pytest.mark.parametrize("case", TABLE, ids=[case_id(c[:3]) for c in TABLE])
def test_verdict(reward, case):
    gold, completion, expected, _source = case
    (result,) = reward.details([completion], solution=[gold])
    assert result.score == expected, result.reason


def test_reasons_name_the_rule(reward):
    base, units, nested, factorial = reward.details(
        [
            r"\boxed{123_5}",
            r"\boxed{5\text{ cents}}",
            r"\boxed{" + "(x+" * 60 + "1" + ")" * 60 + "}",
            r"\boxed{123456789!}",
        ],
        solution=["123_4", r"\$5", "5", "5"],
    )
    assert "numerals in a base" in base.reason
    assert "different units: cents vs dollars" in units.reason
    assert "nests brackets 59 deep" in nested.reason  # the outermost pair holds all of it
    assert factorial.score == 0.0 and "not evaluated" in factorial.reason, factorial.reason


SPECIAL_GOLDS = [r"90^\circ", "0.5", "2.25", "123_4", "1011_2", r"0.\overline{3}", r"\$5", r"5\text{ cents}"]


@pytest.mark.parametrize("answer_tag", [None, "answer"])
def test_the_hack_audit_pays_no_attack_on_degree_decimal_base_repeating_and_money_golds(reward, answer_tag):
    profile = SpecProfile(kinds=["math"], reward_names=["math_equivalence"], answer_tag=answer_tag)
    paid = []
    for gold in SPECIAL_GOLDS:
        context = AttackContext(row={"solution": gold}, prompt="Compute 3 and 7.", profile=profile, gold=gold)
        for attack in select_attacks("all", ["math"]):
            completions = attack.generate(context)
            results = reward.details(completions, solution=[gold] * len(completions)) if completions else []
            paid += [(gold, c, r.reason) for c, r in zip(completions, results, strict=True) if r.score == 1.0]
    assert paid == []


# -- escapes to None (issue 30, class 5): an overrun the answer causes is its 0.0; one the gold causes is None -----
TIMEOUT_S = 1.5


@pytest.fixture(scope="module")
def quick():
    reward = MathEquivalence(workers=1, timeout_s=TIMEOUT_S)
    reward.pool.warm_up()
    yield reward
    reward.close()


def test_an_answer_that_makes_sympy_overrun_scores_zero(quick):
    (result,) = quick.details([r"\boxed{99999999999! - 1}"], solution=["5"])
    assert result.score == 0.0, result.reason
    assert "exceeded" in result.reason and "the answer's own size or cost is to blame" in result.reason


def test_an_answer_that_overruns_against_an_expression_gold_scores_zero(quick):
    # The gold needs sympy itself, so it is read alone first: it is read within budget, so the answer is to blame.
    (result,) = quick.details([r"\boxed{x^{2} - 10^{10^{10}}}"], solution=["x^2-1"])
    assert result.score == 0.0, result.reason
    assert "to blame" in result.reason


def test_a_gold_that_cannot_be_read_in_budget_leaves_the_sample_unscorable(quick):
    (result,) = quick.details([r"\boxed{5}"], solution=[r"10^{10^{10}} - 1"])
    assert result.score is None, result.reason
    assert "the gold is to blame" in result.reason


def test_timeout_score_sets_what_an_overrun_the_answer_caused_scores():
    blamed = Verdict(None, "timeout: symbolic comparison exceeded 1.5 s", True, failed=True, answer_to_blame=True)
    gold_failed = Verdict(None, "timeout: symbolic comparison exceeded 1.5 s", True, failed=True)
    gold, answer = Extraction("5", "raw"), Extraction("10^{10^{10}} + 3", "last \\boxed")
    for timeout_score, shown in ((0.0, "0"), (None, "None"), (-1.0, "-1")):
        reward = MathEquivalence(timeout_score=timeout_score)  # no comparison runs: no worker starts
        result = reward._result(gold, answer, blamed)
        assert result.score == timeout_score and f"(scored timeout_score={shown})" in result.reason, result.reason
        assert reward._result(gold, answer, gold_failed).score is None  # the gold's overrun: never scored
