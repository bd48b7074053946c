"""Candidate generation from a real policy ChatClient (the tiny offline Qwen2 through transformers):
K seeded samples per prompt, recorded per prompt so a rerun samples nothing again."""

from __future__ import annotations

import asyncio

import pytest

from rewardsmith.constitutions.generate import GenerationConfig, agenerate
from rewardsmith.constitutions.prompts import PromptItem
from rewardsmith.store import KeyedStore

PROMPTS = [
    PromptItem(index=i, prompt_id=f"p{i}", prompt=text)
    for i, text in enumerate(["What is 3 + 5?", "Say something helpful.", "Compute 2 + 2."])
]


@pytest.fixture(scope="module")
def policy(tiny_model_dir):
    from rewardsmith.judges.clients.factory import make_client

    return make_client("transformers", model=str(tiny_model_dir))


def generate(policy, store_path, config):
    """Generate into ``store_path``; returns the items, the failures and how many policy calls this run made."""
    before = policy.report().requests
    with KeyedStore(store_path) as store:
        items, failed = asyncio.run(agenerate(policy, PROMPTS, config, store))
    return items, failed, policy.report().requests - before


def test_k_seeded_samples_per_prompt_and_no_resampling_on_rerun(policy, tmp_path):
    config = GenerationConfig(k=3, temperature=1.0, max_tokens=12, seed=7, concurrency=2)
    items, failed, calls = generate(policy, tmp_path / "a.jsonl", config)
    assert failed == 0 and calls == 9
    assert [item.prompt_id for item in items] == ["p0", "p1", "p2"]
    for item in items:
        assert 1 <= len(item.candidates) <= 3
        assert len(set(item.candidates)) >= 2, item.candidates  # different seeds -> different samples

    again, _, calls = generate(policy, tmp_path / "a.jsonl", config)
    assert calls == 0 and again == items

    fresh, _, _ = generate(policy, tmp_path / "b.jsonl", config)
    assert fresh == items  # same seeds, same samples

    other_seed, _, _ = generate(policy, tmp_path / "c.jsonl", config.model_copy(update={"seed": 8}))
    assert other_seed != items


def test_sampling_k_candidates_needs_a_temperature():
    with pytest.raises(ValueError, match="temperature must be > 0"):
        GenerationConfig(k=4, temperature=0.0)
    assert GenerationConfig(k=1, temperature=0.0).k == 1
