"""The SkyRL environment (skyrl-gym 0.4's own registry, make and BaseTextEnv): per-step rewards from a spec."""

from __future__ import annotations

import pytest

pytest.importorskip("skyrl_gym", reason="skyrl-gym is in the dev extra")

import skyrl_gym
from omegaconf import OmegaConf

from rewardsmith.adapters.trainers.skyrl import register

SPEC = {"rewards": [{"name": "per_turn", "config": {"reward": "think_format"}, "weight": 0.2},
                    {"name": "math_equivalence", "weight": 1.0}]}  # fmt: skip


def make(spec=SPEC, ground_truth="4", **config):
    register()
    env_config = OmegaConf.create({"spec": spec, **config})  # what SkyRL's Hydra config hands over
    env = skyrl_gym.make("rewardsmith", env_config=env_config,
                         extras={"reward_spec": {"ground_truth": ground_truth}, "extra_info": {}})  # fmt: skip
    env.init([{"role": "user", "content": "What is 2 + 2?"}])
    return env


def test_each_step_pays_its_turn_and_the_episode_stops_on_the_right_answer():
    env = make(max_turns=3, stop_at=1.0, follow_up="Check it and answer again.")
    first = env.step("<think>hmm</think> \\boxed{5}")
    assert first["reward"] == pytest.approx(0.2) and not first["done"]
    assert first["observations"] == [{"role": "user", "content": "Check it and answer again."}]
    second = env.step("no think block, \\boxed{4}")
    assert second["reward"] == pytest.approx(1.0) and second["done"]  # format 0.0 this turn, answer right
    assert "math_equivalence=1.0" in second["metadata"]["reason"]


def test_the_episode_ends_at_max_turns_and_an_unscorable_step_is_flagged():
    env = make(spec=["math_equivalence"], ground_truth="", max_turns=1)
    step = env.step("\\boxed{4}")
    assert step["done"] and step["reward"] == 0.0
    assert "unscorable" in step["metadata"]  # the 0.0 a trainer needs, flagged as not a verdict


def test_ground_truth_needs_exactly_one_gold_column():
    two = {"rewards": ["math_equivalence", {"name": "llm_judge", "config": {"mode": "pairwise",
           "reference_column": "reference", "client": {"backend": "openai", "model": "m"}}}]}  # fmt: skip
    with pytest.raises(ValueError, match="fills the spec's one gold column"):
        make(spec=two)
