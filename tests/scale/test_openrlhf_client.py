"""OpenRLHF 0.11's own client against a real ``rewardsmith serve`` on 127.0.0.1 with its default settings.

OpenRLHF's rollout (``openrlhf.utils.agent.SingleTurnAgentExecutor.execute``) posts one request per sample,
for every sample of a rollout batch at once, retries a failed post five times one second apart and leaves
the sample's reward ``None`` when all fail; a ``None`` reward then crashes its experience merging. Here its
real ``execute`` runs (the installed ``openrlhf`` package, imported as OpenRLHF's rollout actor imports it),
with the tiny offline model's tokenizer; only the vLLM engine is stood in for, by one that "generates" a fixed
response per prompt. Every sample of a burst must come back with its own reward, as a number.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.extras import require_extras

require_extras("serve")

agent = pytest.importorskip(
    "openrlhf.utils.agent",
    reason="needs OpenRLHF's client: pip install --no-deps 'openrlhf==0.11.*' pylatexenc (see .ci/run)",
)

import httpx

from rewardsmith.adapters.runtime.serve.process import ServerProcess

pytestmark = pytest.mark.slow

SPEC = [{"name": "math_equivalence", "config": {"timeout_s": 5}}, "think_format"]


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
    """Stands in for vLLM's async engine: the response to each prompt is fixed by the test."""

    def __init__(self, tokenizer: Any, responses: dict[tuple[int, ...], str]) -> None:
        self.tokenizer = tokenizer
        self.responses = responses

    async def generate(self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None):
        text = self.responses[tuple(prompt_token_ids)]
        ids = self.tokenizer(text=text, add_special_tokens=False)["input_ids"]
        return Output([Generated(ids, text)])


def prompt_for(i: int) -> str:
    return f"<|im_start|>user\nWhat is {i} + 0? (case {i})<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def server():
    with ServerProcess(SPEC) as running:  # the defaults: no capacity flags
        yield running.url


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny_model_dir))


def metric(url: str, prefix: str) -> float:
    text = httpx.get(url + "/metrics", timeout=30).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(prefix))


def rejected(url: str) -> float:
    return metric(url, "rewardsmith_rejected_")


def batches(url: str) -> tuple[float, float]:
    """Batches started and samples in them, for the reward behind /get_reward."""
    label = '{reward="math_equivalence"}'
    return metric(url, f"rewardsmith_batch_samples_count{label}"), metric(url, f"rewardsmith_batch_samples_sum{label}")


def burst(url: str, tokenizer: Any, n: int) -> tuple[list[dict[str, Any]], list[float], float]:
    """``n`` rollouts finishing at once through OpenRLHF's executor; their outputs and expected rewards."""
    prompts = [prompt_for(i) for i in range(n)]
    expected = [1.0 if i % 3 else 0.0 for i in range(n)]  # every third answer is wrong: rewards are per sample
    answers = [str(i if i % 3 else i + 1) for i in range(n)]
    responses = {
        tuple(tokenizer(text=p, add_special_tokens=False)["input_ids"]): f"The answer is \\boxed{{{a}}}.<|im_end|>"
        for p, a in zip(prompts, answers, strict=True)
    }
    engine = ScriptedEngine(tokenizer, responses)
    executor = agent.SingleTurnAgentExecutor(url + "/get_reward")

    async def run() -> list[dict[str, Any]]:
        calls = [executor.execute(p, str(i), Sampling(), 256, tokenizer, engine) for i, p in enumerate(prompts)]
        return await asyncio.gather(*calls)

    started = time.monotonic()
    outputs = asyncio.run(run())
    return outputs, expected, time.monotonic() - started


@pytest.mark.parametrize("n", [1024, 4096])
def test_a_burst_of_single_sample_requests_gets_every_reward(server: str, tokenizer: Any, n: int) -> None:
    import torch

    refused_before, (batches_before, samples_before) = rejected(server), batches(server)
    outputs, expected, elapsed = burst(server, tokenizer, n)
    batches_after, samples_after = batches(server)
    n_batches = batches_after - batches_before
    print(f"{n} samples through OpenRLHF's client in {elapsed:.1f} s, {n_batches:g} batches")
    missing = [i for i, out in enumerate(outputs) if out["reward"] is None]
    assert not missing, f"{len(missing)} of {n} samples kept reward None (first: {missing[:5]})"
    got = [out["reward"] for out in outputs]
    assert all(isinstance(r, list) and len(r) == 1 for r in got)
    assert [r[0] for r in got] == expected
    assert [out["scores"] for out in outputs] == got
    for out in outputs[:50]:
        torch.tensor([out["reward"]])  # what OpenRLHF does with them: numbers only
        for value in out["extra_logs"].values():
            torch.tensor([value])
    assert all(out["extra_logs"] == {"unscorable": [0.0]} for out in outputs)
    assert rejected(server) == refused_before  # not one 429 for OpenRLHF to retry
    assert samples_after - samples_before == n
    assert n_batches < n / 2, n_batches  # one-sample requests were scored in batches


def test_unscorable_samples_reach_openrlhf_as_numbers_with_a_flag(server: str, tokenizer: Any) -> None:
    prompts = [prompt_for(i) for i in range(3)]
    responses = {
        tuple(tokenizer(text=p, add_special_tokens=False)["input_ids"]): "The answer is \\boxed{1}.<|im_end|>"
        for p in prompts
    }
    executor = agent.SingleTurnAgentExecutor([server + "/get_reward", server + "/get_reward"])
    engine = ScriptedEngine(tokenizer, responses)
    labels = ["1", None, "1"]  # a row without its gold answer: unscorable

    async def run() -> list[dict[str, Any]]:
        return await asyncio.gather(
            *(
                executor.execute(p, label, Sampling(), 256, tokenizer, engine)
                for p, label in zip(prompts, labels, strict=True)
            )
        )

    outputs = asyncio.run(run())
    rewards = [out["reward"] for out in outputs]
    flags = [out["extra_logs"]["unscorable"] for out in outputs]
    assert rewards[0] == rewards[2] == [1.0]
    assert rewards[1] == [0.0] and flags == [[0.0], [1.0], [0.0]]  # the documented unscorable value, flagged


def test_the_client_module_is_openrlhf_0_11() -> None:
    from importlib.metadata import version

    assert re.match(r"0\.11\.", version("openrlhf")), version("openrlhf")
