"""verifiers 0.4 (v1 task API): rewardsmith rewards as the rewards and metrics of a real verifiers environment.

verifiers 0.4 pins openai<3, which the dev set cannot hold, so it lives in its own virtual environment (the
``.ci/run`` step "verifiers environments" builds it at ``$REWARDSMITH_VERIFIERS_VENV``, default
``/opt/rewardsmith-verifiers``). The tests run ``tests/trainers/verifiers_v1_env.py`` with that environment's python
and compare what verifiers recorded with rewardsmith's own verdicts, computed here in the dev environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import rewardsmith
from rewardsmith.compose import build_reward

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "trainers" / "verifiers_v1_env.py"
VENV = Path(os.environ.get("REWARDSMITH_VERIFIERS_VENV", "/opt/rewardsmith-verifiers"))
PYTHON = VENV / "bin" / "python"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif("math_equivalence" not in rewardsmith.list_rewards(), reason="math family absent"),
]

#: (completion, gold) of the environment's rows (``verifiers_v1_env.ROWS``) and the verdicts expected:
#: math_equivalence (None: unscorable), think_format, tag_count.
TABLE = [
    ("<think>2 and 2</think> \\boxed{4}", "4", 1.0, 1.0, 0.5),
    ("<think>hm</think> \\boxed{7}", "6", 0.0, 1.0, 0.5),
    ("\\boxed{\\frac{1}{2}}", "0.5", 1.0, 0.0, 0.0),
    ("I would say 8.", "7", 0.0, 0.0, 0.0),
    ("<think>?</think> \\boxed{1}", "", None, 1.0, 0.5),  # no gold: unscorable, scored 0.0
]
WEIGHTED = {
    "name": "weighted_sum",
    "config": {"rewards": [{"name": "math_equivalence", "weight": 1.0}, {"name": "think_format", "weight": 0.25}]},
}


def venv_python() -> Path:
    if not PYTHON.exists():
        pytest.skip(
            f"no verifiers 0.4 environment at {VENV}: the .ci/run step 'verifiers environments' builds it "
            "(python3 -m venv /opt/rewardsmith-verifiers; its pip install 'verifiers==0.4.*' and pip install -e .)"
        )
    return PYTHON


def run_env(*args: str, timeout: float = 300) -> dict[str, Any]:
    env = {**os.environ, "REWARDSMITH_TEST_KEY": "test", "PYTHONPATH": ""}
    proc = subprocess.run(
        [str(venv_python()), str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env
    )
    assert proc.returncode == 0, f"verifiers side failed:\n{proc.stderr[-4000:]}"
    document = json.loads(proc.stdout.strip().splitlines()[-1])
    assert document["verifiers"].startswith("0.4."), f"the side environment has verifiers {document['verifiers']}"
    return document["result"]


def own(spec: Any, completions: list[str], golds: list[str]) -> list[float | None]:
    """rewardsmith's own scores, here in the dev environment."""
    return [r.score for r in build_reward(spec).details(completions, solution=[g or None for g in golds])]


def as_reward(score: float | None) -> float:
    return 0.0 if score is None else score  # an unscorable sample scores unscorable_score (0.0)


@pytest.fixture(scope="module")
def scored() -> dict[str, Any]:
    return run_env("score")


def test_the_table_is_rewardsmiths_own_verdicts():
    completions, golds = [r[0] for r in TABLE], [r[1] for r in TABLE]
    assert own("math_equivalence", completions, golds) == [r[2] for r in TABLE]
    assert own("think_format", completions, golds) == [r[3] for r in TABLE]
    assert own("tag_count", completions, golds) == [r[4] for r in TABLE]


def test_task_rewards_and_metrics_score_like_rewardsmith(scored):
    completions, golds = [r[0] for r in TABLE], [r[1] for r in TABLE]
    weighted = own(WEIGHTED, completions, golds)
    for row, trace, blended in zip(TABLE, scored["tasks"], weighted, strict=True):
        _, _, math, think, tags = row
        assert trace["errors"] == []
        assert trace["rewards"]["correct"] == [as_reward(math), 1.0]  # named after the task attribute
        assert trace["rewards"]["formatted"] == [think, 0.5]
        assert trace["rewards"]["blended"] == [blended, 0.0]  # rewardsmith's weighted_sum as one reward
        assert trace["reward"] == pytest.approx(as_reward(math) + 0.5 * think)  # verifiers' weighted sum
        assert trace["metrics"]["tags"] == tags  # a metric: recorded, not summed
        assert trace["metrics"]["correct_unscorable"] == float(math is None)
        assert trace["reasons"]["correct"]["score"] == math
    unscorable = scored["tasks"][4]["reasons"]["correct"]["reason"]
    assert "solution" in unscorable  # the reason names the missing gold column


def test_the_side_environment_agrees_with_the_dev_environment(scored):
    completions, golds = [r[0] for r in TABLE], [r[1] for r in TABLE]
    there = scored["own"]
    assert [v["score"] for v in there["math_equivalence"]] == own("math_equivalence", completions, golds)
    assert [v["score"] for v in there["weighted"]] == own(WEIGHTED, completions, golds)


def test_task_rubric_is_the_legacy_rubrics_weighted_sum(scored):
    for row, trace, task_trace in zip(TABLE, scored["rubric"], scored["tasks"], strict=True):
        _, _, math, think, _ = row
        assert trace["rewards"] == {"math_equivalence": [as_reward(math), 1.0], "think_format": [think, 0.5]}
        assert trace["reward"] == task_trace["reward"]


def test_a_reward_plugged_by_import_path_through_the_task_config(scored):
    for row, trace in zip(TABLE, scored["plugged"], strict=True):
        assert trace["rewards"]["plugged"] == [row[3], 2.0]  # think_format, with the config's weight
        assert trace["reward"] == pytest.approx(as_reward(row[2]) + 0.5 * row[3] + 2.0 * row[3])


def test_real_rollouts_through_the_interception_server_are_scored(fault_server):
    answers = {
        "2+2?": "<think>easy</think> \\boxed{4}",
        "3+3?": "\\boxed{7}",
        "1/2 as a decimal?": "<think>half</think> \\boxed{0.5}",
        "10-3?": "<think>7</think> \\boxed{3}",
        "No gold?": "<think>x</think> \\boxed{1}",
    }
    for question, answer in answers.items():
        fault_server.push_when(question, f"answer:{answer}")
    result = run_env("rollout", fault_server.base_url)
    asked = [r["messages"][-1]["content"] for r in fault_server.requests]
    assert sorted(asked) == sorted(answers) and {r["model"] for r in fault_server.requests} == {"m"}
    replies = [answers[q] for q in answers]
    golds = [t["answer"] for t in result["tasks"]]
    math, think = own("math_equivalence", replies, golds), own("think_format", replies, golds)
    assert math == [1.0, 0.0, 1.0, 0.0, None] and think == [1.0, 0.0, 1.0, 1.0, 1.0]
    for trace, reply, m, t in zip(result["tasks"], replies, math, think, strict=True):
        assert trace["errors"] == [] and trace["reply"] == reply
        assert trace["rewards"]["correct"] == [as_reward(m), 1.0] and trace["rewards"]["formatted"] == [t, 0.5]
        assert trace["reward"] == pytest.approx(as_reward(m) + 0.5 * t)
        assert trace["metrics"]["correct_unscorable"] == float(m is None)


def test_v1_members_without_verifiers_name_the_fix(monkeypatch):
    from rewardsmith.adapters.trainers.verifiers import task_metric, task_reward, task_rubric

    monkeypatch.setitem(sys.modules, "verifiers", None)
    monkeypatch.setitem(sys.modules, "verifiers.v1", None)
    for make in (task_reward, task_metric, task_rubric):
        with pytest.raises(ImportError, match=r"verifiers>=0\.4,<0\.5"):
            make("think_format")
