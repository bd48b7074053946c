"""The worst-case time of one ``code_tests`` sample, as the README states it, held on samples built to reach it.

README: a sample with T tests, scored alone, takes at most ceil(T / concurrency) x timeout_s for its tests, plus
one trusted checking stage of at most max(10 s, timeout_s) (or, for stdio checker programs, ceil(T / concurrency)
x max(10 s, timeout_s)), plus sandbox start-up per wave; host-side extraction is linear in the completion's size.
The samples here never end (every test runs to its timeout) and trail 600 KB of fences that never close.
"""

from __future__ import annotations

import math
import time

import pytest

from rewardsmith import get_reward
from rewardsmith.sandboxes.local.backend import LocalSandbox
from tests.support.timing import slack

TIMEOUT_S = 1.0
CONCURRENCY = 4
TRAILER = "```x\n" * 120_000  # 600 KB after the program: extraction must stay linear
LOOPING = "```python\ndef f():\n    return 1\nwhile True:\n    pass\n```\n" + TRAILER


def readme_bound_s(tests: int) -> float:
    """The README's bound without checker programs: the test waves, then one trusted checking stage."""
    return math.ceil(tests / CONCURRENCY) * TIMEOUT_S + max(10.0, TIMEOUT_S)


@pytest.fixture(scope="module")
def reward():
    if LocalSandbox().tier != "bwrap":
        pytest.skip("bwrap tier unavailable here")
    instance = get_reward("code_tests", timeout_s=TIMEOUT_S, concurrency=CONCURRENCY)
    instance(["```python\ndef f():\n    return 1\n```"], tests=[{"asserts": ["assert f() == 1"]}])  # warm sandbox
    yield instance
    instance.close()


@pytest.mark.parametrize(
    ("kind", "tests"),
    [
        ("asserts", {"asserts": [f"assert f() == {i}" for i in range(1)]}),
        ("asserts", {"asserts": [f"assert f() == {i}" for i in range(9)]}),
        ("calls", {"fn_name": "f", "calls": [{"args": [], "expected": i} for i in range(6)]}),
        ("stdio", {"stdio": [{"input": "", "output": "1"}] * 9}),
        ("stdio checker", {"stdio": [{"input": "", "output": "1"}] * 5, "checker": "float"}),
    ],
)
def test_one_sample_stays_within_the_readme_bound(reward, kind: str, tests: dict) -> None:
    count = len(next(v for k, v in tests.items() if k in ("asserts", "calls", "stdio")))
    started = time.monotonic()
    result = reward.details([LOOPING], tests=[tests])[0]
    elapsed = time.monotonic() - started
    assert result.score == 0.0 and "timeout" in result.reason, result.reason
    waves = math.ceil(count / CONCURRENCY)
    bound = readme_bound_s(count) + slack(0.5) * (waves + 1)
    assert elapsed <= bound, f"{kind}: {count} tests took {elapsed:.2f} s, README bound {bound:.2f} s"
    assert elapsed >= 0.9 * waves * TIMEOUT_S, elapsed  # every wave really ran to its timeout: the worst case
