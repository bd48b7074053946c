"""Candidate responses from a policy model: K samples per prompt from any :class:`ChatClient`.

Sample ``i`` of a prompt uses ``seed + i``, so the K requests differ (and each one is its own entry
in a request cache) while a rerun asks exactly the same K requests. Generated candidates are
recorded per prompt in a :class:`KeyedStore`, so a resumed run never samples a prompt twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rewardsmith.constitutions.progress import RunProgress
from rewardsmith.constitutions.prompts import PromptItem, content_key
from rewardsmith.judges.base import ChatClient, ChatParams, JudgeError
from rewardsmith.store import KeyedStore

logger = logging.getLogger(__name__)


class GenerationConfig(BaseModel):
    """How candidates are sampled from the policy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    k: int = Field(4, ge=1, le=64, description="candidates per prompt")
    temperature: float = Field(0.8, ge=0.0, le=2.0, description="must be > 0 when k > 1")
    max_tokens: int = Field(256, ge=1)
    seed: int = 0
    concurrency: int = Field(4, ge=1, le=256)

    @model_validator(mode="after")
    def _distinct_samples(self) -> GenerationConfig:
        if self.k > 1 and self.temperature <= 0.0:
            raise ValueError(f"temperature must be > 0 to sample k={self.k} different candidates")
        return self


def generation_key(item: PromptItem, config: GenerationConfig, model: str) -> str:
    return content_key("candidates", model, item.prompt, config.model_dump(exclude={"concurrency"}))


async def sample_candidates(client: ChatClient, item: PromptItem, config: GenerationConfig) -> list[str]:
    """K responses to ``item`` (distinct seeds); empty responses are left out."""
    params = [
        ChatParams(temperature=config.temperature, max_tokens=config.max_tokens, seed=config.seed + i)
        for i in range(config.k)
    ]
    results = await asyncio.gather(*(client.acomplete(item.messages, p) for p in params))
    return [r.text.strip() for r in results if r.text.strip()]


async def agenerate(
    client: ChatClient,
    items: Sequence[PromptItem],
    config: GenerationConfig,
    store: KeyedStore,
    progress: RunProgress | None = None,
) -> tuple[list[PromptItem], int]:
    """Items with their candidates filled in; returns ``(items, failed)``; failed prompts are left out."""
    model = getattr(client, "model", "")
    semaphore = asyncio.Semaphore(config.concurrency)
    failed = 0
    done = sum(1 for item in items if generation_key(item, config, model) in store)
    if progress is not None:
        progress.skip(done)

    async def one(item: PromptItem) -> None:
        nonlocal failed
        key = generation_key(item, config, model)
        if key in store:
            return
        async with semaphore:
            try:
                candidates = await sample_candidates(client, item, config)
            except JudgeError as exc:
                failed += 1
                logger.warning("generation for prompt %s failed, will be retried: %s", item.prompt_id, exc)
                if progress is not None:
                    progress.add("failed")
                return
        store.append(key, {"prompt_id": item.prompt_id, "model": model, "candidates": candidates})
        if progress is not None:
            progress.add("done")

    await asyncio.gather(*(one(item) for item in items))
    filled = []
    for item in items:
        record = store.get(generation_key(item, config, model))
        if record is not None:
            filled.append(replace(item, candidates=tuple(record["candidates"])))
    return filled, failed
