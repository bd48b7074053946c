"""The mini GRPO trainer on the tiny offline model: it learns, and its options do what they say.

The toy task is ``digit_run`` scored by ``character_share`` (share of digit characters): a randomly
initialised tiny model cannot learn arithmetic in a few CPU steps, but it can learn to write digits.
"""

from __future__ import annotations

import json
import math

import pytest

from tests.support.extras import require_extras

require_extras("trl")

import torch

from rewardsmith.adapters.demo.tasks import CharacterShare, arithmetic, digit_run
from rewardsmith.adapters.mini.grpo import MiniGRPOConfig, MiniGRPOTrainer, train_grpo
from rewardsmith.reward import ConfigError, Reward
from rewardsmith.types import RewardResult

pytestmark = pytest.mark.slow

BASE = {"learning_rate": 1e-2, "batch_size": 4, "num_generations": 8, "max_completion_length": 16, "progress": False}


def test_grpo_raises_mean_reward_on_a_toy_verifiable_task(tiny_model_dir, tmp_path):
    log = tmp_path / "metrics.jsonl"
    history = train_grpo(
        {**BASE, "model": str(tiny_model_dir), "max_steps": 16, "seed": 0, "log_file": str(log)},
        digit_run(32),
        CharacterShare(),
    )
    rewards = [h["reward"] for h in history]
    first, last = sum(rewards[:3]) / 3, sum(rewards[-3:]) / 3
    assert last > first + 0.2, rewards  # measurable rise, not a fixed target
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["step"] for r in lines] == list(range(1, 17))
    assert {"loss", "reward", "rewards/character_share", "completion_length", "grad_norm"} <= set(lines[0])


def test_same_seed_same_run(tiny_model_dir):
    cfg = {**BASE, "model": str(tiny_model_dir), "max_steps": 2, "seed": 3}
    a = train_grpo(cfg, digit_run(8), CharacterShare())
    b = train_grpo(cfg, digit_run(8), CharacterShare())
    assert [h["reward"] for h in a] == [h["reward"] for h in b]


class OnlyEvenIndex(Reward):
    """1.0 for every completion, unscorable on odd rows: checks that None never reaches the gradient."""

    name = "only_even_index"

    def score_batch(self, completions, rows):
        return [RewardResult(score=1.0) if i % 2 == 0 else RewardResult.unscorable("odd") for i in range(len(rows))]


def test_options_kl_iterations_aggregation_and_unscorable(tiny_model_dir):
    cfg = {
        **BASE,
        "model": str(tiny_model_dir),
        "max_steps": 4,
        "beta": 0.1,
        "num_iterations": 2,
        "loss_aggregation": "token_mean",
        "scale_rewards": "none",
        "epsilon_high": 0.28,
    }
    trainer = MiniGRPOTrainer(cfg, digit_run(8), [(CharacterShare(), 1.0), (OnlyEvenIndex(), 0.5)])
    assert trainer.reference is not None
    history = trainer.train()
    assert len(history) == 4
    assert all("kl" in h and h["kl"] >= 0 for h in history)
    assert history[0]["kl"] == pytest.approx(0.0, abs=1e-6)  # policy starts equal to the reference
    assert history[1]["kl"] > 0  # second iteration on the same generations, after one update
    assert all(math.isfinite(h["loss"]) for h in history)
    assert history[0]["rewards/only_even_index"] == 1.0


def test_group_of_identical_rewards_gives_no_gradient(tiny_model_dir):
    class Constant(Reward):
        name = "constant"

        def score_one(self, completion, row):
            return RewardResult(score=0.5)

    trainer = MiniGRPOTrainer({**BASE, "model": str(tiny_model_dir), "max_steps": 1}, digit_run(4), Constant())
    before = [p.detach().clone() for p in trainer.model.parameters()]
    history = trainer.train()
    assert history[0]["loss"] == 0.0 and history[0]["grad_norm"] == 0.0
    assert all(torch.equal(a, b) for a, b in zip(before, trainer.model.parameters(), strict=True))


@pytest.mark.skipif("math_equivalence" not in __import__("rewardsmith").list_rewards(), reason="math family absent")
def test_spec_rewards_on_arithmetic_with_conversational_prompts(tiny_model_dir):
    spec = {
        "rewards": [{"name": "math_equivalence", "config": {"workers": 1}}, {"name": "think_format", "weight": 0.5}]
    }
    cfg = MiniGRPOConfig(**{**BASE, "model": str(tiny_model_dir), "max_steps": 1, "rewards": spec})
    history = MiniGRPOTrainer(cfg, arithmetic(4, conversational=True)).train()
    assert {"rewards/math_equivalence", "rewards/think_format"} <= set(history[0])
    assert history[0]["reward"] == pytest.approx(0.0, abs=1e-6)  # a random model is neither right nor formatted


def test_bad_config_fails_before_training():
    with pytest.raises(ValueError, match="num_generations"):
        MiniGRPOConfig(num_generations=1)
    with pytest.raises(ValueError, match="no_such_reward"):
        MiniGRPOConfig(rewards=["no_such_reward"])
    with pytest.raises(ConfigError):
        from rewardsmith.adapters.spec import load_spec

        load_spec({"rewards": [{"name": "character_share", "config": {"characters": ""}}]})


def test_sampler_matches_generate_when_greedy_and_respects_eos(tiny_model_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rewardsmith.adapters.mini.grpo import sample_tokens

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()
    texts = ["What is 3 + 5?", "Numbers: 0 1 2 3 4 5 6 7 8 9 10 11"]
    tok.padding_side = "left"
    enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    assert int(enc["attention_mask"].sum()) < enc["attention_mask"].numel()  # left padding is exercised
    ours = sample_tokens(
        model,
        enc["input_ids"],
        enc["attention_mask"],
        max_new_tokens=12,
        temperature=1e-6,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    ref = model.generate(**enc, do_sample=False, max_new_tokens=12, min_new_tokens=12, pad_token_id=tok.pad_token_id)[
        :, enc["input_ids"].size(1) :
    ]
    assert torch.equal(ours, ref)
    eos = int(ref[0, 2])  # pretend the third greedy token of row 0 is EOS: row 0 then emits only pad
    stopped = sample_tokens(
        model,
        enc["input_ids"],
        enc["attention_mask"],
        max_new_tokens=12,
        temperature=1e-6,
        eos_token_id=eos,
        pad_token_id=tok.pad_token_id,
    )
    first = int((ref[0] == eos).int().argmax())
    assert torch.equal(stopped[0, : first + 1], ref[0, : first + 1])
    assert (stopped[0, first + 1 :] == tok.pad_token_id).all()
