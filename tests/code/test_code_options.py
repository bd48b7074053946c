"""``code_tests`` options that change how tests run: stopping at a sample's first failure."""

from __future__ import annotations

import time

import pytest

from rewardsmith import get_reward
from rewardsmith.sandboxes.local.backend import LocalSandbox

STDIO = {"stdio": [{"input": f"{i} {i}\n", "output": f"{2 * i}\n"} for i in range(1, 5)]}
# wrong on the first test, then so slow that every later test would time out
FAILS_THEN_HANGS = "import time\na, b = map(int, input().split())\nif a == 1:\n    print(0)\nelse:\n    time.sleep(60)"
RIGHT = "a, b = map(int, input().split())\nprint(a + b)"


@pytest.fixture(autouse=True)
def _needs_bwrap():
    if LocalSandbox().tier not in ("bwrap", "bwrap-exec"):
        pytest.skip("no bubblewrap tier here (apt-get install bubblewrap)")


def test_stop_on_first_failure_runs_no_test_after_a_failed_one():
    reward = get_reward("code_tests", stop_on_first_failure=True, timeout_s=3)
    try:
        started = time.monotonic()
        wrong, right = reward.score_batch(
            [f"```python\n{FAILS_THEN_HANGS}\n```", f"```python\n{RIGHT}\n```"], [{"tests": STDIO}] * 2
        )
        elapsed = time.monotonic() - started
    finally:
        reward.close()
    assert wrong.score == 0.0 and "not run (stopped at the first failure)" in wrong.reason
    assert right.score == 1.0, right.reason
    assert elapsed < 3, f"a later test ran into its timeout ({elapsed:.1f} s)"


def test_without_the_option_every_test_runs_and_counts():
    reward = get_reward("code_tests", timeout_s=1)
    try:
        (result,) = reward.score_batch([f"```python\n{FAILS_THEN_HANGS}\n```"], [{"tests": STDIO}])
    finally:
        reward.close()
    assert result.score == 0.0 and "timeout" in result.reason


CPP = "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }"
CPP_OTHER = '#include <cstdio>\nint main() { long a, b; scanf("%ld %ld", &a, &b); printf("%ld\\n", a + b); }'


def test_a_group_of_identical_cpp_completions_compiles_once_and_later_batches_reuse_it():
    reward = get_reward("code_tests", concurrency=4)
    backend = reward._sandbox()
    compiles: list[str] = []
    run_batch = backend.run_batch

    def counting(requests, concurrency=None):  # observes the real backend's traffic; verdicts are untouched
        compiles.extend(r.files["solution.cpp"] for r in requests if r.argv[0] == "g++")
        return run_batch(requests, concurrency)

    backend.run_batch = counting
    tests = {"tests": {"language": "cpp", "stdio": [{"input": "1 2\n", "output": "3\n"}]}}
    try:
        group = [f"```cpp\n{CPP}\n```"] * 4 + [f"```cpp\n{CPP_OTHER}\n```"]
        assert [r.score for r in reward.score_batch(group, [tests] * 5)] == [1.0] * 5
        assert len(compiles) == 2
        assert [r.score for r in reward.score_batch(group[:2], [tests] * 2)] == [1.0, 1.0]
        assert len(compiles) == 2, "the second batch reused the binaries"
    finally:
        reward.close()
