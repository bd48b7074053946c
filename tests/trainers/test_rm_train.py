"""``rewardsmith train rm``: the mini Bradley–Terry reward-model trainer.

Its loss equals TRL's ``RewardTrainer.compute_loss`` on the same batch (plain, with margins, with reward
centring); a short run on DPO-format pairs learns to rank chosen over rejected; an interrupted and resumed run
ends with the same weights as a straight one; and the trained model serves as the ``reward_model`` reward.
"""

from __future__ import annotations

import json

import pytest

from tests.support.extras import require_extras

require_extras("trl")

import torch
import yaml

from rewardsmith.adapters.demo.tasks import arithmetic_pairs
from rewardsmith.adapters.mini.reward_model import MiniRMConfig, load_reward_model, pair_inputs, reward_loss
from rewardsmith.cli.main import main
from rewardsmith.registry import get_reward

ROWS = arithmetic_pairs(6, seed=3) + arithmetic_pairs(2, seed=4, conversational=True)


def trl_reward_trainer(model, tokenizer, tmp_path, **args):
    from datasets import Dataset
    from trl import RewardConfig, RewardTrainer

    from tests.support.trl_helpers import tiny_config

    dataset = Dataset.from_dict({"prompt": ["1+1?"], "chosen": ["2"], "rejected": ["3"]})
    config = tiny_config(RewardConfig, tmp_path, max_steps=1, **args)
    return RewardTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer)


@pytest.mark.parametrize(
    ("margins", "center"),
    [(None, None), ([0.5, 0.0, 1.0, -0.25, 0.0, 2.0, 0.1, 0.0], None), (None, 0.01)],
    ids=["plain", "margin", "centred"],
)
def test_loss_equals_trl_reward_trainer_on_the_same_batch(tiny_model_dir, tmp_path, margins, center):
    torch.manual_seed(0)
    model, tokenizer = load_reward_model(str(tiny_model_dir), torch.device("cpu"))
    inputs = pair_inputs(tokenizer, ROWS, max_length=64)
    margin = None if margins is None else torch.tensor(margins)
    config = MiniRMConfig(model=str(tiny_model_dir), center_rewards_coefficient=center)
    ours, metrics = reward_loss(config, model, inputs, margin)

    trainer = trl_reward_trainer(model, tokenizer, tmp_path, center_rewards_coefficient=center)
    trl_inputs = dict(inputs) if margin is None else {**inputs, "margin": margin}
    theirs = trainer.compute_loss(trainer.model, trl_inputs)
    assert float(ours) == pytest.approx(float(theirs), rel=1e-5, abs=1e-6)
    mode = "train" if trainer.model.training else "eval"
    assert trainer._metrics[mode]["accuracy"][-1] == pytest.approx(metrics["accuracy"])
    assert trainer._metrics[mode]["margin"][-1] == pytest.approx(metrics["rewards/margin"], abs=1e-5)
    assert float(ours) > 0


def write_config(path, model_dir, data, **extra):
    options = {"model": str(model_dir), "data": str(data), "batch_size": 4, "learning_rate": 3e-3}
    path.write_text(yaml.safe_dump({**options, "progress": False, "num_threads": 1, "seed": 0, **extra}))
    return str(path)


@pytest.fixture(scope="module")
def pairs_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("pairs") / "train.jsonl"
    rows = arithmetic_pairs(16, seed=0)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.slow
def test_train_rm_cli_learns_and_serves_as_reward(tiny_model_dir, pairs_file, tmp_path, capsys):
    out = tmp_path / "rm"
    config = write_config(tmp_path / "rm.yaml", tiny_model_dir, pairs_file, max_steps=30, output_dir=str(out))
    assert main(["train", "rm", "--config", config]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["algorithm"] == "rm" and summary["steps"] == 30
    assert summary["loss_last"] < summary["loss_first"]

    rows = [json.loads(line) for line in pairs_file.read_text().splitlines()]
    reward = get_reward("reward_model", {"model": str(out)})
    chosen = reward([r["chosen"] for r in rows], prompts=[r["prompt"] for r in rows])
    rejected = reward([r["rejected"] for r in rows], prompts=[r["prompt"] for r in rows])
    wins = sum(c > r for c, r in zip(chosen, rejected, strict=True)) / len(rows)
    assert wins >= 0.75, wins  # trained on these pairs: it ranks most of them right


@pytest.mark.slow
def test_resumed_rm_run_ends_with_the_straight_run_weights(tiny_model_dir, pairs_file, tmp_path):
    from safetensors.torch import load_file

    straight = tmp_path / "straight"
    config = write_config(tmp_path / "a.yaml", tiny_model_dir, pairs_file, max_steps=4, output_dir=str(straight))
    assert main(["train", "rm", "--config", config]) == 0

    resumed = tmp_path / "resumed"
    config = write_config(
        tmp_path / "b.yaml", tiny_model_dir, pairs_file, max_steps=4, output_dir=str(resumed), save_steps=2
    )
    assert main(["train", "rm", "--config", config, "--max-steps", "2"]) == 0
    assert (resumed / "checkpoint-000002").is_dir()
    assert main(["train", "rm", "--config", config, "--resume"]) == 0
    a, b = load_file(str(straight / "model.safetensors")), load_file(str(resumed / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_rm_config_needs_pairs(tmp_path, tiny_model_dir):
    from rewardsmith.adapters.mini.reward_model import train_rm

    with pytest.raises(ValueError, match="DPO-format"):
        train_rm(
            {"model": str(tiny_model_dir), "max_steps": 1, "progress": False}, [{"prompt": "p", "completion": "c"}]
        )
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"model": "tiny", "task": {"name": "arithmetic", "n": 4}}))
    with pytest.raises(ValueError, match="rm needs pair rows"):
        from rewardsmith.cli.train import load_run_config

        load_run_config("rm", bad)
