"""NeMo Gym's ``/verify`` (nemo-gym 0.7.0, ``nemo_gym/base_resources_server.py``), answered by a reward spec.

The request is a ``BaseVerifyRequest``: ``responses_create_params`` (what the policy was asked), ``response`` (the
OpenAI Responses object it produced) and the task's own fields beside them (``expected_answer``, ``solution``,
...). Here the completion is the text of the response's ``message`` output items (their ``output_text`` parts,
joined, as NeMo Gym's own math server reads it), the response's ``function_call`` items are the column
``response_tool_calls`` (``[{"name", "arguments", "call_id"}]``) for rewards that check tool use, and every task
field is a gold column. The answer is the request echoed back with ``reward`` (the spec's weighted sum) and
``reward_components`` (each term's own score), the shape of ``BaseMultiRewardVerifyResponse``, plus
``reward_reasons`` for people.

An unscorable sample (:mod:`.verdict`: some term could not score) is excluded the way NeMo Gym excludes a failed
judge (``nemo_gym/judge.py``, ``judge_failsafe``): ``mask_sample: true`` (left out of its metrics,
``reward_profile.select_measured``), ``failure_kind: verifier_error`` from its shared vocabulary
(``nemo_gym/failure_kinds.py``), the reason in ``failure_reason``, ``instance_config.mask_sample`` for older NeMo RL
consumers and ``_ng_failure_class``, which routes the row to the rollout collector's failures file to be verified
again on resume. Its ``reward`` is then 0.0 only because the schema requires a number; the mask says it is none.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rewardsmith.adapters.protocols.verdict import Verdict, check_columns, verdicts
from rewardsmith.types import RewardResult

#: The column the response's function calls fill.
TOOL_CALLS_COLUMN = "response_tool_calls"
#: NeMo Gym's shared failure name for a verifier that could not measure the sample.
FAILURE_KIND = "verifier_error"
#: How much of the reason goes into ``failure_reason`` (NeMo Gym's judge failsafe keeps 2,000 characters).
MAX_FAILURE_REASON = 2000
#: Keys of the request that are not task fields: the protocol's own, and a verify response's when a stored
#: rollout is verified again.
PROTOCOL_KEYS = frozenset(
    {
        "responses_create_params",
        "response",
        "reward",
        "reward_components",
        "reward_reasons",
        "mask_sample",
        "failure_kind",
        "failure_reason",
        "instance_config",
    }
)


class ResponseObject(BaseModel):
    """The part of an OpenAI Responses object read here; the rest is echoed as it came."""

    model_config = ConfigDict(extra="allow")

    output: list[dict[str, Any]] = Field(description="the response's output items")


class VerifyRequest(BaseModel):
    """``POST /verify`` as NeMo Gym's agents send it: the two protocol fields and the task's fields beside them."""

    model_config = ConfigDict(extra="allow")

    responses_create_params: dict[str, Any]
    response: ResponseObject


def completion_text(response: ResponseObject) -> str:
    """The text of the response's assistant messages (``output_text`` parts, joined in order)."""
    parts = []
    for item in response.output:
        if item.get("type") != "message":
            continue
        content = item.get("content")
        for part in content if isinstance(content, list) else []:
            if isinstance(part, Mapping) and part.get("type") == "output_text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
    return "".join(parts)


def tool_calls(response: ResponseObject) -> list[dict[str, Any]]:
    """The response's function calls, in order: ``{"name", "arguments", "call_id"}`` (arguments as sent: JSON text)."""
    return [
        {"name": item.get("name"), "arguments": item.get("arguments"), "call_id": item.get("call_id")}
        for item in response.output
        if item.get("type") == "function_call"
    ]


def task_columns(request: VerifyRequest) -> dict[str, Any]:
    """The task's fields (gold columns): every extra key but the protocol's and NeMo Gym's private ``_`` ones."""
    fields = {k: v for k, v in (request.model_extra or {}).items() if k not in PROTOCOL_KEYS and not k.startswith("_")}
    if TOOL_CALLS_COLUMN in fields:
        raise ValueError(f"task field {TOOL_CALLS_COLUMN!r} clashes with the column the response's tool calls fill")
    check_columns(fields, "task fields")
    return fields


def verify_answer(request: VerifyRequest, verdict: Verdict) -> dict[str, Any]:
    """NeMo Gym's verify response for one sample: the request echoed, with the reward fields (or the mask) added."""
    body = request.model_dump()
    scored = {t.name: t.score for t in verdict.terms if t.score is not None}
    answer = {
        **body,
        "reward_components": scored,
        "reward_reasons": {t.name: t.reason for t in verdict.terms},
    }
    reward = verdict.reward
    if reward is not None:
        return {**answer, "reward": reward, "mask_sample": False}
    instance_config = body.get("instance_config")
    return {
        **answer,
        "reward": 0.0,
        "mask_sample": True,
        "failure_kind": FAILURE_KIND,
        "failure_reason": verdict.reason[:MAX_FAILURE_REASON],
        "instance_config": {**(instance_config if isinstance(instance_config, Mapping) else {}), "mask_sample": True},
        "_ng_failure_class": FAILURE_KIND,
    }


ScoreTerm = Callable[[str, list[Any], dict[str, list[Any]]], Awaitable[Sequence[RewardResult]]]


async def verify(request: VerifyRequest, terms: Sequence[tuple[str, float]], score: ScoreTerm) -> dict[str, Any]:
    """Score one verify request with every term (``(name, weight)``; ``score(name, completions, columns)`` scores
    one term, through the caller's own admission and deadline) and answer it. The terms are scored at once."""
    columns = {k: [v] for k, v in task_columns(request).items()}
    calls = tool_calls(request.response)
    if calls:
        columns[TOOL_CALLS_COLUMN] = [calls]
    completion = completion_text(request.response)
    results = await asyncio.gather(*(score(name, [completion], columns) for name, _ in terms))
    verdict = verdicts([n for n, _ in terms], [w for _, w in terms], [list(r) for r in results])[0]
    return verify_answer(request, verdict)


__all__ = [
    "FAILURE_KIND",
    "TOOL_CALLS_COLUMN",
    "ResponseObject",
    "VerifyRequest",
    "completion_text",
    "task_columns",
    "tool_calls",
    "verify",
    "verify_answer",
]
