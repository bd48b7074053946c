"""OpenRLHF multi-turn agents: an ``AgentExecutor`` whose every step is scored by a reward spec, turn by turn.

OpenRLHF (0.11) runs agents from a Python file named by ``--train.agent_func_path``; the file must define
``AgentExecutor``, which OpenRLHF builds with no arguments. Its ``MultiTurnAgentExecutor`` makes one
``AgentInstance`` per prompt, calls ``reset({"observation", "label"})``, then ``step(...)`` after each generation,
adds up each step's ``rewards`` into the sample's reward and stops at ``done``. The agent file is two lines::

    from rewardsmith.adapters.trainers.openrlhf_agent import agent_executor
    AgentExecutor = agent_executor("rewards.yaml", max_turns=3, stop_at=1.0, follow_up="\\nCheck it and answer again.")

Each step's reward is the value of the turn just taken (:func:`rewardsmith.steps.step_details`): per-turn terms pay
every turn, an outcome term pays on the turn whose answer it judges. OpenRLHF's ``label`` fills the spec's one gold
column, or, given as a JSON object, one column per key (as ``rewardsmith serve`` reads labels). OpenRLHF needs a
number: an unscorable step scores ``unscorable_score`` (0.0 unless set) and is counted in ``extra_logs``
(``unscorable_steps``) so it can be told from a wrong answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rewardsmith.adapters.options import unscorable_as
from rewardsmith.adapters.spec import load_spec
from rewardsmith.bridge import to_async
from rewardsmith.reward import Reward
from rewardsmith.steps import step_details


def label_columns(reward: Reward, label: Any) -> dict[str, Any]:
    """OpenRLHF's label as the spec's columns: a JSON object's keys, else the one gold column."""
    if isinstance(label, str) and label.lstrip().startswith("{"):
        try:
            parsed = json.loads(label)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
    if isinstance(label, dict):
        return dict(label)
    gold = tuple(reward.gold_columns)
    if len(gold) != 1:
        raise ValueError(
            f"a plain label fills the spec's one gold column, but the spec reads {list(gold) or 'none'}: "
            "give labels as JSON objects with one key per column"
        )
    return {gold[0]: label}


def agent_executor(
    spec: str | Path | dict[str, Any] | list[Any],
    *,
    max_turns: int = 1,
    stop_at: float | None = None,
    follow_up: str = "",
    unscorable_score: float | None = None,
) -> type:
    """An ``AgentExecutor`` class for OpenRLHF's agent file, scoring every step with ``spec``."""
    from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor

    if max_turns < 1:
        raise ValueError("max_turns must be at least 1")
    reward = load_spec(spec).combined()  # built once: OpenRLHF makes an instance per prompt

    class RewardsmithAgentInstance(AgentInstanceBase):
        """One prompt's episode: the transcript so far, scored after each turn."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.transcript: list[dict[str, Any]] = []
            self.columns: dict[str, Any] = {}
            self.turns = 0
            self.total = 0.0
            self.unscorable = 0

        async def reset(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            self.transcript = [{"role": "user", "content": states["observation"]}]
            self.columns = label_columns(reward, states.get("label"))
            return states

        async def step(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            import torch

            self.turns += 1
            self.transcript.append({"role": "assistant", "content": states["action_text"]})
            columns: dict[str, Any] = {k: [v] for k, v in self.columns.items()}
            details = await to_async(step_details, reward, [self.transcript], **columns)
            result = details[0][-1]
            value = unscorable_as(result.score, unscorable_score)
            self.total += value
            self.unscorable += result.score is None
            stop = stop_at is not None and result.score is not None and result.score >= stop_at
            done = self.turns >= max_turns or stop
            feedback = "" if done else follow_up
            if feedback:
                self.transcript.append({"role": "user", "content": feedback})
            return {
                "rewards": torch.tensor([value]),
                "scores": torch.tensor([self.total]),
                "environment_feedback": feedback,
                "done": done,
                "sampling_params": states.get("sampling_params"),
                "extra_logs": {
                    "turns": torch.tensor([float(self.turns)]),
                    "unscorable_steps": torch.tensor([float(self.unscorable)]),
                },
            }

    class AgentExecutor(MultiTurnAgentExecutor):
        def __init__(self) -> None:
            super().__init__(RewardsmithAgentInstance)

    return AgentExecutor
