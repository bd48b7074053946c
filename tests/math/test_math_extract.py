"""Extraction verdict tables: what ``math_equivalence`` reads as the answer and as the gold."""

from __future__ import annotations

import time

import pytest

from rewardsmith.rewards.math.extract import boxed_contents, extract_answer, extract_gold, strip_math_delimiters

ANSWERS = [
    # (completion, expected text, expected method)
    (r"so \boxed{7}.", "7", "last \\boxed"),
    (r"$\boxed{\frac{1}{2}}$", r"\frac{1}{2}", "last \\boxed"),
    (r"\fbox{12}", "12", "last \\boxed"),
    (r"\boxed 5.", "5", "last \\boxed"),
    (r"\boxed{\{1, 2\}}", r"\{1, 2\}", "last \\boxed"),
    (r"\boxed{f(x)=\begin{cases}1\\2\end{cases}}", r"f(x)=\begin{cases}1\\2\end{cases}", "last \\boxed"),
    (r"Answer \boxed{7}. Check: \boxed{1}", "1", "last \\boxed"),
    (r"\boxed{\boxed{\boxed{3}}}", "3", "last \\boxed"),
    (r"\boxed{$4$}", "4", "last \\boxed"),
    ("The final answer is 7.", "7", "anchor phrase"),
    ("The answer is 3.5.", "3.5", "anchor phrase"),
    ("Final answer: $x = 2$", "x = 2", "anchor phrase"),
    ("**Answer:** 12", "12", "anchor phrase"),
    ("**Final Answer**\n\n$\\frac{3}{4}$", r"\frac{3}{4}", "anchor phrase"),
    ("blah\n#### 1,234", "1,234", "anchor phrase"),
    ("The answer is (B) because B fits.", "(B)", "anchor phrase"),
    ("The answer is 8. Wait, the answer is 9.", "9", "anchor phrase"),
    ("The answer is \\(\\sqrt{2}\\)", r"\sqrt{2}", "anchor phrase"),
    ("The answer is \\boxed{7", "7", "anchor phrase"),
    ("<think>the answer is 3</think>The answer is 4", "4", "anchor phrase"),
    ("<think>\\boxed{3}</think>no answer here", None, "none"),
    ("<think>still thinking \\boxed{3}", None, "none"),
    ("I computed 12 then 15", None, "none"),
    ("", None, "none"),
    (r"\boxed{}", None, "none"),
]


@pytest.mark.parametrize(("completion", "text", "method"), ANSWERS)
def test_extract_answer(completion, text, method):
    extraction = extract_answer(completion)
    assert extraction.text == text
    assert extraction.method == method


def test_first_box_and_last_number_are_options():
    assert extract_answer(r"\boxed{7} then \boxed{1}", boxed="first").text == "7"
    assert extract_answer("I computed 12 then 15", fallback_last_number=True).text == "15"
    assert extract_answer("it is -1,500 dollars", fallback_last_number=True).text == "-1,500"
    assert extract_answer(r"<think>x</think> \boxed{2}", reasoning_end=None).text == "2"
    assert extract_answer(r"<think>\boxed{1}", reasoning_end=None).text == "1"


GOLDS = [
    # (dataset cell, expected text, expected method)
    ("2^{3}", "2^{3}", "raw"),
    ("y=2x+1", "y=2x+1", "raw"),
    ("(0, 3]", "(0, 3]", "raw"),
    ("$\\frac{1}{2}$", r"\frac{1}{2}", "math delimiters"),
    ("$$x^2$$", "x^2", "math delimiters"),
    (r"\boxed{10}", "10", "last \\boxed"),
    ("Adding gives $3+4=\\boxed{7}$.", "7", "last \\boxed"),
    ("Natalia sold 48/2 = 24 clips.\n#### 72", "72", "#### line"),
    ("#### $1,000", "$1,000", "#### line"),  # currency is the grader's job
    ("B", "B", "raw"),
    ("The answer is 5", "5", "anchor phrase"),
    (72, "72", "number"),
    (0.25, "0.25", "number"),
    (None, None, "none"),
    ("", None, "none"),
    (True, None, "none"),
    ({"a": 1}, None, "none"),
    (float("inf"), None, "none"),
]


@pytest.mark.parametrize(("raw", "text", "method"), GOLDS)
def test_extract_gold(raw, text, method):
    extraction = extract_gold(raw)
    assert extraction.text == text
    assert extraction.method == method


def test_boxed_contents_handles_escapes_and_unclosed_boxes():
    assert boxed_contents(r"\boxed{\{1\}} and \boxed{2}") == [r"\{1\}", "2"]
    assert boxed_contents(r"\boxed{1} \boxed{2") == ["1"]
    assert boxed_contents(r"\boxedfoo{1}") == []


def test_strip_math_delimiters():
    assert strip_math_delimiters("$$ x $$") == "x"
    assert strip_math_delimiters(r"\[\frac12\]") == r"\frac12"
    assert strip_math_delimiters("$5") == "$5"


@pytest.mark.parametrize(
    "completion",
    [
        "word " * 200_000 + r"\boxed{7}",
        r"\boxed{" * 20_000 + "7" + "}" * 20_000,
        "{" * 100_000 + r"\boxed{7",
        "The answer is " * 50_000,
        "1," * 300_000,
    ],
    ids=["megabyte", "deep-boxes", "unbalanced", "many-anchors", "many-numbers"],
)
def test_extraction_is_linear_on_hostile_input(completion):
    start = time.monotonic()
    extract_answer(completion, fallback_last_number=True)
    assert time.monotonic() - start < 2.0
