"""The ``nemo_gym`` reward: a NeMo Gym resources server's ``/verify`` as a rewardsmith reward.

The server is NeMo Gym 0.7.0's own ``equivalence_rule`` resources server, run in NeMo Gym's environment
(``$REWARDSMITH_NEMO_GYM_VENV``, see ``test_nemo_gym.py``); what a masked or malformed answer becomes is checked on
the answers themselves.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from rewardsmith import get_reward
from rewardsmith.adapters.protocols.nemo_gym_reward import read_answer, verify_request

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("REWARDSMITH_NEMO_GYM_VENV", "/opt/rewardsmith-nemo-gym"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def resources_server():
    python = VENV / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no nemo-gym environment at {VENV} (see tests/protocols/test_nemo_gym.py)")
    port = free_port()
    script = ROOT / "tests" / "protocols" / "nemo_gym_server.py"
    proc = subprocess.Popen(
        [str(python), str(script), str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": ""},
    )
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stdout.read().decode()[-3000:] if proc.stdout else ""
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.3)
        else:
            raise AssertionError("NeMo Gym's resources server did not listen within 180 s")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.slow
def test_nemo_gym_own_server_scores_and_a_refused_row_is_unscorable(resources_server):
    reward = get_reward("nemo_gym", {"url": resources_server, "max_attempts": 1})
    results = reward.details(
        ["Paris", "  PARIS ", "London", "Paris"],
        prompt=["Capital of France?"] * 4,
        expected_answer=["paris", "paris", "paris", None],
    )
    assert [r.score for r in results] == [1.0, 1.0, 0.0, None]
    # NeMo Gym's request model requires expected_answer as text: its 422 is the reason, never a 0
    assert "HTTP 422" in results[3].reason and "expected_answer" in results[3].reason


def test_a_server_that_cannot_be_reached_is_unscorable():
    reward = get_reward("nemo_gym", {"url": f"http://127.0.0.1:{free_port()}", "max_attempts": 2, "backoff_s": 0})
    (result,) = reward.details(["Paris"], expected_answer=["paris"])
    assert result.score is None and "/verify" in result.reason


#: (verify answer, expected score (None: unscorable), why)
ANSWERS = [
    ({"reward": 1.0}, 1.0, "the reward"),
    ({"reward": 0}, 0.0, "an integer reward"),
    ({"reward": 0.0, "mask_sample": True, "failure_kind": "judge_failed", "failure_reason": "timeout"}, None, "masked"),
    ({"reward": None}, None, "no reward"),
    ({"reward": "1"}, None, "a reward that is text"),
    ({"reward": True}, None, "a boolean is not a reward"),
    ({"reward": float("nan")}, None, "NaN"),
    ([1.0], None, "not an object"),
]


@pytest.mark.parametrize(("answer", "expected", "why"), ANSWERS, ids=[a[2] for a in ANSWERS])
def test_what_an_answer_scores(answer, expected, why):
    result = read_answer(answer)
    assert result.score == expected, why
    if expected is None:
        assert result.reason.startswith("nemo_gym: ")


def test_masked_reason_names_the_failure():
    result = read_answer({"reward": 0.0, "mask_sample": True, "failure_kind": "judge_failed", "failure_reason": "x"})
    assert result.reason == "nemo_gym: masked (judge_failed): x"


def test_the_request_carries_the_prompt_the_completion_and_the_task_fields():
    body = verify_request("Paris", {"prompt": "Capital?", "expected_answer": "paris", "id": 7}, "prompt")
    assert body["responses_create_params"] == {"input": "Capital?"}
    assert body["response"]["output"][0]["content"][0]["text"] == "Paris"
    assert (body["expected_answer"], body["id"]) == ("paris", 7) and "prompt" not in body
