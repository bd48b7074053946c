"""A real OpenEnv environment whose rubric is a rewardsmith spec, stepped through OpenEnv's own HTTP server.

Runs with the Python of the OpenEnv environment (``$REWARDSMITH_OPENENV_VENV``, openenv-core 0.3.0 and this
checkout installed): ``python openenv_env.py SPEC`` with the cases as JSON on stdin (``[{"task": ..., "message":
...}]``). The environment is the shape OpenEnv's docs give (``Environment`` with ``rubric=``, ``step()`` setting
``observation.reward = self._apply_rubric(action, observation)``); OpenEnv's ``create_fastapi_app`` serves it and
each case goes through ``POST /reset`` and ``POST /step`` as a client sends them. Prints one JSON object: what the
client received per case, and the per-term ``last_score`` of ``named_rubrics()`` after a direct step.
"""

from __future__ import annotations

import json
import sys

from fastapi.testclient import TestClient
from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

from rewardsmith.adapters.protocols.openenv import spec_rubric

TASKS = {"add": {"solution": "4"}, "half": {"solution": "0.5"}, "no_gold": {}}


class AnswerAction(Action):
    task: str
    message: str


class AnswerObservation(Observation):
    task: str = ""
    reason: str = ""


class MathEnv(Environment):
    def __init__(self) -> None:
        super().__init__(rubric=spec_rubric(sys.argv[1], columns=lambda action, obs: TASKS[action.task]))
        self._state = State(episode_id="episode", step_count=0)

    def reset(self, seed=None, episode_id=None, **kwargs) -> AnswerObservation:
        self._reset_rubric()
        return AnswerObservation()

    def step(self, action: AnswerAction, timeout_s=None, **kwargs) -> AnswerObservation:
        observation = AnswerObservation(task=action.task, done=True)
        observation.reward = self._apply_rubric(action, observation)
        observation.reason = observation.metadata["rewardsmith"]["reason"]
        return observation

    @property
    def state(self) -> State:
        return self._state


def main() -> dict:
    cases = json.loads(sys.stdin.read())
    client = TestClient(create_fastapi_app(MathEnv, AnswerAction, AnswerObservation))
    received = []
    for case in cases:
        assert client.post("/reset", json={}).status_code == 200
        answer = client.post("/step", json={"action": case})
        received.append({"status": answer.status_code, **answer.json()})
    env = MathEnv()
    env.step(AnswerAction(**cases[0]))
    terms = {name: rubric.last_score for name, rubric in env.rubric.named_rubrics()}
    return {"received": received, "terms": terms, "reward": env.rubric.last_score}


if __name__ == "__main__":
    print(json.dumps(main()))
