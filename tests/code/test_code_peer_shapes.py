"""Code shapes other harnesses accept, scored as those harnesses' users expect (verdict tables with their source).

- LeetCode / LiveCodeBench: solutions use ``List``, ``defaultdict``, ``heapq`` ... unimported, because
  LiveCodeBench's ``lcb_runner/evaluation/testing_util.py`` prepends ``import_string`` to every solution it grades;
  rewardsmith prepends the same prelude for call tests and LiveCodeBench rows (and says so), never for asserts.
- APPS/TACO and LiveCodeBench rows with a ``None`` stdio input: empty input, as their harnesses run it.
- A test program that raises something other than ``AssertionError`` is reported as errored, with the type.
"""

from __future__ import annotations

import json

import pytest

from rewardsmith import get_reward
from rewardsmith.rewards.code.preludes import IMPORT_PRELUDE, with_prelude
from rewardsmith.sandboxes.local.backend import LocalSandbox


@pytest.fixture(scope="module")
def reward():
    if LocalSandbox().tier not in ("bwrap", "bwrap-exec"):
        pytest.skip("no bubblewrap tier here (apt-get install bubblewrap)")
    instance = get_reward("code_tests", concurrency=4, timeout_s=20)
    yield instance
    instance.close()


def block(code: str) -> str:
    return f"Here is my solution.\n```python\n{code}\n```\n"


# LeetCode style: typing and collections names used unimported (LiveCodeBench's starter code has `List[int]`)
LEETCODE = """class Solution:
    def maxGap(self, nums: List[int]) -> int:
        seen = defaultdict(int)
        heap = list(nums)
        heapify(heap)
        for x in nums:
            seen[x] += 1
        best = max(nums) - heappop(heap)
        return best + len(seen) - len(seen) + floor(0.5) + bisect_left([1, 2], 2) - 1
"""
LEETCODE_WRONG = LEETCODE.replace("return best +", "return 1 + best +")
FUNCTION_STYLE = "def total(xs: Optional[List[int]]) -> int:\n    return sum(Counter(xs).elements())\n"
CALLS = {"language": "python", "fn_name": "maxGap", "calls": [{"args": [[3, 1, 7]], "expected": 6}]}
TOTAL_CALLS = {"fn_name": "total", "calls": [{"args": [[1, 2, 2]], "expected": 5}]}
ASSERTS = {"asserts": ["assert Solution().maxGap([3, 1, 7]) == 6"]}
# LiveCodeBench code_generation_lite as it ships: functional cases are JSON lines, metadata names the function
LCB_FUNCTIONAL = {
    "public_test_cases": json.dumps([{"input": "[3, 1, 7]", "output": "6", "testtype": "functional"}]),
    "metadata": json.dumps({"func_name": "maxGap"}),
}
LCB_STDIN = {"public_test_cases": json.dumps([{"input": "3\n", "output": "6\n", "testtype": "stdin"}])}
STDIN_UNIMPORTED = "n = int(input())\nprint(factorial(n))\n"  # factorial from the prelude's `from math import *`
GCD_CALLS = {"fn_name": "gcd", "calls": [{"args": [4, 6], "expected": 2}]}
GCD_METHOD = "class Solution:\n    def gcd(self, a: int, b: int) -> int:\n        return 1\n"
FUTURE = '"""doc"""\nfrom __future__ import annotations\n' + FUNCTION_STYLE

# (name, source of the shape, tests, completion, expected score, words in the reason)
PRELUDE_VERDICTS = [
    ("leetcode-calls-unimported", "LeetCode Solution class", CALLS, block(LEETCODE), 1.0, "imports prepended"),
    ("leetcode-calls-wrong", "LeetCode Solution class", CALLS, block(LEETCODE_WRONG), 0.0, "imports prepended"),
    ("function-calls-unimported", "APPS/PrimeIntellect fn_name", TOTAL_CALLS, block(FUNCTION_STYLE), 1.0, "prepended"),
    ("future-import-stays-first", "solution with __future__", TOTAL_CALLS, block(FUTURE), 1.0, "prepended"),
    ("lcb-functional-row", "LiveCodeBench code_generation_lite", LCB_FUNCTIONAL, block(LEETCODE), 1.0, "prepended"),
    ("lcb-stdin-row", "LiveCodeBench code_generation_lite", LCB_STDIN, block(STDIN_UNIMPORTED), 1.0, "prepended"),
    # the prelude's names never stand in for the solution's function (`from math import *` binds gcd)
    ("prelude-name-is-not-the-function", "LeetCode Solution class", GCD_CALLS, block(GCD_METHOD), 0.0, "prepended"),
    ("prelude-name-missing-function", "fn_name", GCD_CALLS, block("def other(a, b):\n    return 2\n"), 0.0, "gcd"),
    # asserts come from harnesses that prepend nothing: the missing import is the solution's error
    ("asserts-get-no-prelude", "plain asserts", ASSERTS, block(LEETCODE), 0.0, "NameError"),
]


def _row(tests: dict) -> dict:
    return tests if "public_test_cases" in tests else {"tests": tests}


@pytest.mark.parametrize(
    ("tests", "completion", "expected", "words"),
    [v[2:] for v in PRELUDE_VERDICTS],
    ids=[v[0] for v in PRELUDE_VERDICTS],
)
def test_leetcode_livecodebench_import_prelude(reward, tests, completion, expected, words):
    (result,) = reward.score_batch([completion], [_row(tests)])
    assert result.score == pytest.approx(expected), result.reason
    assert words in result.reason
    if "public_test_cases" not in tests:  # only a LiveCodeBench row is named after LiveCodeBench
        assert "LeetCode" not in result.reason and "LiveCodeBench" not in result.reason, result.reason


def test_prelude_keeps_docstring_and_future_imports_first():
    code = with_prelude(FUTURE)
    assert code.startswith('"""doc"""\nfrom __future__ import annotations\n' + IMPORT_PRELUDE)
    compile(code, "solution.py", "exec")
    assert with_prelude("x = 1\n") == IMPORT_PRELUDE + "x = 1\n"
    assert "from typing import *" in IMPORT_PRELUDE and "sys.setrecursionlimit(50000)" in IMPORT_PRELUDE


# ---------------------------------------------------------------------------------------------- None stdio input
HELLO = "print('hello')\n"
NONE_INPUT = [
    # APPS/TACO input_output with a null input (problems that read nothing)
    ("apps-null-input", {"input_output": json.dumps({"inputs": [None], "outputs": ["hello\n"]})}, HELLO, 1.0),
    ("apps-null-input-wrong", {"input_output": json.dumps({"inputs": [None], "outputs": ["bye\n"]})}, HELLO, 0.0),
    ("stdio-null-input", {"tests": {"stdio": [{"input": None, "output": "hello"}]}}, HELLO, 1.0),
    # the program sees empty stdin: reading it gives EOF, as on the peers' harnesses
    (
        "null-input-is-empty",
        {"tests": {"stdio": [{"input": None, "output": "0"}]}},
        "import sys\nprint(len(sys.stdin.read()))\n",
        1.0,
    ),
]


@pytest.mark.parametrize(("row", "code", "expected"), [v[1:] for v in NONE_INPUT], ids=[v[0] for v in NONE_INPUT])
def test_none_stdio_input_is_empty_input(reward, row, code, expected):
    (result,) = reward.score_batch([block(code)], [row])
    assert result.score == pytest.approx(expected), result.reason


# ---------------------------------------------------------------------------------------------- errored vs failed
PROGRAM_TESTS = {
    "asserts": [
        "xs = [f(i) for i in range(3)]\nassert xs == [0, 2, 4]",
        "assert all(f(i) == 2 * i for i in range(3))",
    ]
}
ERRORS = [
    # (name, completion, expected, words in the reason)
    ("program-passes", "def f(x):\n    return 2 * x\n", 1.0, "2/2"),
    ("program-assert-fails", "def f(x):\n    return 3 * x\n", 0.0, "assert failed"),
    ("program-errors", "def f(x):\n    raise ValueError('no')\n", 0.0, "test errored: raised ValueError"),
    ("program-wrong-type-no-error", "def f(x):\n    return None\n", 0.0, "assert failed"),  # None != 0: no error
]


@pytest.mark.parametrize(("code", "expected", "words"), [v[1:] for v in ERRORS], ids=[v[0] for v in ERRORS])
def test_errored_test_is_told_from_failed_assertion(reward, code, expected, words):
    (result,) = reward.details([block(code)], tests=[PROGRAM_TESTS])
    assert result.score == pytest.approx(expected), result.reason
    assert words in result.reason
    if "errored" in words:
        assert "assert failed" not in result.reason


def test_test_glue_that_raises_is_an_error_not_a_failed_assert(reward):
    tests = {"asserts": ["xs = f(2)\nassert xs[5] == 1"]}  # the test's own IndexError on the solution's short list
    (result,) = reward.details([block("def f(x):\n    return [x]\n")], tests=[tests])
    assert result.score == 0.0
    assert "raised IndexError" in result.reason


# ---------------------------------------------------------------------------------------------- KodCode pytest
# KodCode-V1 (KodCode/KodCode-V1 on the Hugging Face hub) ships `test` (pytest source importing `solution`) and
# `test_info` ([{"function_name", "function_declaration", "parameter_list", "docstring"}]); its SFT variant names
# the column `test_code`. Each test_ function (each parameter set) is one program test.
KODCODE_TEST = """from solution import two_sum
import pytest

def test_basic():
    assert two_sum([2, 7, 11, 15], 9) == [0, 1]

def test_negative():
    assert two_sum([-1, -2, -3], -5) == [1, 2]

@pytest.mark.parametrize("nums, target, expected", [([1, 2], 3, [0, 1]), ([3, 3], 6, [0, 1])])
def test_param(nums, target, expected):
    assert two_sum(nums, target) == expected

def test_raises():
    with pytest.raises(ValueError):
        two_sum([], 1)

def test_approx():
    assert two_sum([1, 2], 3)[1] / 3 == pytest.approx(0.3333333)
"""
TWO_SUM = """def two_sum(nums, target):
    seen = {}
    for i, x in enumerate(nums):
        if target - x in seen:
            return [seen[target - x], i]
        seen[x] = i
    raise ValueError("no pair")
"""
KODCODE_ROW = {
    "question": "Return the indices of the two numbers that add up to target.",
    "test": KODCODE_TEST,
    "test_info": [{"function_name": "two_sum", "parameter_list": "(nums, target)"}],
}
MODULE_IMPORT = KODCODE_TEST.replace("from solution import two_sum", "import solution").replace(
    "two_sum(", "solution.two_sum("
)
ALIASED = KODCODE_TEST.replace("from solution import two_sum", "from solution import two_sum as ts").replace(
    "two_sum(", "ts("
)
KODCODE = [
    # (name, row, completion, expected score, words in the reason)
    ("kodcode-right", KODCODE_ROW, TWO_SUM, 1.0, "6/6"),
    ("kodcode-no-raise", KODCODE_ROW, TWO_SUM.replace('raise ValueError("no pair")', "return []"), 5 / 6, "test 4"),
    ("kodcode-constant", KODCODE_ROW, "def two_sum(a, b):\n    return [0, 1]\n", 4 / 6, "assert failed"),
    # TypeError is not the ValueError test_raises expects: every test errors
    ("kodcode-errors", KODCODE_ROW, "def two_sum(a, b):\n    return None[0]\n", 0.0, "errored: raised TypeError"),
    ("kodcode-missing", KODCODE_ROW, "def three_sum(a, b):\n    return [0, 1]\n", 0.0, "KodCode pytest"),
    ("kodcode-test-code-column", {"test_code": KODCODE_TEST}, TWO_SUM, 1.0, "KodCode"),
    ("kodcode-import-module", {"test": MODULE_IMPORT}, TWO_SUM, 1.0, "6/6"),
    ("kodcode-import-alias", {"test": ALIASED}, TWO_SUM, 1.0, "6/6"),
    ("kodcode-in-tests-column", {"tests": {"pytest": KODCODE_TEST}}, TWO_SUM, 1.0, "6/6"),
]


@pytest.mark.parametrize(("row", "code", "expected", "words"), [v[1:] for v in KODCODE], ids=[v[0] for v in KODCODE])
def test_kodcode_pytest_tests(reward, row, code, expected, words):
    (result,) = reward.score_batch([block(code)], [row])
    assert result.score == pytest.approx(expected), result.reason
    assert words in result.reason


def test_kodcode_solution_never_sees_the_test():
    """The solution's runs get only call chains (names), never the pytest source or an expected value."""
    from rewardsmith.rewards.code.case_formats import parse_tests
    from rewardsmith.rewards.code.plans import plan_assert

    suite = parse_tests({"pytest": KODCODE_TEST})
    assert len(suite) == 6 and all(t.program for t in suite.tests)
    for test in suite.tests:
        plan = plan_assert(test, frozenset({"two_sum"}))
        assert plan.untrusted is None
        assert all("two_sum" in chain and "15" not in chain for _, chain in plan.chains)
        assert "from solution" not in plan.replay


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("from solution import f\n\ndef test_a(tmp_path):\n    assert f(tmp_path)\n", "fixtures"),
        ("from solution import f\nimport pytest\n\ndef test_a():\n    pytest.fail('x')\n", "pytest.fail"),
        (
            "from solution import f\nimport pytest\n\ndef test_a():\n    with pytest.raises(E) as e:\n        f()\n",
            "as",
        ),
        ("from solution import f\n\nX = 1\n", "no test_ functions"),
    ],
)
def test_kodcode_unsupported_pytest_is_unscorable_with_the_reason(reward, source, words):
    (result,) = reward.score_batch([block("def f(*a):\n    return 1\n")], [{"test": source}])
    assert result.score is None
    assert words in result.reason
