"""A verifiers 0.4 environment scored by rewardsmith, run inside the verifiers side environment (not by pytest).

``tests/trainers/test_verifiers_v1.py`` runs ``python tests/trainers/verifiers_v1_env.py CASE`` with that
environment's python and reads one JSON document from stdout. The taskset is built from a small ``datasets``
dataset; its tasks carry rewardsmith rewards as ``@vf.reward``/``@vf.metric`` members. Cases:

- ``score``: each row's completion put on a trace (prompt, then the sampled assistant turn) and scored by
  verifiers' own ``Task.score`` (what its rollouts and ``vf-replay`` run), beside rewardsmith's own verdicts;
- ``rollout URL``: a real rollout per task (``vf.Agent`` on a local subprocess runtime, its interception server in
  between) against the OpenAI-compatible server at URL; this module's :class:`OneShotHarness` is the program the
  model runs in (one chat request from the host, since verifiers' own harnesses bootstrap with ``uv`` from the
  network).

Importable as the verifiers harness id ``verifiers_v1_env`` (its folder is on ``sys.path`` when it runs as a
script): ``__all__`` exports the one Harness.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
from typing import Any

import verifiers.v1 as vf
from datasets import Dataset
from verifiers.v1.trace import AgentInfo, TraceTask

from rewardsmith.adapters.trainers.verifiers import task_metric, task_reward, task_rubric
from rewardsmith.compose import build_reward

#: The rows: question, gold answer and the completion the scoring case puts on the trace.
ROWS = [
    {"question": "2+2?", "answer": "4", "completion": "<think>2 and 2</think> \\boxed{4}"},
    {"question": "3+3?", "answer": "6", "completion": "<think>hm</think> \\boxed{7}"},
    {"question": "1/2 as a decimal?", "answer": "0.5", "completion": "\\boxed{\\frac{1}{2}}"},
    {"question": "10-3?", "answer": "7", "completion": "I would say 8."},
    {"question": "No gold?", "answer": "", "completion": "<think>?</think> \\boxed{1}"},
]
WEIGHTED = {
    "name": "weighted_sum",
    "config": {"rewards": [{"name": "math_equivalence", "weight": 1.0}, {"name": "think_format", "weight": 0.25}]},
}
RUBRIC = [{"name": "math_equivalence", "weight": 1.0}, {"name": "think_format", "weight": 0.5}]


class MathData(vf.TaskData):
    answer: str


class MathTask(vf.Task[MathData]):
    correct = task_reward("math_equivalence")
    formatted = task_reward("think_format", weight=0.5)
    blended = task_reward(WEIGHTED, weight=0.0)  # recorded beside the others, adds nothing
    tags = task_metric("tag_count")


#: A reward plugged by import path through the task config (``rewards.<name>.fn``), as a run's TOML can.
PLUGGED = task_reward("think_format")
PLUGGED_CONFIG = vf.TaskConfig(rewards={"plugged": {"fn": "verifiers_v1_env:PLUGGED", "weight": 2.0}})


class RubricTask(task_rubric(RUBRIC), vf.Task[MathData]):
    pass


class MathConfig(vf.TasksetConfig):
    pass


class MathTaskset(vf.Taskset[MathTask, MathConfig]):
    def load(self):
        dataset = Dataset.from_list(ROWS)
        for row in dataset:
            yield MathTask(MathData(prompt=row["question"], answer=row["answer"]), self.config.task)


class OneShotHarness(vf.Harness[vf.HarnessConfig]):
    """One chat request per rollout, sent from the host to the rollout's interception endpoint."""

    NEEDS_CONTAINER = False
    EXECUTES_CODE = False

    async def setup(self, runtime: Any) -> None:
        return None

    async def launch(self, ctx, trace, runtime, endpoint, secret, mcp_urls, data, **_: Any) -> vf.ProgramResult:
        from openai import AsyncOpenAI

        system_prompt, prompt = self.resolve_prompt(data)
        messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages.extend(m.model_dump(exclude_none=True) for m in prompt or [])
        async with AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0) as client:
            await client.chat.completions.create(model=ctx.model, messages=messages)
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")


def own_verdicts(spec: Any, completions: list[str], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """rewardsmith's own verdicts for the same samples, with the gold where math_equivalence reads it."""
    columns = {"solution": [r["answer"] or None for r in rows], "prompts": [r["question"] for r in rows]}
    columns = {k: v for k, v in columns.items() if any(x is not None for x in v)}
    results = build_reward(spec).details(completions, **columns)
    return [{"score": r.score, "reason": r.reason} for r in results]


def trace_for(task: vf.Task, completion: str) -> vf.Trace:
    nodes = [
        vf.MessageNode(message=vf.UserMessage(content=task.data.prompt)),
        vf.MessageNode(parent=0, message=vf.AssistantMessage(content=completion), sampled=True),
    ]
    return vf.Trace(
        task=TraceTask(type=type(task).__name__, data=task.data), agent=AgentInfo(config=vf.AgentConfig()), nodes=nodes
    )


def scored(trace: vf.Trace) -> dict[str, Any]:
    return {
        "reward": trace.reward,
        "rewards": {k: None if r is None else [r.score, r.weight] for k, r in trace.rewards.items()},
        "metrics": trace.metrics,
        "reasons": trace.info.get("rewardsmith", {}),
        "errors": [e.model_dump(mode="json") for e in trace.errors],
        "reply": trace.last_reply,
    }


async def score_case() -> dict[str, Any]:
    out: dict[str, Any] = {"tasks": [], "rubric": []}
    for task, row in zip(MathTaskset(MathConfig()), ROWS, strict=True):
        trace = trace_for(task, row["completion"])
        await task.score(trace)
        out["tasks"].append({"idx": task.data.idx, **scored(trace)})
        rubric_task = RubricTask(task.data)
        trace = trace_for(rubric_task, row["completion"])
        await rubric_task.score(trace)
        out["rubric"].append(scored(trace))
        plugged_task = MathTask(task.data, PLUGGED_CONFIG)
        trace = trace_for(plugged_task, row["completion"])
        await plugged_task.score(trace)
        out.setdefault("plugged", []).append(scored(trace))
    completions = [r["completion"] for r in ROWS]
    out["own"] = {
        name: own_verdicts(spec, completions, ROWS)
        for name, spec in [("math_equivalence", "math_equivalence"), ("think_format", "think_format"),
                           ("weighted", WEIGHTED), ("tag_count", "tag_count")]
    }  # fmt: skip
    return out


async def rollout_case(base_url: str) -> dict[str, Any]:
    harness = vf.HarnessConfig(id="verifiers_v1_env")  # this file, importable from its own folder
    client = vf.EvalClientConfig(base_url=base_url, api_key_var="REWARDSMITH_TEST_KEY")
    config = vf.AgentConfig(model="m", harness=harness, runtime=vf.SubprocessConfig(), client=client)
    out: dict[str, Any] = {"tasks": []}
    async with vf.Agent(config) as agent:
        for task in MathTaskset(MathConfig()):
            trace = await agent.run(task)
            out["tasks"].append({"idx": task.data.idx, "answer": task.data.answer, **scored(trace)})
    return out


__all__ = ["OneShotHarness"]

if __name__ == "__main__":
    case, *args = sys.argv[1:]
    result = asyncio.run(score_case() if case == "score" else rollout_case(*args))
    print(json.dumps({"verifiers": importlib.metadata.version("verifiers"), "result": result}))
