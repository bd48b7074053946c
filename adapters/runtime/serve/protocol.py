"""The wire shapes: rewardsmith's native ``/v1/score`` and OpenRLHF's ``/get_reward``.

OpenRLHF's remote reward client (``openrlhf/utils/agent.py``, ``SingleTurnAgentExecutor``) posts
``{"query": [...], "prompts": [...], "labels": [...]}`` where ``query`` is the decoded prompt + response
(special tokens kept), ``prompts`` the prompt text and ``labels`` the dataset's label column; it reads
``rewards`` and ``scores`` (a missing ``scores`` falls back to ``rewards``) and ``extra_logs``, whose values
it turns into tensors, so they must be numeric (a weighted sum adds one ``component/<name>`` key per part).
Its own ``serve_rm`` answers ``{"rewards": r, "scores": r, "extra_logs": {...}}`` with lists; so does this server.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ScoreRequest(BaseModel):
    """``POST /v1/score``: completions (plain text or chat messages) and their aligned dataset columns."""

    model_config = ConfigDict(extra="forbid")

    reward: str = Field(description="served reward name (GET /v1/rewards)")
    completions: list[Any] = Field(description="one completion per sample: text or chat messages")
    columns: dict[str, list[Any]] = Field(default_factory=dict, description="dataset columns, one value per sample")
    deadline_s: float | None = Field(None, gt=0, description="this request's deadline (capped by the server's)")
    request_id: str | None = Field(None, max_length=200, description="echoed back, for the caller's bookkeeping")


class ScoreResponse(BaseModel):
    """Per-sample scores (``None``: unscorable), reasons and seconds spent, in request order."""

    reward: str
    scores: list[float | None]
    reasons: list[str]
    timings_s: list[float]
    unscorable: int
    elapsed_s: float
    request_id: str | None = None
    components: dict[str, list[float | None]] = Field(
        default_factory=dict, description="a weighted sum's parts, each part's own scores (rewardsmith.components)"
    )


class OpenRLHFRequest(BaseModel):
    """``POST /get_reward`` as OpenRLHF's client sends it; extra keys are ignored as OpenRLHF's server does."""

    model_config = ConfigDict(extra="ignore")

    query: list[Any]
    prompts: list[Any] | None = None
    labels: list[Any] | None = None


class OpenRLHFResponse(BaseModel):
    """What OpenRLHF reads (``rewards``, ``scores``, numeric ``extra_logs``) plus the reasons for people."""

    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]]
    reasons: list[str]
