"""A served weighted sum's parts as components: OpenRLHF 0.11's own client reads them from ``extra_logs``.

One real ``rewardsmith serve`` on 127.0.0.1 serves ``accuracy + 0.2 * format``. OpenRLHF's ``SingleTurnAgentExecutor``
turns every ``extra_logs`` value into a tensor and logs it beside the reward, so each part arrives as
``component/<name>``, a number (an unscorable part as the unscorable score); ``/v1/score`` answers the parts with
``None`` kept.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.extras import require_extras

require_extras("serve")

import httpx

from rewardsmith.adapters.runtime.serve.process import ServerProcess

pytestmark = pytest.mark.slow

SPEC = [
    {
        "name": "weighted_sum",
        "config": {
            "name": "graded",
            "rewards": [
                {"name": "math_equivalence", "label": "accuracy", "config": {"symbolic": False}},
                {"name": "think_format", "label": "format", "weight": 0.2},
            ],
        },
    }
]

# (response, label, reward, accuracy part, format part, why)
VERDICTS = [
    ("<think>3 + 4</think> \\boxed{7}", "7", 1.2, 1.0, 1.0, "right and well formed"),
    ("<think>3 + 4</think> \\boxed{8}", "7", 0.2, 0.0, 1.0, "wrong and well formed"),
    ("\\boxed{7}", "7", 1.0, 1.0, 0.0, "right, no reasoning block"),
    ("<think>3 + 4</think> \\boxed{7}", None, 0.2, None, 1.0, "no gold: accuracy unscorable, format still counts"),
]


@dataclass
class Generated:
    token_ids: list[int]
    text: str
    finish_reason: str = "stop"
    logprobs: Any = None


@dataclass
class Output:
    outputs: list[Generated]


@dataclass
class Sampling:
    max_tokens: int | None = 64
    logprobs: int | None = None


class ScriptedEngine:
    """Stands in for vLLM's async engine (the one part not run for real): a fixed response per prompt."""

    def __init__(self, tokenizer: Any, responses: dict[tuple[int, ...], str]) -> None:
        self.tokenizer = tokenizer
        self.responses = responses

    async def generate(self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None):
        text = self.responses[tuple(prompt_token_ids)]
        return Output([Generated(self.tokenizer(text=text, add_special_tokens=False)["input_ids"], text)])


@pytest.fixture(scope="module")
def server():
    with ServerProcess(SPEC) as running:
        yield running.url


def test_openrlhf_client_gets_each_part_in_extra_logs(server: str, tiny_model_dir: Path) -> None:
    import torch
    from transformers import AutoTokenizer

    agent = pytest.importorskip("openrlhf.utils.agent", reason="needs OpenRLHF's client (see .ci/run)")
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    prompts = [f"<|im_start|>user\nCase {i}: 3 + 4?<|im_end|>\n<|im_start|>assistant\n" for i in range(len(VERDICTS))]
    responses = {
        tuple(tokenizer(text=p, add_special_tokens=False)["input_ids"]): f"{response}<|im_end|>"
        for p, (response, *_) in zip(prompts, VERDICTS, strict=True)
    }
    executor = agent.SingleTurnAgentExecutor(server + "/get_reward")
    engine = ScriptedEngine(tokenizer, responses)

    async def run() -> list[dict[str, Any]]:
        calls = [
            executor.execute(p, label, Sampling(), 256, tokenizer, engine)
            for p, (_, label, *_) in zip(prompts, VERDICTS, strict=True)
        ]
        return await asyncio.gather(*calls)

    outputs = asyncio.run(run())
    for out, (_, _, reward, accuracy, fmt, why) in zip(outputs, VERDICTS, strict=True):
        logs = out["extra_logs"]
        assert out["reward"] == [pytest.approx(reward)], why
        assert logs == {
            "unscorable": [0.0],
            "component/accuracy": [0.0 if accuracy is None else accuracy],
            "component/format": [fmt],
        }, why
        for value in logs.values():
            torch.tensor([value])  # what OpenRLHF does with each extra_logs value


def test_score_endpoint_answers_the_parts_with_unscorable_kept(server: str) -> None:
    body = {
        "reward": "graded",
        "completions": [response for response, *_ in VERDICTS],
        "columns": {"solution": [label for _, label, *_ in VERDICTS]},
    }
    answer = httpx.post(server + "/v1/score", json=body, timeout=60)
    assert answer.status_code == 200, answer.text
    got = answer.json()
    assert got["scores"] == pytest.approx([reward for _, _, reward, *_ in VERDICTS])
    assert got["components"] == {
        "accuracy": [accuracy for *_, accuracy, _, _ in VERDICTS],
        "format": [fmt for *_, fmt, _ in VERDICTS],
    }
