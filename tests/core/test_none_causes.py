"""Which causes give ``None`` and which give ``0.0``, per reward family (the table in docs/concepts.md).

A trainer ignores ``None``, so a wrong completion that makes its own check impossible (too long, too deep, too slow
to match) would go unpunished and be taught to do so: that is the completion's 0.0, with the reason. ``None`` is
kept for what the completion cannot cause: a missing or empty gold, a failed endpoint, a configuration that does not
fit the data, and its reason names the fix.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rewardsmith import get_reward

DEAD = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "max_retries": 0, "timeout": 2}
PERSON = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
RECURSIVE = {"type": "array", "items": {"$ref": "#"}}  # each level of the completion is one more level of validation
DEEP_LIST = "[" * 900 + "]" * 900  # parses (under the decoder's limit); validating it recurses past Python's

# (reward, config, completion, columns, expected score, reason contains, why)
TABLE = [
    # -- the completion's own size, depth or cost: its 0.0 ---------------------------------------------------------
    ("regex_match", {"pattern": "x", "max_chars": 5}, "x" * 6, {}, 0.0, "max_chars=5", "too long to match"),
    (
        "regex_match",
        {"pattern": r"(a|aa)+$", "timeout_s": 0.2},
        "a" * 5000 + "b",
        {},
        0.0,
        "timeout_s=0.2",
        "the match the completion makes backtrack runs past its budget",
    ),
    ("json_schema", {"json_schema": PERSON, "max_chars": 10}, '{"name": "Ada"}', {}, 0.0, "max_chars=10", "too long"),
    ("json_schema", {"json_schema": RECURSIVE}, DEEP_LIST, {}, 0.0, "nested too deeply", "too deep to validate"),
    ("json_schema", {"json_schema": True}, "[" * 100_000 + "]" * 100_000, {}, 0.0, "nested too deeply", "too deep"),
    (
        "llm_judge",
        {"client": DEAD, "rubric": "r", "max_completion_chars": 50},
        "x" * 51,
        {},
        0.0,
        "max_completion_chars=50",
        "too long for the judge: not sent",
    ),
    (
        "llm_rubric",
        {"client": DEAD, "criteria": [{"id": "c", "description": "d"}], "max_completion_chars": 50},
        "x" * 51,
        {},
        0.0,
        "max_completion_chars=50",
        "too long for the judge: not sent",
    ),
    # -- the gold, the configuration or the infrastructure: None, with the reason and the fix ----------------------
    ("llm_judge", {"client": DEAD, "rubric": "r"}, "4", {}, None, "connection error", "the endpoint is down"),
    (
        "llm_judge",
        {"client": DEAD, "mode": "pairwise"},
        "4",
        {"answer": ["4"]},
        None,
        "set reference_column",
        "no reference column: the reason names the setting",
    ),
    (
        "math_equivalence",
        {},
        r"\boxed{72}",
        {"answer": ["#### 72"]},
        None,
        "set gold_column to the column that holds it (columns that arrived: answer, prompt)",
        "GSM8K ships 'answer', not 'solution'",
    ),
    (
        "math_equivalence",
        {},
        r"\boxed{72}",
        {"solution": [None]},
        None,
        "column 'solution' is empty in every row: set gold_column",
        "the gold column arrived empty",
    ),
    (
        "code_tests",
        {},
        "```python\nprint(1)\n```",
        {"answer": ["x"]},
        None,
        "set tests_column to the column that holds it",
        "no tests column",
    ),
    ("soft_overlong", {"unit": "tokens"}, "abc", {}, None, "no completion_ids", "the caller passed no token ids"),
    ("route", {"routes": {"fmt": "think_format"}}, "x", {"task": ["code"]}, None, "no route", "unrouted: config"),
    (
        "route",
        {"routes": {"fmt": "think_format"}},
        "x",
        {"kind": ["fmt"]},
        None,
        "set column to the column that names each row's task, or give a default (columns that arrived: kind, prompt)",
        "no routing column in the data",
    ),
    (
        "instruction_following",
        {"language_checks": False},
        "hello",
        {"instruction_id_list": [["no:such_instruction"]], "kwargs": [[{}]]},
        None,
        "no:such_instruction",
        "an unknown instruction in the data",
    ),
]


@pytest.mark.parametrize(
    ("name", "config", "completion", "columns", "expected", "reason", "why"), TABLE, ids=[row[-1] for row in TABLE]
)
def test_none_causes(name, config, completion, columns, expected, reason, why):
    if name == "instruction_following":
        pytest.importorskip("langdetect")
    [result] = get_reward(name, config).details([completion], prompts=["p"], **columns)
    assert result.score == expected, (why, result.reason)
    assert reason in result.reason, (why, result.reason)


def test_group_judge_scores_an_overlong_candidate_and_judges_the_rest_without_it():
    """The overlong candidate earns its 0.0; its neighbour's verdict comes from the judge (here: down, so None)."""
    reward = get_reward("llm_judge_group", {"client": DEAD, "max_completion_chars": 50, "group_by": "prompt"})
    results = reward.details(["x" * 51, "short"], prompts=["p", "p"])
    assert [r.score for r in results] == [0.0, None], [r.reason for r in results]
    assert "max_completion_chars=50" in results[0].reason and "connection error" in results[1].reason


# -- the code reward on the local sandbox: what a program does to its own check is its 0.0 -------------------------
CODE = [
    ("def f(x):\n    v = []\n    for _ in range(100000):\n        v = [v]\n    return v", "a value too deep to encode"),
    ("def f(x):\n    return 10 ** 20000", "a number too long to encode"),
    ("def f(x):\n    while True:\n        pass", "a program that never returns"),
    ("import os\ndef f(x):\n    os._exit(0)", "a process that exits before reporting"),
    ("def f(x):\n    print('y' * 50_000_000)\n    return x", "output past the cap"),
]


@pytest.mark.parametrize("code", [c for c, _ in CODE], ids=[why for _, why in CODE])
def test_code_outcomes_the_program_causes_are_its_zero(code):
    tests = json.dumps({"fn_name": "f", "inputs": [[1]], "outputs": [1]})
    reward = get_reward("code_tests", {"backend": "local", "timeout_s": 2})
    [result] = reward.details([f"```python\n{code}\n```"], tests=[tests])
    assert result.score == 0.0, result.reason


def test_code_assert_value_the_trusted_stage_cannot_encode_is_zero():
    """``assert f(2) == 2 + 2`` is decided in the trusted stage from the value the program returned."""
    code = "```python\ndef f(x):\n    return 10 ** 20000\n```"
    reward = get_reward("code_tests", {"backend": "local", "timeout_s": 2})
    [result] = reward.details([code], tests=[{"asserts": ["assert f(2) == 2 + 2"]}])
    assert result.score == 0.0, result.reason


# -- a missing gold column says so, once per reward instance, through TRL's calling convention ---------------------
def trl_call(reward, completions, **columns):
    """The reward called exactly as TRL's GRPOTrainer calls it (keywords only, trainer kwargs included)."""
    logged: dict[str, list] = {}
    scores = reward(
        prompts=["p"] * len(completions),
        completions=completions,
        completion_ids=[[1, 2]] * len(completions),
        trainer_state=None,
        log_extra=lambda column, values: logged.__setitem__(column, values),
        log_metric=lambda name, value: None,
        **columns,
    )
    return scores, logged


def warnings_of(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and r.name == "rewardsmith.reward"]


def test_missing_gold_column_warns_once_naming_the_column_the_arrivals_and_the_setting(caplog):
    reward = get_reward("math_equivalence")
    with caplog.at_level(logging.WARNING):
        scores, logged = trl_call(reward, [r"\boxed{72}", r"\boxed{5}"], answer=["#### 72", "#### 72"])
        again, _ = trl_call(reward, [r"\boxed{72}"], answer=["#### 72"])
    assert scores == [None, None] and again == [None]
    [warning] = warnings_of(caplog)
    assert "2 of 2 samples unscorable" in warning
    assert "no column 'solution'" in warning and "answer, completion_ids, prompt" in warning
    assert "set gold_column" in warning
    assert all("set gold_column" in reason for reason in logged["math_equivalence_reason"])
    # another instance is another configuration: it says so too
    with caplog.at_level(logging.WARNING):
        trl_call(get_reward("math_equivalence"), [r"\boxed{72}"], answer=["#### 72"])
    assert len(warnings_of(caplog)) == 2


def test_gold_column_empty_in_every_row_warns_but_one_empty_row_does_not(caplog):
    reward = get_reward("math_equivalence")
    with caplog.at_level(logging.WARNING):
        some, _ = trl_call(reward, [r"\boxed{72}", r"\boxed{5}"], solution=["72", ""])
    assert some == [1.0, None] and warnings_of(caplog) == []
    with caplog.at_level(logging.WARNING):
        none, _ = trl_call(reward, [r"\boxed{72}", r"\boxed{5}"], solution=[None, None])
    assert none == [None, None]
    [warning] = warnings_of(caplog)
    assert "column 'solution' is empty in every row" in warning and "set gold_column" in warning


def test_composite_warns_through_the_reward_that_reads_the_column(caplog):
    spec = {"rewards": ["think_format", {"name": "math_equivalence", "config": {}}], "name": "fmt_and_math"}
    reward = get_reward("weighted_sum", spec)
    with caplog.at_level(logging.WARNING):
        scores, logged = trl_call(reward, [r"<think>a</think> \boxed{72}"], answer=["#### 72"])
    assert scores == [1.0]  # the format part scored; the math part is unscorable, and says why
    [warning] = warnings_of(caplog)
    assert "math_equivalence" in warning and "set gold_column" in warning
    assert "set gold_column" in logged["fmt_and_math_reason"][0]


# -- rewardsmith score: nothing scorable, or some unscorable, exits 1 with one line ---------------------------------
def run_score(tmp_path: Path, rows: list[dict], *args: str) -> subprocess.CompletedProcess[str]:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "h")}
    argv = [sys.executable, "-m", "rewardsmith", "score", "--data", str(data), "--out", str(tmp_path / "o.jsonl")]
    return subprocess.run([*argv, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)


def test_score_with_nothing_scorable_exits_1_saying_how_many_and_why(tmp_path):
    gsm8k = [{"question": "q", "answer": "#### 72", "completion": r"\boxed{72}"}] * 3
    proc = run_score(tmp_path, gsm8k, "--reward", "math_equivalence")
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("rewardsmith: nothing was scorable: all 3 samples unscorable: 3x no gold")
    assert "set gold_column" in last and "answer, question" in last
    assert "mean nan" not in proc.stdout and "3 samples: 0 scored" in proc.stdout
    assert sum(1 for line in proc.stderr.splitlines() if "no column 'solution'" in line) == 2  # warning + summary


def test_score_with_some_unscorable_exits_1_saying_how_many(tmp_path):
    rows = [{"task": "fmt", "completion": "<think>a</think> b"}, {"task": "chat", "completion": "hi"}]
    proc = run_score(tmp_path, rows, "--reward", "route", "--config", json.dumps({"routes": {"fmt": "think_format"}}))
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines() == ["rewardsmith: 1 of 2 samples unscorable: 1x no route for task='chat'"]
    assert "2 samples: 1 scored (mean 1.0000), 1 unscorable" in proc.stdout
