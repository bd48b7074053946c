"""``nemo_gym``: a reward scored by a running NeMo Gym resources server's ``/verify`` (nemo-gym 0.7.0).

The other direction of :mod:`.nemo_gym`: NeMo Gym's own verifiers (its math, instruction-following or equivalence
servers) as an ordinary rewardsmith reward for TRL, verl or the mini trainer. Each sample is one ``POST /verify``:
``responses_create_params`` with the prompt (the ``prompt`` column) as ``input``, the completion as the text of an
OpenAI Responses object with one assistant message, and the row's other columns as the task's fields (a NeMo Gym
server reads the ones its request model declares, e.g. ``expected_answer``). The answer's ``reward`` is the score.

A sample NeMo Gym itself does not count is unscorable, never 0.0: an answer with ``mask_sample: true`` (a judge
that failed, a lost session; ``failure_reason`` is the reason), a request the server refuses (422: the row lacks a
field its model requires), a server that cannot be reached after the retries, an answer without a finite ``reward``.

>>> reward = get_reward("nemo_gym", {"url": "http://127.0.0.1:8001"})  # doctest: +SKIP
>>> reward(["Paris"], expected_answer=["paris"])  # doctest: +SKIP
[1.0]
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import httpx
from pydantic import Field, field_validator

from rewardsmith import http
from rewardsmith.bridge import run_sync
from rewardsmith.registry import register_reward
from rewardsmith.reward import Reward, RewardConfig
from rewardsmith.transient import KeepsConfig
from rewardsmith.types import RewardResult

#: Failures after which the same request is sent again: the server, not the request, is at fault.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class NemoGymConfig(RewardConfig):
    url: str = Field(description="base URL of the resources server, e.g. http://10.0.0.5:8001 (POST {url}/verify)")
    prompt_column: str = Field("prompt", description="column whose text is responses_create_params.input")
    max_in_flight: int = Field(16, ge=1, description="verify requests in flight at once")
    timeout_s: float = Field(300.0, gt=0, description="per request")
    max_attempts: int = Field(3, ge=1, description="tries per sample (transport failures, 429 and 5xx)")
    backoff_s: float = Field(0.5, ge=0, description="first wait before a retry (doubling)")
    name: str | None = Field(None, description="logged name (default 'nemo_gym')")

    @field_validator("url")
    @classmethod
    def _base_url(cls, url: str) -> str:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"{url!r} is not an http(s) URL")
        return url.rstrip("/").removesuffix("/verify")


@register_reward("nemo_gym")
class NemoGymReward(KeepsConfig, Reward[NemoGymConfig]):
    """The ``reward`` a NeMo Gym resources server's ``/verify`` gives each completion."""

    name = "nemo_gym"
    # The connections belong to this process: a copy (a spawned worker) opens its own.
    _PICKLED = ("config", "__name__")

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self.__name__ = self.config.name or "nemo_gym"
        self._rebuild()

    def _rebuild(self) -> None:
        cfg = self.config
        policy = http.RetryPolicy(
            max_retries=cfg.max_attempts - 1, backoff=cfg.backoff_s, retry_statuses=RETRY_STATUSES,
            retry_server_errors=False, retry_on=frozenset({"connect", "timeout", "dropped", "transport"}),
        )  # fmt: skip
        limits = httpx.Limits(max_connections=cfg.max_in_flight)
        self._client = http.HTTPClient(cfg.url, policy=policy, timeout=cfg.timeout_s, limits=limits)

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        return run_sync(self.ascore_batch(completions, rows), close=self._client.transport)

    async def ascore_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        gate = asyncio.Semaphore(self.config.max_in_flight)

        async def one(text: str | None, row: dict[str, Any]) -> RewardResult:
            if text is None:
                return RewardResult.unscorable("nemo_gym: the completion is not text")
            async with gate:
                return await self._verify(text, row)

        return list(await asyncio.gather(*(one(t, r) for t, r in zip(completions, rows, strict=True))))

    async def _verify(self, text: str, row: dict[str, Any]) -> RewardResult:
        try:
            body = json.loads(json.dumps(verify_request(text, row, self.config.prompt_column), default=str))
            answer = await self._client.apost_json("/verify", body)
        except http.HTTPFailure as exc:
            return RewardResult.unscorable(f"nemo_gym: {self.config.url}/verify: {exc.cause}")
        except (TypeError, ValueError) as exc:  # a row that does not travel as JSON
            return RewardResult.unscorable(f"nemo_gym: the row cannot be sent as JSON: {exc}")
        return read_answer(answer)


def verify_request(text: str, row: dict[str, Any], prompt_column: str) -> dict[str, Any]:
    """A ``BaseVerifyRequest`` for one sample: the prompt, the completion as a Responses object, the task fields."""
    prompt = row.get(prompt_column)
    fields = {k: v for k, v in row.items() if k != prompt_column and k not in ("responses_create_params", "response")}
    message = {
        "type": "message",
        "id": "msg_rewardsmith",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    response = {
        "id": "resp_rewardsmith",
        "created_at": 0.0,
        "model": "policy",
        "object": "response",
        "output": [message],
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
    }
    return {"responses_create_params": {"input": prompt if prompt is not None else ""}, "response": response, **fields}


def read_answer(answer: Any) -> RewardResult:
    """The verdict in a verify response: its ``reward``, or unscorable when NeMo Gym masks or omits it."""
    if not isinstance(answer, dict):
        return RewardResult.unscorable(f"nemo_gym: the answer is a JSON {type(answer).__name__}, not an object")
    if answer.get("mask_sample"):
        kind = answer.get("failure_kind") or "masked"
        why = answer.get("failure_reason") or "no reason given"
        return RewardResult.unscorable(f"nemo_gym: masked ({kind}): {why}")
    reward = answer.get("reward")
    if isinstance(reward, bool) or not isinstance(reward, (int, float)) or not math.isfinite(reward):
        return RewardResult.unscorable(f"nemo_gym: the answer has no finite reward ({reward!r})")
    components = answer.get("reward_components")
    reason = f"nemo_gym reward {reward:g}" + (f" {components}" if isinstance(components, dict) and components else "")
    return RewardResult(score=float(reward), reason=reason)


__all__ = ["NemoGymConfig", "NemoGymReward", "read_answer", "verify_request"]
