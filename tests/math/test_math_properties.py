"""Property tests of ``math_equivalence``: wrong answers built to fool a float or an item-by-last-item comparison
never score 1.0."""

from __future__ import annotations

import pytest

from rewardsmith.rewards.math.reward import MathEquivalence

hypothesis = pytest.importorskip("hypothesis", reason="property tests need hypothesis (the dev extra)")
from hypothesis import given, settings
from hypothesis import strategies as st

B = r"\boxed"


@pytest.fixture(scope="module")
def reward():
    reward = MathEquivalence(workers=2, timeout_s=10)
    yield reward
    reward.close()


@settings(max_examples=60, deadline=None)
@given(
    items=st.lists(st.integers(-999, 999), min_size=2, max_size=5, unique=True),
    index=st.integers(0, 4),
    delta=st.integers(1, 50),
    joiner=st.sampled_from([", ", ", and ", " and ", ", or "]),
)
def test_a_list_with_one_item_changed_never_scores(items, index, delta, joiner):
    index %= len(items)
    changed = list(items)
    changed[index] += delta
    if sorted(changed) == sorted(items):
        return
    reward = MathEquivalence(symbolic=False)
    gold = ", ".join(map(str, items[:-1])) + joiner + str(items[-1])
    answer = B + "{" + ", ".join(map(str, changed[:-1])) + joiner + str(changed[-1]) + "}"
    assert reward([answer], solution=[gold]) == [0.0]


@settings(max_examples=12, deadline=None)
@given(n=st.integers(20, 3000), gap=st.integers(1, 3))
def test_tiny_different_numbers_are_never_equal(reward, n, gap):
    r"""``1/n!`` against ``1/(n+gap)!``: both underflow a float; exact arithmetic tells them apart."""
    (result,) = reward.details([rf"\boxed{{\frac{{1}}{{{n + gap}!}}}}"], solution=[rf"\frac{{1}}{{{n}!}}"])
    assert result.score == 0.0, result.reason
