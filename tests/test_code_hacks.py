"""Reward hacking: every trick in ``tests/hostile_programs.py::REWARD_HACKS`` scores exactly 0.0 (not None).

The control rows show the same tests give the honest solution 1.0, so a zero is the verdict, not a broken setup.
"""

from __future__ import annotations

import pytest

from rewardkit import get_reward
from rewardkit.sandboxes.local import LocalSandbox
from tests.hostile_programs import HACK_PROBLEM, REWARD_HACKS, RewardHack

TESTS = {
    "calls": {"language": "python", "fn_name": HACK_PROBLEM["fn_name"], "calls": HACK_PROBLEM["calls"]},
    "asserts": {"language": "python", "asserts": HACK_PROBLEM["asserts"]},
    "stdio": {"language": "python", "stdio": HACK_PROBLEM["stdio"]},
}
HONEST = {
    "calls": "def add(a, b):\n    return a + b\n",
    "asserts": "def add(a, b):\n    return a + b\n",
    "stdio": "a, b = map(int, input().split())\nprint(a + b)\nprint(a + b + 1)\n",
}


@pytest.fixture(scope="module")
def reward():
    if LocalSandbox().tier != "bwrap":
        pytest.skip("bwrap tier unavailable here")
    instance = get_reward("code_tests", timeout_s=5.0, concurrency=4)
    yield instance
    instance.close()


def fenced(code: str) -> str:
    return f"```python\n{code}```"


@pytest.mark.parametrize("test_format", sorted(HONEST))
def test_control_honest_solution_scores_one(reward, test_format):
    (result,) = reward.details([fenced(HONEST[test_format])], tests=[TESTS[test_format]])
    assert result.score == 1.0, result.reason


def test_all_hacks_score_zero_in_one_batch(reward):
    """Scored as one batch, as a trainer would: each hack gets exactly 0.0 with a reason."""
    assert_all_hacks_score_zero(reward)


def test_all_hacks_score_zero_with_one_bwrap_per_run():
    per_run = get_reward("code_tests", backend_options={"tier": "bwrap-exec"}, concurrency=4)
    try:
        assert per_run([fenced(HONEST["calls"])], tests=[TESTS["calls"]]) == [1.0]
        assert_all_hacks_score_zero(per_run)
    finally:
        per_run.close()


def assert_all_hacks_score_zero(reward):
    results = reward.details([fenced(h.code) for h in REWARD_HACKS], tests=[TESTS[h.test_format] for h in REWARD_HACKS])
    scored = {hack.id: (result.score, result.reason) for hack, result in zip(REWARD_HACKS, results, strict=True)}
    leaks = {k: v for k, v in scored.items() if v[0] != 0.0}
    assert not leaks, leaks


@pytest.mark.parametrize("hack", REWARD_HACKS, ids=[h.id for h in REWARD_HACKS])
def test_hack_scores_zero_alone(reward, hack: RewardHack):
    (result,) = reward.details([fenced(hack.code)], tests=[TESTS[hack.test_format]])
    assert result.score == 0.0, (hack.note, result.reason)
    assert result.score is not None
