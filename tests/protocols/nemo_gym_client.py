"""NeMo Gym 0.7.0's own models against a running ``rewardsmith serve``: requests built and answers read by them.

Runs with the Python of the NeMo Gym environment (``$REWARDSMITH_NEMO_GYM_VENV``, Python 3.13):
``python nemo_gym_client.py URL``. Each case's request is a NeMo Gym ``BaseVerifyRequest`` subclass with a task
field (as its math servers declare ``expected_answer``), holding a ``NeMoGymResponse``; it is posted as NeMo Gym's
server client posts a model (``model_dump(mode="json")``). The answer is validated by ``BaseVerifyResponse`` and
``BaseMultiRewardVerifyResponse``, and all answers go through NeMo Gym's own ``compute_aggregate_metrics`` (masked
samples out of the quality metrics). Prints one JSON object.
"""

from __future__ import annotations

import json
import sys
import urllib.request

from nemo_gym.base_resources_server import BaseMultiRewardVerifyResponse, BaseVerifyRequest, BaseVerifyResponse
from nemo_gym.global_config import ROLLOUT_INDEX_KEY_NAME, TASK_INDEX_KEY_NAME
from nemo_gym.openai_utils import NeMoGymResponse, NeMoGymResponseCreateParamsNonStreaming
from nemo_gym.reward_profile import compute_aggregate_metrics


class MathVerifyRequest(BaseVerifyRequest):
    solution: str


def response(text: str, calls: list[tuple[str, str]]) -> NeMoGymResponse:
    output: list[dict] = [
        {"type": "function_call", "name": name, "arguments": args, "call_id": f"call_{i}"}
        for i, (name, args) in enumerate(calls)
    ]
    output.append(
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": part, "annotations": []} for part in text.split("|")],
        }
    )
    return NeMoGymResponse.model_validate(
        {
            "id": "resp_1",
            "created_at": 0.0,
            "model": "policy",
            "object": "response",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }
    )


def post(url: str, body: dict) -> tuple[int, dict]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def main(url: str) -> dict:
    cases = json.loads(sys.stdin.read())
    out = []
    answers = []
    for index, case in enumerate(cases):
        request = MathVerifyRequest(
            responses_create_params=NeMoGymResponseCreateParamsNonStreaming(input="What is 2 + 2?"),
            response=response(case["text"], [tuple(c) for c in case.get("calls", [])]),
            solution=case["solution"],
        )
        # the rollout's keys as NeMo Gym's collector tags a row: private to it, so they must come back untouched
        keys = {TASK_INDEX_KEY_NAME: index, ROLLOUT_INDEX_KEY_NAME: 0}
        status, answer = post(f"{url}/verify", {**request.model_dump(mode="json"), **keys})
        record = {"status": status, "answer": answer}
        if status == 200:
            verified = BaseVerifyResponse.model_validate(answer)
            record["reward"] = verified.reward
            record["mask_sample"] = verified.mask_sample
            record["failure_kind"] = verified.failure_kind
            if not verified.mask_sample:
                record["components"] = BaseMultiRewardVerifyResponse.model_validate(answer).reward_components
            # the task field and the response come back as they went
            record["echoed"] = MathVerifyRequest.model_validate(answer) == request and keys.items() <= answer.items()
            answers.append(answer)
        out.append(record)
    metrics = compute_aggregate_metrics(answers)
    return {"cases": out, "metrics": json.loads(metrics.model_dump_json())}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
