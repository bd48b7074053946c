"""The benchmark's workloads (``bench/math_reward.py``) carry the verdict each pair should get: rewardsmith must
reproduce every one, and correctly configured math-verify (gold in ``$…$``) must parse every gold."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from rewardsmith.rewards.math.reward import MathEquivalence

_spec = importlib.util.spec_from_file_location("math_bench", Path(__file__).parents[2] / "bench" / "math_reward.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("math_bench", bench)  # its dataclasses look their module up while being defined
_spec.loader.exec_module(bench)


@pytest.fixture(scope="module")
def reward():
    reward = MathEquivalence(workers=2, timeout_s=10)
    yield reward
    reward.close()


@pytest.mark.parametrize("kind", sorted(bench.WORKLOADS))
def test_workload_verdicts_are_reproduced(reward, kind):
    pairs = bench.workload(96, 2, 0, seed=1, kind=kind)
    results = reward.details([p.completion for p in pairs], solution=[p.gold for p in pairs])
    wrong = [(p, r.reason) for p, r in zip(pairs, results, strict=True) if r.score != p.expected]
    assert not wrong, wrong[:3]


def test_math_verify_baseline_reads_the_gold_in_dollars():
    assert bench.math_verify_gold("Natalia sold clips.\n#### 72") == "$72$"
    assert bench.math_verify_gold(r"\frac{1}{2}") == r"$\frac{1}{2}$"
    assert bench.math_verify_accuracy(r"so $\boxed{\frac{2}{4}}$", r"\frac{1}{2}") == 1.0
    assert bench.math_verify_accuracy(r"so $\boxed{3}$", "4") == 0.0
