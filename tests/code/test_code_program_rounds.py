"""Program tests decided in the trusted process over rounds: right solutions 1.0, wrong ones 0.0, for the shapes
datasets use, in few rounds (the solution's process answers calls; it never sees the test).

Each row is a test shape (HumanEval ``check``, EvalPlus-style helper comparisons, comprehensions, ``map``, objects
built by setup code, chained calls, expected exceptions, ``is True``, ``sorted(...)``, floats within a tolerance) with
a right and a wrong solution, and the most answer runs (rounds) it may take.
"""

from __future__ import annotations

import json

import pytest

from rewardsmith import get_reward
from rewardsmith.sandboxes.local.backend import LocalSandbox

EVALPLUS = (
    "def assertion(out, exp, atol):\n"
    "    if atol == 0 and isinstance(exp, float):\n"
    "        atol = 1e-6\n"
    "    if out != exp and atol != 0:\n"
    "        assert abs(out - exp) <= atol\n"
    "    else:\n"
    "        assert out == exp, f'{out} != {exp}'\n"
    "def check(candidate):\n"
    "    inputs = [[i, i + 1] for i in range(20)]\n"
    "    results = [2 * i + 1 for i in range(20)]\n"
    "    for inp, exp in zip(inputs, results):\n"
    "        assertion(candidate(*inp), exp, 0)\n"
)
ADD, SUB = "def add(a, b):\n    return a + b\n", "def add(a, b):\n    return a - b\n"
SQUARE, WRONG_SQUARE = "def sq(x):\n    return x * x\n", "def sq(x):\n    return x + x\n"
STACK = (
    "class Stack:\n    def __init__(self):\n        self.items = []\n"
    "    def push(self, x):\n        self.items.append(x)\n        return len(self.items)\n"
    "    def pop(self):\n        return self.items.pop()\n"
)
#: (id, tests, right, wrong, most answer runs)
SHAPES = [
    ("evalplus-helper", {"test": EVALPLUS, "entry_point": "add"}, ADD, SUB, 1),
    (
        "is-true-and-not",
        {
            "test": "def check(candidate):\n    assert candidate(2) is True\n    assert not candidate(3)\n",
            "entry_point": "even",
        },
        "def even(n):\n    return n % 2 == 0\n",
        "def even(n):\n    return 1 if n % 2 == 0 else 0\n",
        1,
    ),
    (
        "expects-exception",
        {
            "test": "def check(candidate):\n    try:\n        candidate(-1)\n    except ValueError:\n        pass\n"
            "    else:\n        assert False\n    assert candidate(4) == 2\n",
            "entry_point": "root",
        },
        "def root(x):\n    if x < 0:\n        raise ValueError(x)\n    return int(x ** 0.5)\n",
        "def root(x):\n    return int(abs(x) ** 0.5)\n",
        1,
    ),
    (
        "sorted-and-tolerance",
        {"asserts": ["assert sorted(sq(x) for x in (3, -1)) == [1, 9]", "assert abs(sq(0.5) - 0.25) < 1e-9"]},
        SQUARE,
        WRONG_SQUARE,
        1,
    ),
    ("map", {"asserts": ["assert list(map(sq, [1, 2, 3])) == [1, 4, 9]"]}, SQUARE, WRONG_SQUARE, 1),
    (
        "chained",
        {"asserts": ["assert sq(sq(2)) == 16", "assert [sq(sq(x)) for x in (1, 3)] == [1, 81]"]},
        SQUARE,
        WRONG_SQUARE,
        2,
    ),
    (
        "objects-from-setup",
        {"asserts": ["s = Stack()\nassert s.push(4) == 1\nassert s.push(5) == 2\nassert s.pop() == 5"]},
        STACK,
        STACK.replace("return self.items.pop()", "return self.items[0]"),
        1,
    ),
    (
        "loop-over-results",
        {
            "test": "def check(candidate):\n    total = 0\n    for v in candidate(3):\n        total += v\n"
            "    assert total == 3\n",
            "entry_point": "upto",
        },
        "def upto(n):\n    return list(range(n))\n",
        "def upto(n):\n    return [n, n]\n",
        1,
    ),
]


@pytest.fixture(scope="module")
def reward():
    if LocalSandbox().tier not in ("bwrap", "bwrap-exec"):
        pytest.skip("no bubblewrap tier here (apt-get install bubblewrap)")
    instance = get_reward("code_tests", concurrency=4)
    yield instance
    instance.close()


def _answer_runs(reward, completions, tests):
    """Score, counting the solution's answer runs (one per program test per round)."""
    original, modes = reward._run, []

    def counting(requests):
        modes.extend(json.loads(r.files["rk_spec.json"])["mode"] for r in requests if "rk_spec.json" in r.files)
        return original(requests)

    reward._run = counting
    try:
        return reward.details(completions, tests=tests), modes.count("answer")
    finally:
        del reward._run


@pytest.mark.parametrize(("tests", "right", "wrong", "rounds"), [s[1:] for s in SHAPES], ids=[s[0] for s in SHAPES])
def test_program_shapes_right_one_wrong_below_in_few_rounds(reward, tests, right, wrong, rounds):
    (good,), runs = _answer_runs(reward, [f"```python\n{right}```"], [tests])
    assert good.score == 1.0, good.reason
    tests_count = len(tests.get("asserts", [None]))
    assert runs <= rounds * tests_count, f"{runs} answer runs for {tests_count} tests"
    (bad,) = reward.details([f"```python\n{wrong}```"], tests=[tests])
    assert bad.score < 1.0, bad.reason


def test_a_function_of_the_test_passed_to_the_solution_is_undecidable_not_scored():
    tests = {"test": "def check(candidate):\n    assert candidate(lambda x: x + 1, 2) == 3\n", "entry_point": "apply"}
    code = "```python\ndef apply(f, x):\n    return f(x)\n```"
    strict, runner = get_reward("code_tests"), get_reward("code_tests", untrusted_asserts="run")
    try:
        (unscored,) = strict.details([code], tests=[tests])
        (ran,) = runner.details([code], tests=[tests])
    finally:
        strict.close()
        runner.close()
    assert unscored.score is None and unscored.trusted is False and "not plain data" in unscored.reason
    assert ran.score == 1.0 and ran.trusted is False
