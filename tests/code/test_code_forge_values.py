"""Forged equalities the host-side comparisons must refuse (verdict tables: actual, expected, verdict, why).

- ``strict_equal`` (call tests' type-strict comparison): Python's ``==`` says ``{True: 'a'} == {1: 'a'}`` and
  ``{1, 2.0} == {1.0, 2}``; a solution returning the wrong key or member types must fail as it does for values.
- The stdio ``float`` checker: tolerance only for tokens the expected output writes as floats; an integer token
  (a count, an index, a modulus) compares exactly, and nothing ``float()`` reads besides plain decimals
  (``nan``, ``inf``, ``1_0``, non-ASCII digits) is taken for a number.
"""

from __future__ import annotations

import pytest

from rewardsmith.rewards.code.case_formats import CallTest, Checker
from rewardsmith.rewards.code.stdout_match import tokens_match
from rewardsmith.rewards.code.values import call_matches, strict_equal

NAN = float("nan")

STRICT = [
    # (actual, expected, verdict, why)
    ({1: "a"}, {1: "a"}, True, "same keys, same types"),
    ({True: "a"}, {1: "a"}, False, "bool key for an int key (== says equal)"),
    ({1: "a"}, {True: "a"}, False, "int key for a bool key"),
    ({1.0: "x"}, {1: "x"}, False, "float key for an int key"),
    ({(1, True): 0}, {(1, 1): 0}, False, "bool inside a tuple key"),
    ({frozenset({True}): 0}, {frozenset({1}): 0}, False, "bool inside a frozenset key"),
    ({1, 2.0}, {1.0, 2}, False, "mixed set: member types swapped (the type sets agree)"),
    ({1, 2.0}, {1, 2.0}, True, "mixed set, same member types"),
    ({True, 2}, {1, 2}, False, "bool member for an int member"),
    ({frozenset({True})}, {frozenset({1})}, False, "nested frozenset member"),
    ({(1.0, 2)}, {(1, 2)}, False, "float inside a tuple member"),
    ([{True: 1}], [{1: 1}], False, "dict key inside a list"),
    (({1.0},), ({1},), False, "set member inside a tuple"),
    ({"k": {True}}, {"k": {1}}, False, "set member inside a dict value"),
    ({NAN}, {NAN}, True, "nan member: decoded nans are distinct objects, still the same value"),
    ({0.1 + 0.2}, {0.3}, False, "set members are exact (found by hash), unlike float values"),
    ({"a": 0.1 + 0.2}, {"a": 0.3}, True, "dict values keep the float tolerance"),
    ({1: "a", 2: "b"}, {1: "a", 3: "b"}, False, "a different key"),
    ({1: "a"}, {1: "b"}, False, "a different value"),
]


@pytest.mark.parametrize(("actual", "expected", "verdict", "why"), STRICT, ids=[row[3] for row in STRICT])
def test_strict_equal_is_type_strict_in_keys_and_members(actual, expected, verdict, why):
    assert strict_equal(actual, expected) is verdict, why


def test_call_tests_from_literals_refuse_a_bool_keyed_dict():
    test = CallTest((), {1: "a"}, from_json=False)
    assert call_matches({1: "a"}, test)
    assert not call_matches({True: "a"}, test)


FLOAT_CHECKER = [
    # (expected, actual, verdict, why)
    ("1000000000", "1000000000", True, "the same integer"),
    ("1000000000", "1000000999", False, "integer tokens compare exactly (rel_tol 1e-6 would take it)"),
    ("1000000000", "1000000000.0", False, "an integer is printed as an integer"),
    ("1000", "1e3", False, "an integer is printed as an integer, not in exponent form"),
    ("7", "+7", False, "integer with a sign the expected output does not have"),
    ("-3", "-3", True, "negative integer, same text"),
    ("0.5", "0.5000004", True, "a float token within rel_tol"),
    ("0.5", "0.51", False, "a float token outside the tolerances"),
    ("1500.0", "1.5e3", True, "exponent form is a plain decimal for a float token"),
    ("1e-9", "0", True, "a float token written with an exponent, within abs_tol"),
    ("2.", "2.0000001", True, "a trailing point makes a float token"),
    (".25", "0.25", True, "a leading point makes a float token"),
    ("0.5", "+0.5", False, "leading '+': not in the decimal grammar"),
    ("0.5", "nan", False, "nan is not a number here"),
    ("nan", "nan", True, "nan expected: compared as text"),
    ("nan", "NaN", False, "nan expected: compared as text, exactly"),
    ("inf", "1e999", False, "inf expected: compared as text"),
    ("1e308", "1e999", False, "an infinite reading is never close"),
    ("0.5", "0x1p-1", False, "hex float: float() would not read it, nor does the checker"),
    ("10.5", "1_0.5", False, "underscores: float() reads them, the checker does not"),
    ("0.5", "\u0660.5", False, "non-ASCII digits: float() reads them, the checker does not"),
    ("0.5", "0.5f", False, "a suffix"),
    ("YES", "yes", False, "words compare exactly"),
]


@pytest.mark.parametrize(
    ("expected", "actual", "verdict", "why"), FLOAT_CHECKER, ids=[f"{r[0]}-{r[1]}" for r in FLOAT_CHECKER]
)
def test_float_checker_tolerates_only_float_tokens(expected, actual, verdict, why):
    assert tokens_match(actual.encode(), expected, Checker("float")) is verdict, why


def test_float_checker_mixed_line_counts_exactly_and_measures_loosely():
    """A typical mixed answer: a count, then a distance. The count must be exact, the distance close."""
    checker = Checker("float")
    assert tokens_match(b"3\n2.0000001\n", "3\n2.000000\n", checker)
    assert not tokens_match(b"3.0000001\n2.0\n", "3\n2.000000\n", checker)
