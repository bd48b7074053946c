r"""Verdict tables for the third pass: no side may lose a symbol, units only where written as units, and
the formats trainers use every day (``<answer>`` tags, number words, MATH's ``\fracabc``, bare equations).

The rules pinned here (also in ``normalize.clean_latex_with_unit`` and the README's math section):

- A lone letter is a variable, never a unit: ``2s`` is twice ``s``, ``3t`` three times ``t``, ``5 m`` five
  times ``m``, and none of them equals ``2``, ``3``, ``5``.
- A unit is what is written as one: ``\text{…}``/``\mathrm{…}``/``\mbox{…}`` after a value, or a word of two
  letters or more after a number (``5 cm``, ``12 apples``). A lone letter after a number is that unit only
  where the other side writes the same unit as a unit (``5 m`` against ``5\text{ m}``).
"""

from __future__ import annotations

import pytest

from rewardsmith.rewards.math.reward import MathEquivalence
from rewardsmith.rewards.math.symbolic import lost_letters, symbolic_verdict

B = r"\boxed"

LOST_SYMBOLS = [  # found by probes: each scored 1.0 before this pass
    ("x+2t", rf"{B}{{x+2}}", 0.0),
    (r"6 \cdot d", rf"{B}{{6}}", 0.0),
    (r"4\pi d", rf"{B}{{4\pi}}", 0.0),
    (r"\frac{a}{b}", rf"{B}{{\frac{{a}}{{b}}c}}", 0.0),
    ("a", rf"{B}{{a c}}", 0.0),
    ("x+2", rf"{B}{{x+2t}}", 0.0),
    ("6", rf"{B}{{6d}}", 0.0),
    ("a c", rf"{B}{{a}}", 0.0),
    ("ac", rf"{B}{{a}}", 0.0),
    ("12", rf"{B}{{12x}}", 0.0),
    ("12", rf"{B}{{12\,x}}", 0.0),
    ("12", rf"{B}{{12 \cdot x}}", 0.0),
    ("x+2t", rf"{B}{{2t+x}}", 1.0),
    (r"6 \cdot d", rf"{B}{{6d}}", 1.0),
    (r"\frac{a}{b}c", rf"{B}{{\frac{{ac}}{{b}}}}", 1.0),
]

LONE_LETTERS = [  # the written rule: a lone letter is a variable
    ("2s", rf"{B}{{2}}", 0.0),
    ("3t", rf"{B}{{3}}", 0.0),
    ("2", rf"{B}{{2s}}", 0.0),
    ("3", rf"{B}{{3 t}}", 0.0),
    ("5", rf"{B}{{5 m}}", 0.0),
    ("2s", rf"{B}{{2s}}", 1.0),
    ("3t", rf"{B}{{3 t}}", 1.0),
]

UNITS = [  # units written as units are stripped; a lone letter only where the other side agrees
    ("5", rf"{B}{{5\text{{ cm}}}}", 1.0),
    ("5", rf"{B}{{5 \mathrm{{m}}}}", 1.0),
    ("5", rf"{B}{{5 cm}}", 1.0),
    ("5", rf"{B}{{5 meters}}", 1.0),
    ("5", rf"{B}{{5\textnormal{{ kg}}}}", 1.0),
    (r"5\text{ m}", rf"{B}{{5 m}}", 1.0),
    ("5 m", rf"{B}{{5\text{{ m}}}}", 1.0),
    (r"5\text{ m}", rf"{B}{{5 s}}", 0.0),
    (r"5\text{ m}", rf"{B}{{6 m}}", 0.0),
    (r"5\text{ cm}", rf"{B}{{6\text{{ cm}}}}", 0.0),
    (r"5\text{ m}", rf"{B}{{5\text{{ cm}}}}", 0.0),  # both are units, and they differ
    ("5 meters", rf"{B}{{5 cm}}", 0.0),
    ("5 meters", rf"{B}{{5\text{{ m}}}}", 1.0),
    (r"5\text{ cm}", rf"{B}{{5 centimeters}}", 1.0),
    ("3", rf"{B}{{3 \mathrm{{e}}}}", 0.0),  # \mathrm{e} is Euler's number, not a unit
    (r"5\text{ m}^2", rf"{B}{{5\text{{ m}}}}", 0.0),  # an area is not a length
    (r"5\text{ m}^2", rf"{B}{{5 m^2}}", 1.0),
    (r"5\text{ m}^2", rf"{B}{{5 m}}", 0.0),
    ("5 square meters", rf"{B}{{5\text{{ m}}^2}}", 1.0),
    ("5", rf"{B}{{5 ab}}", 0.0),  # a short run of letters is a product, not a unit word
    ("5", rf"{B}{{5 abc}}", 0.0),
    ("5", rf"{B}{{5 hrs}}", 1.0),
    ("12", rf"{B}{{12 cups}}", 1.0),
]

HEDGES = [  # an answer that hedges is not the gold
    ("5", rf"{B}{{5 \text{{ or }} 6}}", 0.0),
    ("5", rf"{B}{{5 \pm 1}}", 0.0),
    ("5", rf"{B}{{5 \text{{ or more}}}}", 0.0),
    ("5", rf"{B}{{\text{{at least }} 5}}", 0.0),
    ("5", rf"{B}{{4, 5}}", 0.0),
    ("5", rf"{B}{{5x}}", 0.0),
    ("3", rf"{B}{{3?}}", 0.0),
    ("3", rf"{B}{{\approx 3}}", 0.0),
    ("3", rf"{B}{{\neq 3}}", 0.0),
    ("3", rf"{B}{{3'}}", 0.0),
    ("A", rf"{B}{{(A) or (B)}}", 0.0),
    ("A", rf"{B}{{(A) \text{{ or }} (B)}}", 0.0),
    ("2", rf"{B}{{2 \text{{ (approx.)}}}}", 0.0),
    ("7", rf"The answer is {B}{{7}}? No, it is 8.", 0.0),
    ("7", "<answer>7?</answer>", 0.0),
    ("7", "The answer is not 7", 0.0),
    ("7", "The answer is 7 or maybe 8.", 0.0),
    ("7", "<answer>It is not 7, sorry</answer>", 0.0),
    ("7", "The answer is that it is not 7.", 0.0),
    ("7", "The answer is that Jane planted 7 trees.", 1.0),
    (r"\approx 3", rf"{B}{{\approx 3}}", 1.0),
    ("-3", rf"{B}{{-3.-3.-3}}", 0.0),  # a malformed number: math-verify reads only its first part
    ("3", rf"{B}{{3.3.3}}", 0.0),
    ("3", rf"{B}{{3.}}", 1.0),
    ("4", rf"{B}{{\texttt{{5, 4}}}}", 0.0),  # a hedge hidden in a wrapper (the reward audit's math_wrapped)
    ("4", rf"{B}{{\text{{either 5 or 4}}}}", 0.0),
    ("4", rf"{B}{{\texttt{{4}}}}", 1.0),
]

SHORTHAND = [
    (r"\frac{a}{b}c", rf"{B}{{\fracabc}}", 1.0),
    (r"\frac{a}{b}", rf"{B}{{\fracabc}}", 0.0),
    ("0.5", rf"{B}{{\frac12}}", 1.0),
    (r"\frac{1}{2}", rf"{B}{{\frac12}}", 1.0),
    (r"\frac{x}{2}", rf"{B}{{\frac x2}}", 1.0),
]

NUMBER_WORDS = [
    ("forty two", rf"{B}{{42}}", 1.0),
    ("42", rf"{B}{{forty-two}}", 1.0),
    ("42", rf"{B}{{\text{{forty-two}}}}", 1.0),
    ("42", rf"{B}{{forty three}}", 0.0),
    ("42", rf"{B}{{four two}}", 0.0),
    ("1000", rf"{B}{{one thousand}}", 1.0),
    ("105", rf"{B}{{one hundred and five}}", 1.0),
    ("-5", rf"{B}{{minus five}}", 1.0),
    ("none", rf"{B}{{0}}", 0.0),
    ("10", rf"{B}{{t e n}}", 0.0),  # letters with spaces are a product, not a word
    ("1", rf"{B}{{o n e}}", 0.0),
    ("10", rf"{B}{{ten}}", 1.0),
]

ANSWER_TAGS = [
    ("42", "<think>maybe 41</think><answer>42</answer>", 1.0),
    ("42", "<think>maybe 42</think><answer>41</answer>", 0.0),
    ("42", "<answer>41</answer> on reflection <answer>42</answer>", 1.0),
    ("42", "<answer>42</answer> on reflection <answer>41</answer>", 0.0),
    ("42", rf"<answer>So {B}{{42}}.</answer>", 1.0),
    ("42", "<answer>The answer is 42.</answer>", 1.0),
    ("42", "<answer>I think it is 42</answer>", 1.0),
    ("42", "<answer>x = 42</answer>", 1.0),
    ("42", "<answer>42x</answer>", 0.0),
    ("42", "<answer>42", 0.0),  # unclosed: ignored, and nothing else states an answer
    ("42", rf"<answer>{B}{{42}}", 1.0),  # unclosed tag ignored, its complete box still counts
    ("42", rf"{B}{{41}} <answer>42</answer>", 1.0),
    ("42", "<answer></answer>", 0.0),
    ("42", "<answer>forty-two</answer>", 1.0),
]

BARE_ANSWERS = [  # a completion that is only an equation or arithmetic is its own answer
    ("3", "x = 3", 1.0),
    ("3", "x = 3y", 0.0),
    ("5", "3+2", 1.0),
    ("5", "3 2", 0.0),
    ("2x+2", "2x + 2", 1.0),
    ("3", "The result is $3$", 1.0),  # a closing statement of one value on the last line
    ("3", "The result is not $3$", 0.0),
]

TABLE = LOST_SYMBOLS + LONE_LETTERS + UNITS + HEDGES + SHORTHAND + NUMBER_WORDS + ANSWER_TAGS + BARE_ANSWERS

LAST_NUMBER = [  # with fallback_last_number and fallback_last_math
    ("2", "The ratio is 1/2.", 0.0),
    ("1/2", "The ratio is 1/2.", 1.0),
    ("0.5", "The ratio is 1/2.", 1.0),
    ("2", "We get 2x.", 0.0),
    ("2", r"We get \frac{1}{2}", 0.0),
    ("2", "so it is x^2", 0.0),
    ("3", "the index is a_3", 0.0),
    ("1000", "It costs 1,000 dollars", 1.0),
    ("-3", "The value is -3.", 1.0),
    ("3.5", "about 3.5", 0.0),  # a hedge
    ("3", "The result is $3$", 1.0),
    ("3", "so finally x = 3", 1.0),
    ("7", "It is definitely not 7", 0.0),
    ("7", "It is about 7", 0.0),
]


def _id(case: tuple) -> str:
    return f"{case[0]!r}|{case[1]!r}"[:64]


@pytest.fixture(scope="module")
def reward():
    reward = MathEquivalence(workers=2, timeout_s=10)
    yield reward
    reward.close()


@pytest.fixture(scope="module")
def with_fallbacks():
    reward = MathEquivalence(workers=1, timeout_s=10, fallback_last_number=True, fallback_last_math=True)
    yield reward
    reward.close()


@pytest.mark.parametrize("case", TABLE, ids=[_id(c) for c in TABLE])
def test_verdict(reward, case):
    gold, completion, expected = case
    (result,) = reward.details([completion], solution=[gold])
    assert result.score == expected, result.reason


@pytest.mark.parametrize("case", LAST_NUMBER, ids=[_id(c) for c in LAST_NUMBER])
def test_fallback_verdict(with_fallbacks, case):
    gold, completion, expected = case
    (result,) = with_fallbacks.details([completion], solution=[gold])
    assert result.score == expected, result.reason


@pytest.mark.parametrize("letter", list("cdghlmost"))
def test_no_letter_math_verify_reads_as_a_unit_is_dropped(reward, letter):
    """math-verify's unit list holds these single letters; each is a variable on either side."""
    scores = reward([rf"{B}{{5}}", rf"{B}{{5{letter}}}", rf"{B}{{x+5{letter}}}"], solution=[f"5{letter}", "5", "x+5"])
    assert scores == [0.0, 0.0, 0.0]


def test_a_parse_that_lost_a_written_letter_is_caught():
    """The guard behind the symbolic stage, against math-verify's own unit stripping (its default config)."""
    from math_verify import LatexExtractionConfig, parse

    (stripped, *_) = parse("$x+2t$", extraction_config=[LatexExtractionConfig()])
    assert str(stripped) == "x + 2"  # math-verify read t as a unit
    assert lost_letters("x+2t", stripped) == ["t"]
    (kept, *_) = parse("$x \\approx 11$", extraction_config=[LatexExtractionConfig()])
    assert lost_letters("x \\approx 11", kept) == []  # a relation keeps one side by design


def test_the_symbolic_stage_keeps_lone_letters():
    assert symbolic_verdict("x+2t", "x+2", 6).equal is False
    assert symbolic_verdict(r"\frac{a}{b}", r"\frac{a}{b}c", 6).equal is False
    assert symbolic_verdict("2t+x", "x+2t", 6).equal is True


def test_tags_can_be_switched_off():
    reward = MathEquivalence(symbolic=False, answer_tag=None)
    (result,) = reward.details(["<answer>42</answer>"], solution=["42"])
    assert result.score == 0.0 and "no final answer" in result.reason
    (result,) = MathEquivalence(symbolic=False).details(["<answer>42</answer>"], solution=["42"])
    assert result.score == 1.0 and "<answer>" in result.reason
