"""NeMo Gym's ``/verify`` on ``rewardsmith serve``: NeMo Gym 0.7.0's own models build the requests and read the answers.

nemo-gym 0.7.0 declares Python >= 3.13.14 and pins openai 2.44, so it lives in its own virtual environment
(``$REWARDSMITH_NEMO_GYM_VENV``, default ``/opt/rewardsmith-nemo-gym``, Python 3.13, installed with the version check
overridden). ``nemo_gym_client.py`` runs there against a real server started here; the error paths and the request
mapping are checked here.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.extras import require_extras

require_extras("serve")

import httpx

from rewardsmith.adapters.protocols import nemo_gym
from rewardsmith.adapters.runtime.serve.process import ServerProcess
from rewardsmith.types import RewardResult

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("REWARDSMITH_NEMO_GYM_VENV", "/opt/rewardsmith-nemo-gym"))
SPEC = {"rewards": [{"name": "math_equivalence", "weight": 1.0}, {"name": "think_format", "weight": 0.25}]}

#: (output_text parts joined by "|", gold, expected reward (None: masked), components, why)
TABLE = [
    ("<think>2 and 2</think>| \\boxed{4}", "4", 1.25, {"math_equivalence": 1.0, "think_format": 1.0}, "two text parts"),
    ("<think>hm</think> \\boxed{5}", "4", 0.25, {"math_equivalence": 0.0, "think_format": 1.0}, "wrong answer"),
    ("\\boxed{\\frac{1}{2}}", "0.5", 1.0, {"math_equivalence": 1.0, "think_format": 0.0}, "no reasoning block"),
    ("<think>x</think> \\boxed{4}", "", None, {"think_format": 1.0}, "empty gold: masked, never a silent 0"),
]


def message(text: str) -> dict[str, Any]:
    parts = [{"type": "output_text", "text": t, "annotations": []} for t in text.split("|")]
    return {"type": "message", "id": "m", "role": "assistant", "status": "completed", "content": parts}


def body(text: str, **fields: Any) -> dict[str, Any]:
    output = [{"type": "reasoning", "id": "r", "summary": []}, message(text)]
    return {"responses_create_params": {"input": "What is 2 + 2?"}, "response": {"id": "x", "output": output}, **fields}


@pytest.fixture(scope="module")
def server():
    with ServerProcess(SPEC) as running:
        yield running.url


@pytest.mark.slow
def test_nemo_gym_models_build_the_requests_and_read_the_answers(server):
    python = VENV / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no nemo-gym environment at {VENV} (see the module docstring and docs/integrations/nemo-gym.md)")
    cases = [{"text": text, "solution": gold} for text, gold, *_ in TABLE]
    cases[1]["calls"] = [["add", '{"a": 2, "b": 2}']]
    proc = subprocess.run(
        [str(python), str(ROOT / "tests" / "protocols" / "nemo_gym_client.py"), server],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    for record, (_, _, reward, components, why) in zip(result["cases"], TABLE, strict=True):
        assert record["status"] == 200, (why, record["answer"])
        assert record["echoed"], why  # the task field, the response and NeMo Gym's private keys come back
        assert record["answer"]["reward_components"] == components, why
        if reward is None:
            assert record["mask_sample"] is True and record["failure_kind"] == "verifier_error", why
            assert record["answer"]["_ng_failure_class"] == "verifier_error"
            assert record["answer"]["instance_config"] == {"mask_sample": True}
            assert "math_equivalence" in record["answer"]["failure_reason"]
        else:
            assert (record["reward"], record["mask_sample"], record["components"]) == (reward, False, components), why
    # NeMo Gym's aggregation leaves the masked sample out of the quality metrics and counts it as coverage
    metrics = result["metrics"]["agent_metrics"]
    assert metrics["mean/reward"] == pytest.approx((1.25 + 0.25 + 1.0) / 3)
    assert metrics["coverage/masked_rollouts"] == 1 and metrics["coverage/measured_rollouts"] == 3


@pytest.mark.slow
@pytest.mark.parametrize(
    ("request_body", "status", "message"),
    [
        (body("x", solution="4", response_tool_calls=[]), 422, "'response_tool_calls' clashes"),
        (body("x", solution="4", completions="y"), 422, "'completions' cannot be a column"),
        ({"responses_create_params": {}, "solution": "4"}, 422, "response: Field required"),
        ({"responses_create_params": {}, "response": {"output": "text"}}, 422, "response.output"),
    ],
)
def test_requests_the_spec_cannot_score_are_refused_in_one_line(server, request_body, status, message):
    answer = httpx.post(f"{server}/verify", json=request_body, timeout=60)
    assert answer.status_code == status
    assert message in answer.json()["error"]


def test_the_completion_is_the_message_text_and_tool_calls_are_a_column():
    call = {"type": "function_call", "name": "add", "arguments": '{"a": 1}', "call_id": "c1"}
    request = nemo_gym.VerifyRequest.model_validate(
        {
            **body("<think>a</think>|\\boxed{4}", solution="4", _ng_task_index=3, reward=0.0, mask_sample=True),
            "response": {"output": [call, message("<think>a</think>|\\boxed{4}")]},
        }
    )
    seen: dict[str, Any] = {}

    async def score(name: str, completions: list[Any], columns: dict[str, list[Any]]) -> list[RewardResult]:
        seen[name] = (completions, columns)
        return [RewardResult(score=1.0, reason="ok")]

    answer = asyncio.run(nemo_gym.verify(request, [("a", 1.0), ("b", 0.5)], score))
    completions, columns = seen["a"]
    assert completions == ["<think>a</think>\\boxed{4}"]
    # task fields only: not the protocol's keys, not a stored verdict's, not NeMo Gym's private ones
    calls = [[{"name": "add", "arguments": '{"a": 1}', "call_id": "c1"}]]
    assert columns == {"solution": ["4"], "response_tool_calls": calls}
    assert (answer["reward"], answer["mask_sample"], answer["_ng_task_index"]) == (1.5, False, 3)
    assert answer["reward_components"] == {"a": 1.0, "b": 1.0}
