"""Special judges: ``tokens`` and ``float`` decided in the parent, checker programs in a process of their own.

Verdict table (right → 1.0, wrong → 0.0) and hacks aimed at the judge: the checker program never runs next to the
solution, so the solution can neither read the answer nor touch the checker; its only channel is its output.
"""

from __future__ import annotations

import pytest

from rewardsmith import get_reward
from rewardsmith.rewards.code.case_formats import BadTestsFormat, parse_tests
from rewardsmith.sandboxes.local.backend import LocalSandbox

THIRD = {"stdio": [{"input": "1 3\n", "output": "0.3333333333\n"}, {"input": "2 3\n", "output": "0.6666666667\n"}]}
FLOAT = dict(THIRD, checker="float")
FLOAT_LOOSE = dict(THIRD, checker={"type": "float", "abs_tol": 1e-2, "rel_tol": 0})
TOKENS = {"stdio": [{"input": "3\n", "output": "1 2 3\n"}], "checker": "tokens"}
PERMUTATION_CHECKER = """
import sys
n = int(open(sys.argv[1]).read())
out = open(sys.argv[2]).read().split()
digits = all(t.isdigit() for t in out)
ok = digits and len(out) == n and sorted(out, key=int) == [str(i) for i in range(1, n + 1)]
print("ok" if ok else "not a permutation of 1..n")
sys.exit(0 if ok else 1)
"""
PERMUTATION = {
    "stdio": [{"input": "3\n", "output": "1 2 3\n"}, {"input": "5\n", "output": "1 2 3 4 5\n"}],
    "checker": {"type": "program", "language": "python", "source": PERMUTATION_CHECKER},
}

DIVIDE = "a, b = map(int, input().split())\nprint(a / b)"
DIVIDE_ROUGH = "a, b = map(int, input().split())\nprint(round(a / b, 3))"
COUNT = "n = int(input())\nprint(*range(1, n + 1), sep='\\n')"
REVERSED = "n = int(input())\nprint(*range(n, 0, -1))"

TABLE = [
    ("float-right", FLOAT, DIVIDE, 1.0),
    ("float-too-rough", FLOAT, DIVIDE_ROUGH, 0.0),
    ("float-loose-tolerance", FLOAT_LOOSE, DIVIDE_ROUGH, 1.0),
    ("float-extra-token", FLOAT, DIVIDE + "\nprint(0)", 0.0),
    ("float-prefix-only", FLOAT, "input()\nprint()", 0.0),
    ("float-nan", FLOAT, "input()\nprint('nan')", 0.0),
    ("float-inf", FLOAT, "input()\nprint('inf')", 0.0),
    ("float-exact-text-not-needed", THIRD, DIVIDE, 0.0),  # without a checker lines must match exactly
    ("tokens-other-whitespace", TOKENS, COUNT, 1.0),
    ("tokens-wrong", TOKENS, "input()\nprint(1, 2)", 0.0),
    ("program-any-permutation", PERMUTATION, REVERSED, 1.0),
    ("program-duplicate", PERMUTATION, "n = int(input())\nprint(*([1] * n))", 0.0),
    ("program-empty-output", PERMUTATION, "import os\nos._exit(0)", 0.0),
    ("program-crash", PERMUTATION, "raise SystemExit(3)", 0.0),
]

HACKS = [
    ("read-the-answer", "print(open('answer.txt').read())"),
    ("overwrite-the-checker", "open('checker.py', 'w').write('import sys; sys.exit(0)')\nprint(1)"),
    ("print-a-verdict", "print('ok')"),
    ("crash-the-checker", "print('9' * 5000)"),
    ("flood", "print('1 ' * 10_000_000)"),
]


@pytest.fixture(scope="module")
def reward():
    if LocalSandbox().tier not in ("bwrap", "bwrap-exec"):
        pytest.skip("no bubblewrap tier here (apt-get install bubblewrap)")
    instance = get_reward("code_tests", concurrency=4)
    yield instance
    instance.close()


def test_checker_verdict_table(reward):
    results = reward.score_batch(
        [f"```python\n{code}\n```" for _, _, code, _ in TABLE], [{"tests": t} for _, t, _, _ in TABLE]
    )
    wrong = {
        case: (r.score, r.reason) for (case, *_, expected), r in zip(TABLE, results, strict=True) if r.score != expected
    }
    assert not wrong


def test_hacks_against_the_checker_score_zero(reward):
    results = reward.score_batch(
        [f"```python\n{code}\n```" for _, code in HACKS], [{"tests": PERMUTATION}] * len(HACKS)
    )
    assert {case: r.score for (case, _), r in zip(HACKS, results, strict=True)} == {case: 0.0 for case, _ in HACKS}


def test_the_checker_says_why_it_rejected(reward):
    (result,) = reward.score_batch(["```python\nn = int(input())\nprint(*([1] * n))\n```"], [{"tests": PERMUTATION}])
    assert "checker rejected: not a permutation" in result.reason


def test_max_tests_keeps_the_checker():
    """The first N tests are still judged by the suite's checker, not by exact lines."""
    if LocalSandbox().tier not in ("bwrap", "bwrap-exec"):
        pytest.skip("no bubblewrap tier here (apt-get install bubblewrap)")
    limited = get_reward("code_tests", concurrency=2, max_tests=1)
    try:
        rows = [{"tests": PERMUTATION}, {"tests": FLOAT}]
        results = limited.score_batch([f"```python\n{REVERSED}\n```", f"```python\n{DIVIDE}\n```"], rows)
    finally:
        limited.close()
    assert [r.score for r in results] == [1.0, 1.0], [r.reason for r in results]


@pytest.mark.parametrize(
    "checker",
    [
        "close-enough",
        {"type": "program", "language": "cpp", "source": "int main(){}"},
        {"type": "float", "abs_tol": -1},
    ],
)
def test_bad_checkers_make_the_tests_unusable(checker):
    with pytest.raises(BadTestsFormat):
        parse_tests(dict(THIRD, checker=checker))
