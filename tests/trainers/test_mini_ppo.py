"""Mini PPO and RLOO: losses against hand-computed values, learning on the toy task, resume, the CLI.

TRL 1.16 ships no PPO trainer (it was removed with the rest of the online-RL experimental trainers), so the pieces
are checked against values worked out by hand below, each with its arithmetic in the comment.
"""

from __future__ import annotations

import json
import math

import pytest

from tests.support.extras import require_extras

require_extras("trl")

import torch

from rewardsmith.adapters.demo.tasks import CharacterShare, digit_run
from rewardsmith.adapters.mini.grpo import rloo_advantages
from rewardsmith.adapters.mini.ppo import (
    CRITIC_FILE,
    MiniPPOConfig,
    MiniPPOTrainer,
    generalized_advantages,
    masked_whiten,
    per_token_rewards,
    ppo_losses,
    train_ppo,
)

BASE = {
    "learning_rate": 1e-2,
    "batch_size": 4,
    "num_generations": 8,
    "max_completion_length": 16,
    "ppo_epochs": 2,
    "kl_coef": 0.0,
    "progress": False,
}


# -- pure pieces ---------------------------------------------------------------------------------------
def test_gae_matches_hand_computed_values_and_stops_at_the_last_token():
    rewards = torch.tensor([[0.0, 0.0, 1.0], [0.5, 2.0, 0.0]])
    values = torch.tensor([[0.5, 0.4, 0.3], [0.1, 0.2, 9.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])  # row 2 ends at t=1; its t=2 value must not leak
    adv, ret = generalized_advantages(rewards, values, mask, gamma=0.9, lam=0.5)
    # row 1: d2 = 1 - 0.3 = 0.7; d1 = 0 + 0.9*0.3 - 0.4 = -0.13; d0 = 0 + 0.9*0.4 - 0.5 = -0.14
    #        A2 = 0.7; A1 = -0.13 + 0.45*0.7 = 0.185; A0 = -0.14 + 0.45*0.185 = -0.05675
    # row 2: d1 = 2 - 0.2 = 1.8 (no next value); d0 = 0.5 + 0.9*0.2 - 0.1 = 0.58; A0 = 0.58 + 0.45*1.8 = 1.39
    expected = torch.tensor([[-0.05675, 0.185, 0.7], [1.39, 1.8, 0.0]])
    assert torch.allclose(adv, expected, atol=1e-6)
    assert torch.allclose(ret, (expected + values) * mask, atol=1e-6)


def test_per_token_rewards_put_the_score_on_the_last_token_and_the_kl_on_every_token():
    logps = torch.tensor([[-1.0, -2.0, -0.5], [-1.0, -1.0, -1.0]])
    ref = torch.tensor([[-1.5, -1.0, -0.5], [-1.0, -3.0, -1.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    rewards = per_token_rewards(torch.tensor([1.0, -2.0]), logps, ref, mask, kl_coef=0.1)
    # row 1: -0.1*(0.5, -1.0, 0) + (0, 0, 1) = (-0.05, 0.1, 1.0); row 2: -0.1*(0, 2, .) + (0, -2) = (0, -2.2, 0)
    assert torch.allclose(rewards, torch.tensor([[-0.05, 0.1, 1.0], [0.0, -2.2, 0.0]]), atol=1e-6)


def test_masked_whiten_ignores_padding():
    values = torch.tensor([[1.0, 2.0, 3.0, 100.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0]])
    out = masked_whiten(values, mask)
    # mean 2, unbiased var ((1 + 0 + 1) / 2) = 1 -> (-1, 0, 1)
    assert torch.allclose(out[0, :3], torch.tensor([-1.0, 0.0, 1.0]), atol=1e-4)
    assert torch.allclose(
        masked_whiten(values, mask, shift_mean=False)[0, :3], torch.tensor([1.0, 2.0, 3.0]), atol=1e-4
    )


def test_ppo_losses_clip_policy_and_value_as_written():
    old = torch.zeros(1, 2)
    logps = torch.log(torch.tensor([[1.5, 0.5]]))  # ratios 1.5 and 0.5
    advantages = torch.tensor([[1.0, -1.0]])
    mask = torch.ones(1, 2)
    values, old_values, returns = torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 0.0]]), torch.tensor([[2.0, 1.0]])
    pg, vf, stats = ppo_losses(logps, old, values, old_values, advantages, returns, mask, cliprange=0.2)
    # token 1: max(-1*1.5, -1*1.2) = -1.2 ; token 2: max(1*0.5, 1*0.8) = 0.8 -> mean -0.2
    assert pg.item() == pytest.approx(-0.2, abs=1e-6)
    # value 1: clipped to 0.2 -> max((1-2)^2, (0.2-2)^2) = 3.24 ; value 2: max(1, 1) = 1 -> 0.5 * mean = 1.06
    assert vf.item() == pytest.approx(1.06, abs=1e-6)
    assert stats["clip_ratio"] == pytest.approx(1.0)
    assert stats["value_clip_ratio"] == pytest.approx(0.5)


def test_rloo_baseline_is_the_mean_of_the_other_scored_samples():
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 2.0, math.nan, math.nan, math.nan])
    adv = rloo_advantages(rewards, num_generations=4)
    # group 1: 1 - 1/3, 0 - 2/3, 0 - 2/3, 1 - 1/3 ; group 2: only one scored sample -> 0 everywhere
    assert torch.allclose(adv, torch.tensor([2 / 3, -2 / 3, -2 / 3, 2 / 3, 0.0, 0.0, 0.0, 0.0]), atol=1e-6)


def test_config_refuses_a_critic_model_without_a_separate_critic():
    with pytest.raises(ValueError, match="critic_model"):
        MiniPPOConfig(critic_model="tiny")


# -- training ------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_ppo_raises_mean_reward_on_the_toy_task(tiny_model_dir, tmp_path):
    log = tmp_path / "ppo.jsonl"
    history = train_ppo(
        {**BASE, "model": str(tiny_model_dir), "max_steps": 30, "seed": 0, "log_file": str(log)},
        digit_run(32),
        CharacterShare(),
    )
    rewards = [h["reward"] for h in history]
    assert sum(rewards[-4:]) / 4 > sum(rewards[:4]) / 4 + 0.2, rewards
    assert {"policy_loss", "value_loss", "approx_kl", "value_mean"} <= set(history[-1])
    assert len(log.read_text().splitlines()) == 30


@pytest.mark.slow
def test_separate_critic_holds_a_model_of_its_own(tiny_model_dir):
    trainer = MiniPPOTrainer(
        {**BASE, "model": str(tiny_model_dir), "critic": "separate", "kl_coef": 0.1, "max_steps": 2},
        digit_run(8),
        CharacterShare(),
    )
    counts = trainer.models_in_memory
    assert set(counts) == {"policy", "reference", "critic"}
    assert counts["critic"] > counts["policy"]  # its own trunk plus the head
    before = [p.detach().clone() for p in trainer.critic.trunk.parameters()]
    history = trainer.train()
    assert len(history) == 2 and all(math.isfinite(h["value_loss"]) for h in history)
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.critic.trunk.parameters(), strict=True))


@pytest.mark.slow
def test_resume_mid_round_ends_with_the_weights_of_an_uninterrupted_run(tiny_model_dir, tmp_path):
    config = {**BASE, "model": str(tiny_model_dir), "batch_size": 2, "num_generations": 2, "ppo_epochs": 3}
    straight = tmp_path / "straight"
    train_ppo({**config, "max_steps": 5, "output_dir": str(straight)}, digit_run(8), CharacterShare())
    split = tmp_path / "split"
    first = {**config, "max_steps": 4, "save_steps": 2, "output_dir": str(split)}
    train_ppo({**first, "max_steps": 2}, digit_run(8), CharacterShare())  # stops inside the first round
    train_ppo({**first, "max_steps": 5, "resume": True}, digit_run(8), CharacterShare())
    from safetensors.torch import load_file

    a, b = load_file(str(straight / "model.safetensors")), load_file(str(split / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    critic_a = torch.load(straight / CRITIC_FILE, weights_only=True)
    critic_b = torch.load(split / CRITIC_FILE, weights_only=True)
    assert all(torch.equal(critic_a[k], critic_b[k]) for k in critic_a)


@pytest.mark.slow
def test_train_ppo_cli_learns_from_a_config(tiny_model_dir, tmp_path, capsys):
    from rewardsmith.cli.main import main

    config = tmp_path / "ppo.yaml"
    config.write_text(
        json.dumps(
            {
                **BASE,
                "model": str(tiny_model_dir),
                "task": {"name": "digit_run", "n": 32},
                "max_steps": 30,
                "log_file": str(tmp_path / "log.jsonl"),
            }
        )
    )
    assert main(["train", "ppo", "--config", str(config)]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["algorithm"] == "ppo" and summary["steps"] == 30
    assert summary["reward_last"] > summary["reward_first"] + 0.2
