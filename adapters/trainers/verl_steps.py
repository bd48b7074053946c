"""Per-turn rewards of a verl multi-turn rollout, delivered where verl 0.9.1 passes them on: ``reward_extra_info``.

verl 0.9.1 trains one reward per sample (placed on the response's last token); its agent loop collects
``turn_scores`` from an interaction, but a reward function has no per-turn channel into the advantage. What verl does
carry through is the result dict's other keys: ``reward_extra_info``, logged and dumped with the generations. A verl
route with ``steps`` therefore:

- reads the rollout back into messages (:func:`transcript_of`): verl's tool agent loop hands ``compute_score`` the
  decoded response, every assistant turn and the tool responses between them in one text, in the Hermes format of
  its default tool parser (calls as ``<tool_call>{"name": ..., "arguments": ...}</tool_call>``, answers as
  ``<tool_response>...</tool_response>`` in a user turn whose ``<|im_start|>user`` / ``<|im_start|>assistant``
  markers decoding drops, leaving the role words);
- scores them with :func:`rewardsmith.steps.step_details` (the route's reward, ``credit`` and ``gamma`` as
  everywhere else), and returns one number for verl to train, folded as :class:`StepRewardFunc` folds for TRL
  (``aggregate``: the sum of the turns, their mean or the last; ``None`` when any turn is unscorable);
- puts the per-turn values in the result as ``step_rewards``: JSON text (``"[1.0, 0.0, 1.0]"``), because verl stacks
  each ``reward_extra_info`` key into one ``np.array`` over the batch and lists of different lengths (transcripts of
  different turn counts) do not stack, while text does. The key is not ``turn_scores``: the agent loop's own extra
  field of that name is written over a reward key of the same name when it assembles the batch.

>>> transcript_of('<tool_call>{"name": "run_python", "arguments": {"code": "x = 1"}}</tool_call>'
...               'user\\n<tool_response>\\n\\n</tool_response>\\nassistant\\nDone.')[2]
{'role': 'assistant', 'content': 'Done.'}
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rewardsmith.adapters.trainers.trl_steps import fold
from rewardsmith.reward import Reward, RewardConfig
from rewardsmith.steps import step_details
from rewardsmith.types import RewardResult

#: the result key that carries the per-turn values
STEPS_KEY = "step_rewards"

_RESPONSES = re.compile(r"(?:\s*<tool_response>.*?</tool_response>)+", re.DOTALL)
_RESPONSE = re.compile(r"<tool_response>\n?(.*?)\n?</tool_response>", re.DOTALL)
_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"\\]*)"')
_USER_BEFORE = re.compile(r"\n?\s*user\s*$")
_ASSISTANT_AFTER = re.compile(r"^\s*assistant\s*\n")


class VerlSteps(BaseModel):
    """How a route's per-turn values become verl's one number per sample."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    credit: Literal["final", "every", "discounted"] = Field("final", description="outcome credit to the turns")
    gamma: float = Field(1.0, gt=0.0, le=1.0, description="discount of 'discounted' credit")
    aggregate: Literal["sum", "mean", "last"] = Field("sum", description="the number verl trains: of the turns")


def transcript_of(text: str) -> list[dict[str, Any]]:
    """OpenAI-style messages of a decoded Hermes-format rollout: assistant turns split at the tool responses."""
    messages: list[dict[str, Any]] = []
    position = 0
    for group in _RESPONSES.finditer(text):
        turn = _USER_BEFORE.sub("", text[position : group.start()])
        messages.append(_assistant(_ASSISTANT_AFTER.sub("", turn) if messages else turn))
        for answer in _RESPONSE.finditer(group.group(0)):
            messages.append({"role": "tool", "content": answer.group(1)})
        position = group.end()
    rest = text[position:]
    messages.append(_assistant(_ASSISTANT_AFTER.sub("", rest) if messages else rest))
    return messages


def _assistant(text: str) -> dict[str, Any]:
    calls = []
    for found in _CALL.finditer(text):
        body = found.group(1)
        try:
            call = json.loads(body)
        except ValueError:
            call = None
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            arguments = call.get("arguments")
            calls.append({"type": "function", "function": {"name": call["name"], "arguments": arguments}})
        else:  # kept with its raw text, so a reward sees the broken call (0.0), not a turn without one
            name = _NAME.search(body)
            calls.append({"type": "function", "function": {"name": name.group(1) if name else None,
                                                           "arguments": body}})  # fmt: skip
    content = _CALL.sub("", text).strip()
    return {"role": "assistant", "content": content, "tool_calls": calls} if calls else {
        "role": "assistant", "content": content}  # fmt: skip


class StepsReward(Reward[RewardConfig]):
    """A route's reward scored turn by turn on the decoded rollout; the result carries the per-turn values."""

    def __init__(self, inner: Reward, steps: VerlSteps) -> None:
        super().__init__()
        self.inner, self.steps = inner, steps
        self.__name__ = inner.__name__

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        transcripts = [transcript_of(text) if isinstance(text, str) else [] for text in completions]
        names = sorted({key for row in rows for key in row})
        columns = {key: [row.get(key) for row in rows] for key in names}
        details = step_details(self.inner, transcripts, credit=self.steps.credit, gamma=self.steps.gamma, **columns)
        results = []
        for turns in details:
            reason = " | ".join(f"turn {k}: {r.score} ({r.reason})" for k, r in enumerate(turns)) or "no turn"
            values = [r.score for r in turns]
            results.append(RewardResult(score=fold(turns, self.steps.aggregate), reason=reason, steps=values))
        return results


def steps_value(result: RewardResult) -> str:
    """The per-turn values a result carries, as the JSON text verl stacks (``"[]"`` for a sample of no step route)."""
    values = getattr(result, "steps", None)
    return json.dumps(values if isinstance(values, list) else [])
