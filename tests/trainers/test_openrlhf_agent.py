"""OpenRLHF 0.11's own MultiTurnAgentExecutor runs rewardsmith's AgentExecutor, loaded from an agent file the way
OpenRLHF loads it, and sums the per-step rewards. The generation engine is a stand-in: vLLM (OpenRLHF's engine)
does not run on a CPU-only machine, and the executor only reads ``outputs[0]`` (text, token ids, finish reason)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("openrlhf.utils.agent", reason="OpenRLHF's client modules (.ci/run installs openrlhf --no-deps)")

SPEC = {"rewards": [{"name": "per_turn", "config": {"reward": "think_format"}, "weight": 0.2},
                    {"name": "math_equivalence", "weight": 1.0}]}  # fmt: skip


class ScriptedEngine:
    """Answers each generate() with the next scripted text, tokenized by the real tokenizer."""

    def __init__(self, tokenizer, texts: list[str]) -> None:
        self.tokenizer, self.texts = tokenizer, list(texts)

    async def generate(self, prompt_ids, sampling_params, multi_modal_data=None):
        text = self.texts.pop(0)
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return SimpleNamespace(outputs=[SimpleNamespace(text=text, token_ids=ids, finish_reason="stop", logprobs=None)])


def load_agent_file(tmp_path: Path, spec_path: Path, **options) -> type:
    """The two-line agent file of the docs, loaded as OpenRLHF's _load_agent_executor loads it."""
    from openrlhf.utils.agent import AgentExecutorBase

    agent = tmp_path / "agent.py"
    agent.write_text(
        "from rewardsmith.adapters.trainers.openrlhf_agent import agent_executor\n"
        f"AgentExecutor = agent_executor({str(spec_path)!r}, **{options!r})\n"
    )
    spec = importlib.util.spec_from_file_location("agent_module", agent)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert issubclass(module.AgentExecutor, AgentExecutorBase)
    return module.AgentExecutor


def run(executor, tokenizer, texts, label):
    params = SimpleNamespace(max_tokens=None, logprobs=None)
    engine = ScriptedEngine(tokenizer, texts)
    return asyncio.run(executor.execute("What is 2 + 2?", label, params, 512, tokenizer, engine))


@pytest.fixture
def spec_path(tmp_path):
    path = tmp_path / "rewards.json"
    path.write_text(json.dumps(SPEC))
    return path


def test_the_executor_sums_each_turns_reward_and_stops_on_the_right_answer(tiny_model_dir, tmp_path, spec_path):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    executor = load_agent_file(tmp_path, spec_path, max_turns=3, stop_at=1.0, follow_up="\nCheck it.")()
    out = run(executor, tokenizer, ["<think>a</think> \\boxed{5}", "no think \\boxed{4}", "unused"], label="4")
    assert out["reward"] == pytest.approx(0.2 + 1.0)  # turn 1: format only; turn 2: the answer (format missed)
    assert len(out["action_ranges"]) == 2  # stopped at the right answer, the third text never generated
    assert float(out["extra_logs"]["turns"]) == 2.0 and float(out["extra_logs"]["unscorable_steps"]) == 0.0


def test_labels_as_json_columns_and_unscorable_steps_counted(tiny_model_dir, tmp_path, spec_path):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    executor = load_agent_file(tmp_path, spec_path, max_turns=2)()
    out = run(executor, tokenizer, ["<think>a</think> \\boxed{4}", "<think>b</think> \\boxed{4}"],
              label=json.dumps({"solution": "4"}))  # fmt: skip
    assert out["reward"] == pytest.approx(2 * 1.2)
    math_only = tmp_path / "math.json"
    math_only.write_text(json.dumps(["math_equivalence"]))
    unscorable = run(load_agent_file(tmp_path, math_only, max_turns=1)(), tokenizer, ["\\boxed{4}"],
                     label=json.dumps({"other": "4"}))  # fmt: skip
    # OpenRLHF needs a number: 0.0, counted as unscorable beside it (never a silent wrong-answer 0.0)
    assert unscorable["reward"] == 0.0 and float(unscorable["extra_logs"]["unscorable_steps"]) == 1.0
