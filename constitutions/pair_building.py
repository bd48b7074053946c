"""Building RLAIF preference pairs from prompts: the run's settings, the pairs to judge, the prompts that make none.

Every key is a content hash, and every sample is seeded by ``(seed, key)``, so a resumed run plans exactly what an
uninterrupted one would (the pipeline is :mod:`rewardsmith.constitutions.pairs`).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rewardsmith.constitutions.prompts import PromptItem, content_key, is_pairable
from rewardsmith.constitutions.schema import Constitution, Principle

#: Reason recorded for a prompt that has no two distinct non-empty candidates.
UNPAIRABLE = "fewer_than_two_distinct_candidates"
#: Kept pairs with ``|P(chosen better) - 0.5|`` below this are reported as low-confidence.
LOW_CONFIDENCE_BAND = 0.05


class PairsConfig(BaseModel):
    """Settings of a preference-pair run (all recorded in the run fingerprint)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    principles_per_comparison: int = Field(1, ge=1, description="principles sampled and averaged per pair")
    margin: float = Field(0.0, ge=0.0, lt=0.5, description="keep a pair only if |P(a better) - 0.5| > margin")
    chain_of_thought: bool = Field(False, description="labels come from reasoning; clamp them into cot_clamp")
    cot_clamp: tuple[float, float] = Field((0.4, 0.6), description="probability range for chain-of-thought labels")
    drop_flipped: bool = Field(False, description="drop pairs whose two presentation orders disagree")
    max_pairs_per_prompt: int | None = Field(None, ge=1, description="sample at most this many pairs per prompt")
    conversational: bool = Field(False, description="write prompt/chosen/rejected as chat messages")
    seed: int = 0
    concurrency: int = Field(1, ge=1, le=256, description="pairs judged at the same time")

    @model_validator(mode="after")
    def _clamp_range(self) -> PairsConfig:
        low, high = self.cot_clamp
        if not 0.0 <= low < 0.5 < high <= 1.0:
            raise ValueError(f"cot_clamp must satisfy 0 <= low < 0.5 < high <= 1, got {self.cot_clamp}")
        return self


@dataclass(frozen=True)
class PairTask:
    """One comparison to make: two candidates of one prompt, in input order."""

    order: tuple[int, int, int]
    key: str
    item: PromptItem
    response_a: str
    response_b: str


@dataclass(frozen=True)
class PromptDrop:
    """A prompt dropped before judging (``reason``), keyed like a pair so a resumed run skips it."""

    order: tuple[int, int, int]
    key: str
    item: PromptItem
    reason: str = UNPAIRABLE


def pair_tasks(items: Sequence[PromptItem], config: PairsConfig) -> list[PairTask]:
    """All unordered pairs of distinct candidates per pairable prompt (optionally a seeded sample of them)."""
    tasks = []
    for item in items:
        if not is_pairable(item):
            continue
        candidates = list(dict.fromkeys(item.candidates))  # identical candidates make no pair
        pairs = list(itertools.combinations(range(len(candidates)), 2))
        if config.max_pairs_per_prompt is not None and len(pairs) > config.max_pairs_per_prompt:
            rng = random.Random(f"{config.seed}:pairs:{item.prompt_id}")
            pairs = sorted(rng.sample(pairs, config.max_pairs_per_prompt))
        for i, j in pairs:
            a, b = candidates[i], candidates[j]
            key = content_key("pair", item.prompt, a, b)
            tasks.append(PairTask(order=(item.index, i, j), key=key, item=item, response_a=a, response_b=b))
    return tasks


def prompt_drops(items: Sequence[PromptItem]) -> list[PromptDrop]:
    """The prompts that cannot make a single pair (see :func:`~rewardsmith.constitutions.prompts.is_pairable`)."""
    drops = []
    for item in items:
        if not is_pairable(item):
            key = content_key("prompt-drop", item.prompt, list(item.candidates))
            drops.append(PromptDrop(order=(item.index, -1, -1), key=key, item=item))
    return drops


def planned_keys(items: Sequence[PromptItem], config: PairsConfig) -> set[str]:
    """Store keys of everything a run over ``items`` records: its pairs and its dropped prompts."""
    return {task.key for task in pair_tasks(items, config)} | {drop.key for drop in prompt_drops(items)}


def sample_principles(constitution: Constitution, key: str, seed: int, count: int) -> list[Principle]:
    """``count`` distinct principles, a pure function of ``(seed, key)`` (stable across runs and resumes)."""
    rng = random.Random(f"{seed}:principles:{key}")
    count = min(count, len(constitution.principles))
    return rng.sample(list(constitution.principles), count)
